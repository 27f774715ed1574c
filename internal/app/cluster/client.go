package cluster

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Bounds of the reads of one cluster.
const (
	// DefaultTimeout bounds each request to the API server.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponse bounds the body of one response: a page of a
	// list (PageSize objects), at most a few ConfigMaps of 1 MiB each.
	DefaultMaxResponse = 64 << 20
	// PageSize is how many objects one list request asks for.
	PageSize = 50
	// CRDPageSize is PageSize for CRDs, whose schemas make them large.
	CRDPageSize = 10
	// DefaultMaxObjects bounds the objects of one list, across its pages.
	DefaultMaxObjects = 10000
	// DefaultMaxPages bounds the pages of one list: as many as
	// DefaultMaxObjects takes in full pages. An API server that answers
	// with empty pages and a new continue token is not asked again past it.
	DefaultMaxPages = DefaultMaxObjects / PageSize
	// DefaultMaxListBytes bounds the bytes of one list across its pages
	// (each page is bounded apart by DefaultMaxResponse).
	DefaultMaxListBytes = 256 << 20
)

// Access says how a cluster is reached. Credentials come from files only
// (a kubeconfig, or the in-cluster service account's token file), never
// from flags or logs.
type Access struct {
	// Kubeconfig is the kubeconfig file; "" means the default loading
	// rules ($KUBECONFIG, ~/.kube/config). Ignored when InCluster.
	Kubeconfig string
	// Context is the kubeconfig context; "" means its current context.
	Context string
	// InCluster uses the pod's service account (the chart's read-only
	// ClusterRole).
	InCluster bool
	// Timeout bounds each request (DefaultTimeout when <= 0).
	Timeout time.Duration
	// MaxResponse bounds each response body (DefaultMaxResponse when <= 0).
	MaxResponse int64
}

// Config returns the REST config for a and the context name findings use.
// The transport refuses redirects to another host and response bodies
// past the bound.
func (a Access) Config() (*rest.Config, string, error) {
	var cfg *rest.Config
	name := a.Context
	if a.InCluster {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("in-cluster access: %w (inCluster needs the pod's service account token; outside a pod give a kubeconfig)", err)
		}
		cfg, name = c, "in-cluster"
	} else {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		if a.Kubeconfig != "" {
			rules.ExplicitPath = a.Kubeconfig
		}
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: a.Context})
		raw, err := cc.RawConfig()
		if err != nil {
			return nil, "", fmt.Errorf("kubeconfig %s: %w", a.Kubeconfig, err)
		}
		if name == "" {
			name = raw.CurrentContext
		}
		if cfg, err = cc.ClientConfig(); err != nil {
			return nil, "", fmt.Errorf("kubeconfig %s, context %q: %w", a.Kubeconfig, name, err)
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = a.Timeout
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	limit := a.MaxResponse
	if limit <= 0 {
		limit = DefaultMaxResponse
	}
	host, err := url.Parse(cfg.Host)
	if err != nil || host.Host == "" {
		// rest.Config.Host may be HOST:PORT alone.
		host = &url.URL{Host: cfg.Host}
	}
	cfg.UserAgent = "pinseal-verifier"
	cfg.QPS, cfg.Burst = 20, 40
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &guard{next: rt, host: host.Host, limit: limit}
	})
	return cfg, name, nil
}

// guard keeps a cluster client on its API server and bounds what it reads.
type guard struct {
	next  http.RoundTripper
	host  string
	limit int64
}

// errOtherHost: the API server (or something in front of it) redirected
// the client to another host, which is not followed: credentials and
// trust belong to the API server alone.
var errOtherHost = errors.New("redirect to another host refused")

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != g.host {
		return nil, fmt.Errorf("%s: %w (the API server is %s)", req.URL.Host, errOtherHost, g.host)
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &boundedBody{r: resp.Body, left: g.limit, limit: g.limit}
	return resp, nil
}

// boundedBody fails a read past limit bytes instead of holding more.
type boundedBody struct {
	r     io.ReadCloser
	left  int64
	limit int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("API server response larger than %d bytes: not read further", b.limit)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, fmt.Errorf("API server response larger than %d bytes: not read further", b.limit)
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.r.Close() }
