package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/server/servertest"
	"github.com/pinseal/pinseal/internal/store"
	"github.com/pinseal/pinseal/pkg/report"
)

const (
	testToken  = "test-token-0123456789abcdef"
	otherToken = "other-token-0123456789abcdef"
)

// validateSchema fails the test unless the JSON body matches the named
// component schema of openapi.yaml.
func validateSchema(t testing.TB, name string, body []byte) {
	t.Helper()
	servertest.ValidateSchema(t, name, body)
}

// validateResponse fails the test unless the response is what openapi.yaml
// documents for the request: a documented status, headers and body schema.
func validateResponse(t testing.TB, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	servertest.ValidateResponse(t, req, resp, body)
}

// client talks to a test server and validates every response against the
// OpenAPI document.
type client struct {
	t     testing.TB
	base  string
	token string
	http  *http.Client
}

func newClient(t testing.TB, base, token string) *client {
	return &client{t: t, base: base, token: token, http: &http.Client{Timeout: 60 * time.Second}}
}

func (c *client) withToken(tok string) *client {
	cc := *c
	cc.token = tok
	return &cc
}

// do sends a request; the body is read and validated before it returns.
func (c *client) do(method, p, contentType string, body io.Reader) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+p, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, p, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", method, p, err)
	}
	validateResponse(c.t, req, resp, data)
	return resp, data
}

func (c *client) get(p string) (*http.Response, []byte) { return c.do(http.MethodGet, p, "", nil) }

func (c *client) postJSON(p string, v any) (*http.Response, []byte) {
	b, _ := json.Marshal(v)
	return c.do(http.MethodPost, p, "application/json", bytes.NewReader(b))
}

// getJSON GETs p, wants status, decodes into out.
func (c *client) getJSON(p string, status int, out any) {
	c.t.Helper()
	resp, body := c.get(p)
	if resp.StatusCode != status {
		c.t.Fatalf("GET %s: %d %s, want %d", p, resp.StatusCode, body, status)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			c.t.Fatalf("GET %s: %v", p, err)
		}
	}
}

func wantStatus(t testing.TB, what string, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d (%s), want %d", what, resp.StatusCode, body, status)
	}
}

// waitFor polls cond; the deadline only guards against a hang.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitScan polls GET /v1/scans/{id} until the scan is no longer running.
func (c *client) waitScan(id int64) scanDetail {
	c.t.Helper()
	var d scanDetail
	waitFor(c.t, fmt.Sprintf("scan %d to finish", id), func() bool {
		c.getJSON(fmt.Sprintf("/v1/scans/%d", id), http.StatusOK, &d)
		return d.Scan.Status != store.Running
	})
	return d
}

// fakeEngine stands in for pkg/verify in unit tests.
type fakeEngine struct {
	check   func(ctx context.Context, root string, opts CheckOptions) (*report.Report, error)
	resolve func(ctx context.Context, ref string) (string, error)
	verify  func(ctx context.Context, ref string, opts VerifyOptions) (*report.Report, error)

	checks, resolves, verifies atomic.Int32
}

func (f *fakeEngine) CheckTree(ctx context.Context, root string, opts CheckOptions) (*report.Report, error) {
	f.checks.Add(1)
	if f.check != nil {
		return f.check(ctx, root, opts)
	}
	return treeReport(root)
}

func (f *fakeEngine) Resolve(ctx context.Context, ref string) (string, error) {
	f.resolves.Add(1)
	if f.resolve != nil {
		return f.resolve(ctx, ref)
	}
	return "sha256:" + strings.Repeat("ab", 32), nil
}

func (f *fakeEngine) VerifyArtifact(ctx context.Context, ref string, opts VerifyOptions) (*report.Report, error) {
	f.verifies.Add(1)
	if f.verify != nil {
		return f.verify(ctx, ref, opts)
	}
	r := newReport()
	r.Root = ref
	r.Packages = []report.PackageSummary{{Path: ".", Providers: []report.ProviderSummary{{Kind: "CoreProvider", Name: "cluster-api", Artifact: ref}}}}
	r.Tally()
	return r, nil
}

func newReport(fs ...report.Finding) *report.Report {
	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		Tool:          report.Tool{Name: "verifier", Version: "test"},
		Findings:      append([]report.Finding{}, fs...),
		Packages:      []report.PackageSummary{},
	}
	r.Tally()
	return r
}

// treeReport "verifies" a directory: every directory holding a Chart.yaml
// is a package; every file named BROKEN in one is a blob-yaml error. It lets
// tests see exactly what an upload unpacked to.
func treeReport(root string) (*report.Report, error) {
	r := newReport()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch d.Name() {
		case "Chart.yaml":
			r.Packages = append(r.Packages, report.PackageSummary{Path: path.Dir(rel), Providers: []report.ProviderSummary{}})
		case "BROKEN":
			r.Findings = append(r.Findings, report.Finding{Check: "blob-yaml", Severity: report.Error, Package: path.Dir(rel),
				Provider: "CoreProvider/cluster-api", File: rel, Line: 3, Message: "the blob differs from the YAML at line 3"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(r.Packages, func(i, j int) bool { return r.Packages[i].Path < r.Packages[j].Path })
	r.Tally()
	return r, nil
}

// testConfig is a config with one source "tree" (an empty directory) and a
// tokens file holding testToken.
func testConfig(t testing.TB) *Config {
	t.Helper()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(tree, 0o755)
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("# test\n"+testToken+"\n\n"), 0o600)
	return &Config{
		Listen:     "127.0.0.1:0",
		DataDir:    filepath.Join(dir, "data"),
		TokensFile: tokens,
		Registries: []string{"127.0.0.1:5000/capi", "registry.example"},
		Sources:    []SourceConfig{{Name: "tree", Path: tree}},
	}
}

// testServer runs a Server on a random 127.0.0.1 port until the test ends.
type testServer struct {
	*Server
	*client
	stop func() error // stops the server and returns Run's error
}

func startServer(t testing.TB, cfg *Config, eng Engine) *testServer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s, err := New(context.Background(), cfg, eng, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, ln) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { stop() })
	ts := &testServer{Server: s, client: newClient(t, "http://"+ln.Addr().String(), testToken), stop: stop}
	waitFor(t, "readyz", func() bool {
		resp, err := http.Get(ts.base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return ts
}
