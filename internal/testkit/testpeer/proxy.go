package testpeer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Fault is what the proxy does to one request.
type Fault int

const (
	// Pass forwards the request unchanged.
	Pass Fault = iota
	// Status500 answers 500 without forwarding.
	Status500
	// Status503 answers 503 without forwarding.
	Status503
	// Drop reads part of the request body, then closes the connection
	// without answering (a connection dropped mid-push).
	Drop
	// Hang never answers: it holds the request until the client gives up
	// or the proxy closes.
	Hang
	// Tamper forwards the request and flips a byte in the middle of a
	// successful response body (a corrupted or tampered blob).
	Tamper
	// Deny answers 403 with a distribution DENIED error without forwarding
	// (a registry that refuses the request: quota, policy, permissions).
	Deny
)

func (f Fault) String() string {
	return [...]string{"pass", "500", "503", "drop", "hang", "tamper", "deny"}[f]
}

// Rule picks the fault for a request; nil passes everything.
type Rule func(r *http.Request) Fault

// FaultProxy is a reverse proxy on 127.0.0.1 in front of a registry that
// injects faults into selected requests.
type FaultProxy struct {
	Host string // 127.0.0.1:PORT, to use as the registry host
	URL  string

	srv  *httptest.Server
	done chan struct{}

	mu       sync.Mutex
	rule     Rule
	log      []string
	injected int
}

// NewFaultProxy starts a proxy in front of upstream (e.g. "http://127.0.0.1:5000")
// and closes it at cleanup. Registries build absolute Location headers from
// the Host header they see; the proxy keeps the client's Host so that
// upload URLs keep pointing at the proxy.
func NewFaultProxy(t testing.TB, upstream string) *FaultProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatalf("fault proxy upstream %q: %v", upstream, err)
	}
	p := &FaultProxy{done: make(chan struct{})}
	rp := &httputil.ReverseProxy{
		// Clients giving up on a hung or dropped request are expected.
		ErrorLog: log.New(io.Discard, "", 0),
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request == nil || resp.StatusCode != http.StatusOK || resp.Request.Method != http.MethodGet {
				return nil
			}
			if resp.Request.Context().Value(tamperKey{}) == nil {
				return nil
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return err
			}
			if len(b) > 0 {
				b[len(b)/2] ^= 0x01
			}
			resp.Body = io.NopCloser(bytes.NewReader(b))
			resp.ContentLength = int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
			return nil
		},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := p.faultFor(r)
		switch f {
		case Status500, Status503:
			io.Copy(io.Discard, r.Body)
			code := http.StatusInternalServerError
			if f == Status503 {
				code = http.StatusServiceUnavailable
			}
			http.Error(w, "injected fault", code)
		case Deny:
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"errors":[{"code":"DENIED","message":"injected fault: requested access to the resource is denied"}]}`)
		case Drop:
			io.CopyN(io.Discard, r.Body, 16)
			hj, ok := w.(http.Hijacker)
			if !ok {
				panic("fault proxy: connection cannot be hijacked")
			}
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
		case Hang:
			select {
			case <-r.Context().Done():
			case <-p.done:
			}
		case Tamper:
			// The body is changed in ModifyResponse on the way back.
			rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tamperKey{}, true)))
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	p.URL = p.srv.URL
	p.Host = strings.TrimPrefix(p.srv.URL, "http://")
	t.Cleanup(p.Close)
	return p
}

// Set replaces the rule; nil passes everything.
func (p *FaultProxy) Set(rule Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rule = rule
}

// Injected is how many faults were injected so far.
func (p *FaultProxy) Injected() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected
}

// Requests lists "METHOD PATH -> fault" for every request seen.
func (p *FaultProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// Close stops the proxy and releases hung requests.
func (p *FaultProxy) Close() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	p.srv.CloseClientConnections()
	p.srv.Close()
}

type tamperKey struct{}

func (p *FaultProxy) faultFor(r *http.Request) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := Pass
	if p.rule != nil {
		f = p.rule(r)
	}
	p.log = append(p.log, fmt.Sprintf("%s %s -> %s", r.Method, r.URL.Path, f))
	if f != Pass {
		p.injected++
	}
	return f
}

// Match is a helper for rules: it matches a method ("" for any) and a
// substring of the path.
func Match(r *http.Request, method, pathContains string) bool {
	return (method == "" || r.Method == method) && strings.Contains(r.URL.Path, pathContains)
}
