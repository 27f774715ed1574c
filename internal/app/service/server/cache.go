package server

import (
	"time"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// cachedVerdict is one cached answer of POST /v1/verify {"ref"}.
type cachedVerdict struct {
	body    []byte
	expires time.Time
}

// cachedVerdict returns the cached answer for key unless it expired.
func (s *Server) cachedVerdict(key string) ([]byte, bool) {
	v, ok := s.cache.Get(key)
	if !ok {
		return nil, false
	}
	c := v.(cachedVerdict)
	if !s.now().Before(c.expires) {
		s.cache.Remove(key)
		return nil, false
	}
	return c.body, true
}

// volatileChecks are the checks whose findings can change with nothing in
// the cache key changing: a missing or foreign signature or attestation
// (until someone signs), an artifact that could not be read (the registry
// was down). A verdict with one of their findings is not cached.
var volatileChecks = map[string]bool{
	check.Signature:      true,
	check.Provenance:     true,
	check.RegistryDigest: true,
}

// verdictTTL is how long the verdict rep may be served from the cache:
// 0 (not cached) when it holds a finding of a volatile check; otherwise
// max, cut at the expiry of the first waiver it relies on (then the
// waived finding counts again).
func verdictTTL(rep *report.Report, now time.Time, max time.Duration) time.Duration {
	ttl := max
	for _, f := range rep.Findings {
		if volatileChecks[f.Check] {
			return 0
		}
		if f.Waiver != nil {
			if left := (policy.Waiver{Expires: f.Waiver.Expires}).ExpiresAt().Sub(now); left < ttl {
				ttl = left
			}
		}
	}
	if ttl < 0 {
		return 0
	}
	return ttl
}

// ReloadPolicy reads the verification policies (the config's and each
// source's) and the key files they name again and
// drops every cached verdict (`verifier serve` calls it on SIGHUP). A
// changed file is also noticed without it, at the next request.
func (s *Server) ReloadPolicy() error {
	_, err := s.policy.Reload()
	for name, w := range s.srcPolicy {
		if _, serr := w.Reload(); serr != nil {
			// The source's scans fail, naming the file, until it is fixed.
			s.log.Error("policy reload failed; the source's scans fail until the policy is fixed", "source", name, "err", serr)
		}
	}
	s.cache.Clear()
	if err != nil {
		s.log.Error("policy reload failed; POST /v1/verify {\"ref\"} answers 503 until the policy is fixed", "policy", s.cfg.Policy, "err", err)
		return err
	}
	s.log.Info("policy reloaded; verdict cache cleared", "policy", s.cfg.Policy)
	return nil
}
