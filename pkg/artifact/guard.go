package artifact

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The registry guard sits under every registry client this package makes
// (OpenRegistry, so artifacts, signatures and attestations alike). A
// registry is untrusted input: its WWW-Authenticate realm and its HTTP
// redirects name hosts of its choosing, and its error bodies are text of
// its choosing. The guard makes sure that
//
//   - only allowed hosts are contacted: the repository's own registry and
//     Options.AllowedHosts; a realm or redirect elsewhere is refused with
//     a *HostRefusedError naming the host (nothing is sent to it);
//   - credentials only go to the registry they are for: a request to
//     another (allowed) host — a token realm, a redirect target — carries
//     no Authorization header or cookies, and a request that would send
//     credentials in its body (an OAuth2 token POST) is refused;
//   - an error response's body is never relayed: errors name the host,
//     the request and the HTTP status only.

// MaxRedirects bounds the redirects followed for one registry request.
const MaxRedirects = 5

// MaxResponseHeaderBytes bounds a registry response's headers.
const MaxResponseHeaderBytes = 64 << 10

// maxDrain bounds what is read off an error body before it is dropped (so
// that the connection can be reused).
const maxDrain = 64 << 10

// HostRefusedError is a request the guard refused: its host is not an
// allowed registry host, or it would carry credentials to a host they are
// not for.
type HostRefusedError struct {
	Registry string // the registry the request started from
	Host     string // the host that was not contacted
	Reason   string
	// NotAllowed: the host is not in the allowed hosts (Options.AllowedHosts);
	// the error then also wraps ErrHostNotAllowed.
	NotAllowed bool
}

func (e *HostRefusedError) Error() string {
	return fmt.Sprintf("refused to contact %s for registry %s: %s", e.Host, e.Registry, e.Reason)
}

// ErrHostRefused is wrapped by every *HostRefusedError (errors.Is).
var ErrHostRefused = errors.New("host refused by the registry guard")

// ErrHostNotAllowed is wrapped by a *HostRefusedError whose host is not
// among the allowed hosts: allowing it (Options.AllowedHosts) is the fix
// when it is the registry's own token service or storage.
var ErrHostNotAllowed = errors.New("host not among the allowed hosts")

func (e *HostRefusedError) Unwrap() []error {
	if e.NotAllowed {
		return []error{ErrHostRefused, ErrHostNotAllowed}
	}
	return []error{ErrHostRefused}
}

// CanonicalHost is host[:port] in lower case with the scheme's default
// port removed, the form the guard compares ("Ghcr.io:443" with https is
// "ghcr.io").
func CanonicalHost(scheme, host string) string {
	host = strings.ToLower(host)
	if h, p, err := net.SplitHostPort(host); err == nil {
		if (scheme == "https" && p == "443") || (scheme == "http" && p == "80") {
			return h
		}
	}
	return host
}

// hostAllowed: host (canonical) is registry or one of allowed. An allowed
// entry without a port allows that host on the default ports only.
func hostAllowed(host, registry string, allowed []string) bool {
	return host == registry || slices.Contains(allowed, host)
}

// guard is the RoundTripper that enforces the rules above for the
// repositories of one registry.
type guard struct {
	registry string   // canonical host of the registry
	allowed  []string // canonical hosts besides it
	next     http.RoundTripper
}

func newGuard(registry string, allowed []string, next http.RoundTripper) *guard {
	g := &guard{registry: CanonicalHost("", registry), next: next}
	for _, h := range allowed {
		if h = CanonicalHost("", strings.TrimSpace(h)); h != "" {
			g.allowed = append(g.allowed, h)
		}
	}
	return g
}

func (g *guard) check(u *url.URL) error {
	host := CanonicalHost(u.Scheme, u.Host)
	if u.Scheme != "http" && u.Scheme != "https" {
		return &HostRefusedError{Registry: g.registry, Host: u.Scheme + "://" + host, Reason: "not an http or https URL"}
	}
	if !hostAllowed(host, g.registry, g.allowed) {
		return &HostRefusedError{Registry: g.registry, Host: host, NotAllowed: true,
			Reason: "it is not an allowed registry host (the registry's WWW-Authenticate realm or a redirect points there); if it is the registry's own token service or storage, allow it"}
	}
	return nil
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := g.check(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if host := CanonicalHost(req.URL.Scheme, req.URL.Host); host != g.registry {
		// Another allowed host (a token realm, a redirect target): no
		// credentials of the registry go there.
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &HostRefusedError{Registry: g.registry, Host: host,
				Reason: req.Method + " to a host other than the registry could carry the registry's credentials (an OAuth2 token request); only GET and HEAD go to other hosts, without credentials"}
		}
		if req.Header.Get("Authorization") != "" || req.Header.Get("Cookie") != "" {
			req = req.Clone(req.Context())
			req.Header.Del("Authorization")
			req.Header.Del("Cookie")
		}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	// An error: keep the status and headers (WWW-Authenticate), drop the
	// body, whose text is the registry's.
	io.CopyN(io.Discard, resp.Body, maxDrain)
	resp.Body.Close()
	resp.Body = http.NoBody
	resp.ContentLength = 0
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Type")
	return resp, nil
}

// checkRedirect refuses redirects to hosts the guard would refuse (before
// any request is made) and bounds their number.
func (g *guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("registry %s: more than %d redirects", g.registry, MaxRedirects)
	}
	return g.check(req.URL)
}
