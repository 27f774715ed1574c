package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/utils/lru"
	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// ReleaseLookup is what an Engine offers the admission webhook: the
// release at ref (HOST/REPO:TAG) verified under pol as `verifier verify`
// verifies it. VerifyEngine implements it; an Engine that does not vouches
// for nothing.
type ReleaseLookup interface {
	LookupRelease(ctx context.Context, ref string, pol *policy.Policy) (admission.Release, error)
}

// LookupRelease implements ReleaseLookup with verify.RefArtifact: the
// signature (cosign v2 and v3 forms, keys and keyless identities), the
// provenance and the artifact's inside, every error finding a reason it
// cannot vouch.
func (e VerifyEngine) LookupRelease(ctx context.Context, ref string, pol *policy.Policy) (admission.Release, error) {
	r := admission.Release{Ref: ref}
	rep, a, err := verify.RefArtifact(ctx, ref, verify.RefOptions{Policy: orDefault(pol), Registry: e.Registry})
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		r.Problem = "no such release in the registry"
		r.Fix = "build, sign and push it with builder push"
		return r, nil
	case errors.Is(err, verify.ErrNoTrustedKeys):
		r.Problem = "the admission policy trusts no key or identity"
		r.Fix = "list the cosign public keys (keys:) or keyless identities (identities:) that sign releases in the admission policy"
		return r, nil
	case err != nil:
		return r, err
	}
	r.Digest = a.Digest
	if c := a.Config; c != nil {
		r.Kind, r.Name = c.Kind, c.Name
	}
	r.Components = strings.TrimPrefix(a.YAMLSHA256, "sha256:")
	r.Metadata = strings.TrimPrefix(a.MetadataSHA256, "sha256:")
	for _, f := range rep.Findings {
		if f.Severity == report.Error {
			r.Problem = fmt.Sprintf("%s: %s", f.Check, f.Message)
			r.Fix = f.Hint
			if r.Fix == "" {
				r.Fix = "verifier verify " + ref + " says what is wrong"
			}
			return r, nil
		}
	}
	if r.Components == "" || r.Metadata == "" {
		r.Problem = "the artifact has no components YAML or metadata.yaml layer"
		r.Fix = "push it with builder push"
	}
	return r, nil
}

// admitter serves POST /admit.
type admitter struct {
	cfg    *AdmissionConfig
	mode   admission.Mode
	policy *policyWatch
	lookup ReleaseLookup
	trees  *gitTrees

	mu    sync.Mutex
	cache *lru.Cache // verdict key -> cached
}

type admitCached struct {
	v       admission.Verdict
	expires time.Time
}

// lookupFunc adapts a ReleaseLookup under one policy to admission.Releases.
type lookupFunc func(ctx context.Context, ref string) (admission.Release, error)

func (f lookupFunc) Lookup(ctx context.Context, ref string) (admission.Release, error) {
	return f(ctx, ref)
}

func newAdmitter(cfg *AdmissionConfig, eng Engine, trees *gitTrees) (*admitter, error) {
	mode, err := admission.ParseMode(cfg.Mode)
	if err != nil {
		return nil, err
	}
	a := &admitter{cfg: cfg, mode: mode, policy: &policyWatch{path: cfg.Policy}, cache: lru.New(cfg.CacheEntries)}
	if _, err := a.policy.Fingerprint(); err != nil {
		return nil, fmt.Errorf("admission policy: %w", err)
	}
	a.lookup, _ = eng.(ReleaseLookup)
	a.trees = trees
	return a, nil
}

// Webhook timeouts: the API server's timeoutSeconds (it sends it as
// ?timeout=Ns), default and bound (admissionregistration/v1).
const (
	admitDefaultTimeout = 10 * time.Second
	admitMaxTimeout     = 30 * time.Second
	// admitMargin is left of the API server's wait for writing the answer.
	admitMargin = 500 * time.Millisecond
)

// admitTimeout is how long a decision may take: the request's timeout
// parameter (what timeoutSeconds the API server waits), default 10s, at
// most 30s, less a margin for the answer.
func admitTimeout(r *http.Request) time.Duration {
	d := admitDefaultTimeout
	if t := r.URL.Query().Get("timeout"); t != "" {
		if v, err := time.ParseDuration(t); err == nil && v > 0 {
			d = v
		}
	}
	d = min(d, admitMaxTimeout)
	if d > 2*admitMargin {
		d -= admitMargin
	}
	return d
}

func (s *Server) admit(w http.ResponseWriter, r *http.Request) {
	a := s.admitter
	if a == nil {
		s.writeError(w, r, http.StatusNotFound, "admission is not configured: add admission: to the service config (docs/admission.md)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), admitTimeout(r))
	defer cancel()
	body, err := io.ReadAll(io.LimitReader(r.Body, a.cfg.MaxRequestBytes+1))
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "read the AdmissionReview: "+err.Error())
		return
	}
	if int64(len(body)) > a.cfg.MaxRequestBytes {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("the AdmissionReview is over admission.maxRequestBytes (%d bytes)", a.cfg.MaxRequestBytes))
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		msg := "want an admission.k8s.io/v1 AdmissionReview with a request"
		if err != nil {
			msg += ": " + err.Error()
		}
		s.writeError(w, r, http.StatusBadRequest, msg)
		return
	}
	start := time.Now()
	v, cached := a.decide(ctx, review.Request)
	resp := admission.Respond(review.Request, v, a.mode)
	outcome := "allowed"
	if !v.Allowed() {
		outcome = "refused"
		if a.mode != admission.Enforce {
			outcome = string(a.mode) + "ed" // warned, audited
		}
		rule := string(v.Problems[0].Rule)
		s.metrics.admissionProblems.WithLabelValues(string(a.mode), rule).Inc()
		s.log.Warn("admission", "mode", a.mode, "object", v.Object, "operation", review.Request.Operation,
			"user", review.Request.UserInfo.Username, "rule", rule, "problems", strings.Join(v.Lines(), " | "))
	} else {
		s.log.Debug("admission", "object", v.Object, "vouched", v.Vouched)
	}
	s.metrics.admissionDecisions.WithLabelValues(string(a.mode), outcome, fmt.Sprint(cached)).Inc()
	s.metrics.admissionDuration.WithLabelValues(fmt.Sprint(cached)).Observe(time.Since(start).Seconds())
	s.writeJSON(w, http.StatusOK, resp)
}

// decide is the verdict about req, from the cache when the same content
// was decided under the same policy within cacheTTL.
func (a *admitter) decide(ctx context.Context, req *admissionv1.AdmissionRequest) (admission.Verdict, bool) {
	pol, fp, err := a.policy.Current()
	if err != nil {
		return admission.Verdict{Object: req.Kind.Kind + " " + req.Namespace + "/" + req.Name, Problems: []admission.Problem{{
			Rule: admission.RuleUnverified, Message: "the admission policy cannot be read: " + err.Error(),
			Fix: "fix the policy file named by admission.policy in the service config"}}}, false
	}
	d := &admission.Decider{Policy: pol, InflateLimit: a.cfg.InflateLimit, Fingerprint: fp}
	if a.lookup != nil {
		d.Releases = lookupFunc(func(ctx context.Context, ref string) (admission.Release, error) {
			return a.lookup.LookupRelease(ctx, ref, pol)
		})
	}
	if a.trees != nil {
		d.Trees = a.trees
	}
	// The key is computed by the decision itself (it reads the content);
	// a cached verdict is keyed by it and looked up after a cheap first
	// pass that stops before any registry lookup.
	pre := &admission.Decider{Policy: pol, InflateLimit: a.cfg.InflateLimit, Fingerprint: fp, Releases: keyOnly{}}
	if pv := pre.Decide(ctx, req); pv.Key != "" {
		a.mu.Lock()
		c, ok := a.cache.Get(pv.Key)
		a.mu.Unlock()
		if ok && time.Now().Before(c.(admitCached).expires) {
			v := c.(admitCached).v
			v.Object = pv.Object // the same content under another name
			return v, true
		}
	}
	v := d.Decide(ctx, req)
	if v.Key != "" && ctx.Err() == nil {
		a.mu.Lock()
		a.cache.Add(v.Key, admitCached{v: v, expires: time.Now().Add(a.cfg.CacheTTL.D())})
		a.mu.Unlock()
	}
	return v, false
}

// keyOnly answers every lookup with a problem without contacting
// anything: a decision with it computes the same key as the real one.
type keyOnly struct{}

func (keyOnly) Lookup(_ context.Context, ref string) (admission.Release, error) {
	return admission.Release{Ref: ref, Problem: "-"}, nil
}
