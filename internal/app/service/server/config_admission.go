package server

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/pkg/policy"
)

// AdmissionConfig is the validating admission webhook: the API server
// sends it the provider objects and labelled provider-components
// ConfigMaps (AdmissionReview admission.k8s.io/v1, POST /admit over TLS),
// and it admits those a signed release vouches for (docs/admission.md).
type AdmissionConfig struct {
	// Mode is enforce (refuse), warn (admit with warnings) or audit (admit,
	// log and count). Default enforce.
	Mode string `json:"mode,omitempty"`
	// Policy is the policy file of trusted keys and identities and its
	// admission section (registries, pinned downloads). Required. Read
	// again when it or a key file it names changes.
	Policy string `json:"policy"`
	// Listen is the TLS address the webhook is served on, and the only
	// one: POST /admit (no token: the API server sends none) with
	// /healthz and /readyz, no other route. Default 127.0.0.1:8443.
	Listen string `json:"listen,omitempty"`
	// CacheEntries bounds the verdicts kept, by content digest. Default
	// 4096.
	CacheEntries int `json:"cacheEntries,omitempty"`
	// CacheTTL bounds how long a verdict is served from the cache (a tag
	// moved, a signature revoked in the registry are seen after it).
	// Default 10m.
	CacheTTL Duration `json:"cacheTTL,omitempty"`
	// MaxRequestBytes bounds an AdmissionReview (a ConfigMap is at most
	// 1 MiB; an UPDATE carries two). Default 4 MiB.
	MaxRequestBytes int64 `json:"maxRequestBytes,omitempty"`
	// InflateLimit bounds what a ConfigMap's compressed components inflate
	// to (a gzip bomb stops there). Default 64 MiB.
	InflateLimit int64 `json:"inflateLimit,omitempty"`
	// TLS is the serving certificate.
	TLS AdmissionTLS `json:"tls"`
}

// AdmissionTLS is the webhook's serving certificate: files (cert-manager's
// Secret mounted; read again when they change) or a self-signed one the
// service creates and renews.
type AdmissionTLS struct {
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
	// SelfSigned creates a self-signed certificate in Dir (tls.crt,
	// tls.key; tls.crt is also the caBundle) and renews it RenewBefore its
	// end. Used when no certFile is given.
	SelfSigned *SelfSignedTLS `json:"selfSigned,omitempty"`
}

// SelfSignedTLS is a certificate the service makes for itself.
type SelfSignedTLS struct {
	// Dir holds tls.crt and tls.key. Default dataDir/admission-tls.
	Dir string `json:"dir,omitempty"`
	// Hosts are the DNS names and IP addresses the API server calls the
	// webhook by (SERVICE.NAMESPACE.svc, 127.0.0.1). Default 127.0.0.1
	// and localhost.
	Hosts []string `json:"hosts,omitempty"`
	// Validity of each certificate. Default 8760h (a year).
	Validity Duration `json:"validity,omitempty"`
	// RenewBefore: a new certificate is made this long before the current
	// one ends. Default 720h (30 days).
	RenewBefore Duration `json:"renewBefore,omitempty"`
}

// DefaultAdmissionListen is where the webhook listens unless told.
const DefaultAdmissionListen = "127.0.0.1:8443"

func (a *AdmissionConfig) applyDefaults(dataDir string) {
	if a == nil {
		return
	}
	if a.Listen == "" {
		a.Listen = DefaultAdmissionListen
	}
	setInt(&a.CacheEntries, 4096)
	setDur(&a.CacheTTL, 10*time.Minute)
	setInt64(&a.MaxRequestBytes, 4<<20)
	setInt64(&a.InflateLimit, 64<<20)
	if a.TLS.CertFile == "" && a.TLS.SelfSigned == nil {
		a.TLS.SelfSigned = &SelfSignedTLS{}
	}
	if ss := a.TLS.SelfSigned; ss != nil {
		if ss.Dir == "" && dataDir != "" {
			ss.Dir = filepath.Join(dataDir, "admission-tls")
		}
		if len(ss.Hosts) == 0 {
			ss.Hosts = []string{"127.0.0.1", "localhost"}
		}
		setDur(&ss.Validity, 365*24*time.Hour)
		setDur(&ss.RenewBefore, 30*24*time.Hour)
	}
}

// validateAdmission checks the admission settings, if any.
func (c *Config) validateAdmission() []error {
	a := c.Admission
	if a == nil {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if _, err := admission.ParseMode(a.Mode); err != nil {
		bad("admission.mode: %v", err)
	}
	if _, _, err := net.SplitHostPort(a.Listen); err != nil {
		bad("admission.listen %q: want HOST:PORT such as %s", a.Listen, DefaultAdmissionListen)
	} else if a.Listen == c.Listen && !strings.HasSuffix(a.Listen, ":0") {
		bad("admission.listen %q: the same address as listen; the webhook needs a TLS listener of its own", a.Listen)
	}
	if a.Policy == "" {
		bad("admission.policy: required: a policy file with the trusted keys (or identities) and admission.registries (docs/admission.md)")
	} else if pol, err := policy.Load(a.Policy); err != nil {
		bad("admission.policy: %v", err)
	} else if pol.Admission != nil {
		for _, r := range pol.Admission.Registries {
			if !c.registryAllowed(r) {
				bad("admission.policy %s: admission.registries %q is not within the config's registries (the only hosts the service contacts): add it there", a.Policy, r)
			}
		}
		for _, g := range pol.Admission.GitSources {
			if !slices.ContainsFunc(c.Sources, func(s SourceConfig) bool { return s.Name == g.Source && s.Git != nil }) {
				bad("admission.policy %s: admission.gitSources names %q, which is no source with git: in the config: add it under sources (it need not be scanned: omit interval)", a.Policy, g.Source)
			}
		}
	}
	if a.CacheEntries < 0 || a.MaxRequestBytes < 0 || a.InflateLimit < 0 || a.CacheTTL < 0 {
		bad("admission: cacheEntries, cacheTTL, maxRequestBytes and inflateLimit must be positive")
	}
	switch {
	case (a.TLS.CertFile == "") != (a.TLS.KeyFile == ""):
		bad("admission.tls: give certFile and keyFile together (or neither, for a self-signed certificate)")
	case a.TLS.CertFile != "" && a.TLS.SelfSigned != nil:
		bad("admission.tls: give certFile/keyFile or selfSigned, not both")
	}
	if ss := a.TLS.SelfSigned; ss != nil {
		if ss.Dir == "" {
			bad("admission.tls.selfSigned.dir: required when dataDir is not set")
		}
		if ss.Validity.D() < time.Hour || ss.RenewBefore <= 0 || ss.RenewBefore >= ss.Validity {
			bad("admission.tls.selfSigned: want validity of at least 1h and renewBefore between 0 and validity")
		}
	}
	return errs
}
