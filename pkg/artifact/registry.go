package artifact

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/pinseal/pinseal/internal/version"
	pinfetch "github.com/pinseal/pinseal/pkg/fetch"
)

// Options configure how registries are reached. The zero value reaches a
// TLS registry with the docker config's credentials.
type Options struct {
	// PlainHTTP talks plain HTTP instead of HTTPS (a loopback registry).
	PlainHTTP bool
	// Credentials looks up registry credentials. Nil means the docker
	// config ($DOCKER_CONFIG/config.json or ~/.docker/config.json) with its
	// credential helpers. Credentials never come from flags.
	Credentials credentials.Store
	// Transport is the base HTTP transport; nil means a clone of
	// http.DefaultTransport. Tests put fault injectors here.
	Transport http.RoundTripper
	// ResponseTimeout bounds the wait for a registry's response headers
	// after a request was sent (a hung registry); 0 means 60s.
	ResponseTimeout time.Duration
	// Retries is how often a request that failed with a network error, 408,
	// 429 or 5xx is retried with backoff (fetch.RetryPolicy, the
	// downloader's policy); 0 (or less) means never. The CLIs and the
	// service pass fetch.DefaultRetries.
	Retries int
	// AllowedHosts are the hosts (HOST[:PORT]) a registry client may
	// contact besides the repository's own registry: a token realm or
	// redirect target on another host. Nothing else is ever contacted (see
	// the registry guard), and credentials only go to the registry itself.
	AllowedHosts []string
}

// OpenRegistry opens the registry repository "HOST[:PORT]/REPO".
func OpenRegistry(name string, opts Options) (Repository, error) {
	repo, err := remote.NewRepository(name)
	if err != nil {
		return nil, fmt.Errorf("repository %q: %w", name, err)
	}
	repo.PlainHTTP = opts.PlainHTTP
	// Referrers (cosign v3 signatures and attestations): bounded listing,
	// and no deletion of a superseded referrers tag-schema index (many
	// registries refuse deletes; the old index is only unreferenced).
	repo.SkipReferrersGC = true
	repo.ReferrerListMaxPages = maxReferrerPages
	repo.MaxMetadataBytes = MaxReferrersIndexSize
	client, err := opts.client(repo.Reference.Host())
	if err != nil {
		return nil, err
	}
	repo.Client = client
	return &registryRepo{Repository: repo}, nil
}

type registryRepo struct {
	*remote.Repository
}

func (r *registryRepo) Name() string { return r.Reference.Registry + "/" + r.Reference.Repository }

// client is the HTTP client for the registry at host (as requests name
// it, e.g. "registry-1.docker.io" for docker.io), behind the registry
// guard.
func (o Options) client(host string) (*auth.Client, error) {
	store := o.Credentials
	if store == nil {
		s, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("read registry credentials from the docker config: %w (fix or move $DOCKER_CONFIG/config.json)", err)
		}
		store = s
	}
	base := o.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		// A registry's headers are untrusted too (its realm and redirect
		// URLs end up in error messages): bound them.
		t.MaxResponseHeaderBytes = MaxResponseHeaderBytes
		t.ResponseHeaderTimeout = o.ResponseTimeout
		if t.ResponseHeaderTimeout == 0 {
			t.ResponseHeaderTimeout = 60 * time.Second
		}
		base = t
	}
	rt := http.RoundTripper(base)
	if n := o.Retries; n > 0 {
		tr := retry.NewTransport(base)
		// The downloader's policy: one rule for what is retried and how
		// long to wait.
		tr.Policy = func() retry.Policy { return pinfetch.RetryPolicy(n, 0) }
		rt = tr
	}
	if !o.PlainHTTP {
		rt = plainHTTPHint{rt}
	}
	g := newGuard(host, o.AllowedHosts, rt)
	return &auth.Client{
		Client:     &http.Client{Transport: g, CheckRedirect: g.checkRedirect},
		Header:     http.Header{"User-Agent": {"pinseal/" + version.Version}},
		Cache:      auth.NewCache(),
		Credential: credentials.Credential(store),
	}, nil
}

// plainHTTPHint says what to do when an HTTPS request reached a registry
// that only speaks plain HTTP (the usual loopback registry).
type plainHTTPHint struct{ next http.RoundTripper }

func (h plainHTTPHint) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.next.RoundTrip(req)
	// net/http turns this TLS error into http.ErrSchemeMismatch only
	// above the transport.
	var rh tls.RecordHeaderError
	if err != nil && errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
		return nil, fmt.Errorf("%w: %s speaks plain HTTP; reach it over plain HTTP only if it is a loopback registry", http.ErrSchemeMismatch, req.URL.Host)
	}
	return resp, err
}
