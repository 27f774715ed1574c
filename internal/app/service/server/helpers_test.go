package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/pkg/report"
)

const (
	testToken  = "test-token-0123456789abcdef"
	otherToken = "other-token-0123456789abcdef"
)

// client is servertest's client (every response validated against
// openapi.yaml) with the scan helper of these tests.
type client struct{ *servertest.Client }

func newClient(t testing.TB, base, token string) *client {
	return &client{servertest.NewClient(t, base, token)}
}

func (c *client) withToken(tok string) *client { return &client{c.Client.WithToken(tok)} }

func wantStatus(t testing.TB, what string, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d (%s), want %d", what, resp.StatusCode, body, status)
	}
}

// waitFor polls cond; the deadline only guards against a hang.
var waitFor = servertest.WaitFor

// waitScan polls GET /v1/scans/{id} until the scan is no longer running.
func (c *client) waitScan(id int64) scanDetail {
	c.T.Helper()
	var d scanDetail
	waitFor(c.T, fmt.Sprintf("scan %d to finish", id), func() bool {
		c.GetJSON(fmt.Sprintf("/v1/scans/%d", id), http.StatusOK, &d)
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
	base, stop := servertest.Serve(t, s.Run)
	ts := &testServer{Server: s, client: newClient(t, base, testToken), stop: stop}
	return ts
}
