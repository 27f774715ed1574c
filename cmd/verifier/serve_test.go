package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/server"
	"github.com/pinseal/pinseal/internal/server/servertest"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
)

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "serve.yaml")
	os.WriteFile(bad, []byte("dataDir: d\nlistn: x\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad config", []string{"serve", "--config", bad}, "unknown field"},
		{"missing config", []string{"serve", "--config", filepath.Join(dir, "nope.yaml")}, "read config"},
		{"no examples", []string{"serve", "--examples", filepath.Join(dir, "nope")}, "no --config, and no example tree"},
		{"bad listen", []string{"serve", "--config", "../../examples/serve.yaml", "--listen", "nowhere"}, "listen"},
		{"arguments", []string{"serve", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, code, err := runVerifier(t, tt.args...)
			if code != 2 || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d, %v; want 2 with %q", code, err, tt.want)
			}
		})
	}
}

func TestServeExampleConfig(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(server.TokensEnv, "")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := serveConfig(&serveOptions{examples: "../../examples"}, log)
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Abs("../../examples")
	if cfg.Listen != "127.0.0.1:8080" || len(cfg.Sources) != 1 || cfg.Sources[0].Path != examples || !cfg.PublicReads {
		t.Fatalf("example config %+v", cfg)
	}
	tok, err := os.ReadFile(cfg.TokensFile)
	if err != nil || len(strings.TrimSpace(string(tok))) != 48 {
		t.Fatalf("token file %s: %q %v", cfg.TokensFile, tok, err)
	}
	if fi, _ := os.Stat(cfg.TokensFile); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	again, _ := serveConfig(&serveOptions{examples: "../../examples"}, log)
	if tok2, _ := os.ReadFile(again.TokensFile); string(tok2) != string(tok) {
		t.Fatal("the example token changed between runs")
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestServeEngine(t *testing.T) {
	ctx := context.Background()
	eng := engine{registry: remotetest.Options}
	rep, err := eng.CheckTree(ctx, "../../examples", server.CheckOptions{})
	if err != nil || rep == nil || rep.Summary.Packages == 0 || !rep.Summary.Passed {
		t.Fatalf("CheckTree(examples) = %+v, %v", rep, err)
	}
	if _, err := eng.CheckTree(ctx, "../../examples", server.CheckOptions{Policy: "nope.yaml"}); err == nil {
		t.Fatal("a missing policy file is not an error")
	}

	// The registry side: the example releases pushed, signed and attested
	// into an in-process registry, verified through the service's engine
	// with a policy that trusts the key.
	tree := remotetest.Tree(t)
	prefix := remotetest.Registry(t)
	key := remotetest.Key(t)
	rels := remotetest.Publish(t, tree, prefix, remotetest.Both(key))
	pol := remotetest.WritePolicy(t, key)
	if _, err := eng.CheckTree(ctx, tree, server.CheckOptions{Registry: prefix.String()}); !errors.Is(err, server.ErrNotConfigured) || !strings.Contains(err.Error(), "config's policy") {
		t.Fatalf("registry checks with no trusted key: %v, want ErrNotConfigured naming the config's policy", err)
	}
	rep, err = eng.CheckTree(ctx, tree, server.CheckOptions{Registry: prefix.String(), Policy: pol})
	if err != nil || !rep.Summary.Passed {
		t.Fatalf("CheckTree with registry = %+v, %v", rep, err)
	}
	for _, r := range rels {
		dgst, err := eng.Resolve(ctx, r.Ref())
		if err != nil || dgst != r.Digest.String() {
			t.Fatalf("Resolve(%s) = %q, %v; want %s", r.Ref(), dgst, err, r.Digest)
		}
		rep, err := eng.VerifyArtifact(ctx, r.Pinned(), server.VerifyOptions{Policy: pol})
		if err != nil || !rep.Summary.Passed {
			t.Fatalf("VerifyArtifact(%s) = %+v, %v", r.Pinned(), rep, err)
		}
		// Without the key in the policy the signature check must fail.
		if _, err := eng.VerifyArtifact(ctx, r.Pinned(), server.VerifyOptions{}); !errors.Is(err, server.ErrNotConfigured) || !strings.Contains(err.Error(), "default policy") {
			t.Fatalf("VerifyArtifact with no trusted key: %v, want ErrNotConfigured (503) naming the default policy", err)
		}
	}
}

// TestServeVerifyRefEndToEnd runs the service with the real engine against
// signed example releases in an in-process registry: POST /v1/verify
// {"ref"} verifies them (then answers from the cache keyed by digest),
// refuses a reference outside the allowlist without fetching it, and a
// scheduled source with a registry runs the registry checks. Every response
// is validated against api/openapi.yaml.
func TestServeVerifyRefEndToEnd(t *testing.T) {
	serveVerifyRefEndToEnd(t, remotetest.Registry(t))
}

// serveVerifyRefEndToEnd is TestServeVerifyRefEndToEnd against the
// registry at prefix (plain HTTP).
func serveVerifyRefEndToEnd(t *testing.T, prefix artifact.Prefix) {
	const token = "e2e-token-0123456789abcdef"
	t.Setenv(server.TokensEnv, token)
	tree := remotetest.Tree(t)
	key := remotetest.Key(t)
	rels := remotetest.Publish(t, tree, prefix, remotetest.Both(key))
	// The same releases unsigned, in another repository under the prefix.
	unsignedPrefix, err := artifact.ParsePrefix(prefix.String() + "/unsigned")
	if err != nil {
		t.Fatal(err)
	}
	unsigned := remotetest.Publish(t, tree, unsignedPrefix, remotetest.Steps{})
	pol := remotetest.WritePolicy(t, key)
	// A registry outside the allowlist that counts what reaches it.
	var outside atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outside.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(evil.Close)

	cfg := &server.Config{
		Listen:     "127.0.0.1:0",
		DataDir:    filepath.Join(t.TempDir(), "data"),
		Registries: []string{prefix.String()},
		Policy:     pol,
		Sources:    []server.SourceConfig{{Name: "tree", Path: tree, Registry: prefix.String(), Policy: pol}},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := server.New(context.Background(), cfg, engine{registry: remotetest.Options}, log)
	if err != nil {
		t.Fatal(err)
	}
	base, stop := servertest.Serve(t, srv.Run)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	c := servertest.NewClient(t, base, token)
	verifyRef := func(tok, ref string) (*http.Response, []byte) {
		t.Helper()
		return c.WithToken(tok).PostJSON("/v1/verify", map[string]string{"ref": ref})
	}

	if len(rels) == 0 {
		t.Fatal("no releases published")
	}
	for _, r := range rels {
		resp, body := verifyRef(token, r.Ref())
		var rep report.Report
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &rep) != nil {
			t.Fatalf("verify %s: %d %s", r.Ref(), resp.StatusCode, body)
		}
		if !rep.Summary.Passed || rep.Summary.Providers != 1 || resp.Header.Get("Pinseal-Cache") != "miss" || resp.Header.Get("Pinseal-Digest") != r.Digest.String() {
			t.Fatalf("verify %s: headers %v, report %s", r.Ref(), resp.Header, body)
		}
		// By tag again: the cached result. By digest: a verdict of its
		// own (no tag to hold the artifact to), then cached too.
		for _, again := range []struct{ ref, cache string }{{r.Ref(), "hit"}, {r.Pinned(), "miss"}, {r.Pinned(), "hit"}} {
			resp2, body2 := verifyRef(token, again.ref)
			if resp2.StatusCode != http.StatusOK || resp2.Header.Get("Pinseal-Cache") != again.cache || string(body2) != string(body) {
				t.Fatalf("verify %s again: %d cache %q, want %s\n%s", again.ref, resp2.StatusCode, resp2.Header.Get("Pinseal-Cache"), again.cache, body2)
			}
		}
	}
	// Unsigned: a report that fails on the signature, not an error.
	for _, r := range unsigned {
		resp, body := verifyRef(token, r.Ref())
		var rep report.Report
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &rep) != nil || rep.Summary.Passed {
			t.Fatalf("verify unsigned %s: %d %s", r.Ref(), resp.StatusCode, body)
		}
		found := false
		for _, f := range rep.Findings {
			found = found || f.Check == "signature"
		}
		if !found {
			t.Fatalf("verify unsigned %s: no signature finding in %s", r.Ref(), body)
		}
	}

	// Refused: outside the allowlist (nothing is fetched), no token, a wrong token.
	anyRel := rels[func() string {
		for k := range rels {
			return k
		}
		return ""
	}()]
	evilRef := strings.TrimPrefix(evil.URL, "http://") + "/capi/" + anyRel.RepositoryName() + ":" + anyRel.Release.Release
	for _, tt := range []struct {
		name, tok, ref string
		want           int
	}{
		{"outside the allowlist", token, evilRef, http.StatusUnprocessableEntity},
		{"other path on the allowed host", token, strings.Replace(anyRel.Ref(), "/capi/", "/elsewhere/", 1), http.StatusUnprocessableEntity},
		{"no token", "", anyRel.Ref(), http.StatusUnauthorized},
		{"wrong token", "wrong-token-0123456789abcdef", anyRel.Ref(), http.StatusForbidden},
	} {
		resp, body := verifyRef(tt.tok, tt.ref)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, resp.StatusCode, body, tt.want)
		}
	}
	if n := outside.Load(); n != 0 {
		t.Fatalf("%d requests reached the registry outside the allowlist", n)
	}

	// A scan of the source runs the registry checks against the prefix.
	resp, body := c.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/scans: %d %s", resp.StatusCode, body)
	}
	var sc struct{ ID int64 }
	json.Unmarshal(body, &sc)
	var detail struct {
		Scan struct {
			Status, Error string
		}
		Report *report.Report
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
		resp, body = c.Get(fmt.Sprintf("/v1/scans/%d", sc.ID))
		if err := json.Unmarshal(body, &detail); resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET /v1/scans/%d: %d %s", sc.ID, resp.StatusCode, body)
		}
		if detail.Scan.Status != "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the scan never finished")
		}
	}
	if detail.Scan.Status != "succeeded" || detail.Report == nil || !detail.Report.Summary.Passed {
		t.Fatalf("scan with registry checks: %s", body)
	}
}

// TestWarnUntrusted: registry verification under a policy that trusts no
// key is said once at start-up; a policy with a key, or no registry at all,
// says nothing.
func TestWarnUntrusted(t *testing.T) {
	key := remotetest.Key(t)
	trusted := remotetest.WritePolicy(t, key)
	for _, tc := range []struct {
		name string
		cfg  server.Config
		want []string
	}{
		{"no registry", server.Config{}, nil},
		{"registries, default policy", server.Config{Registries: []string{"127.0.0.1:5000"}}, []string{"POST /v1/verify of registry refs will not verify", "built-in default policy"}},
		{"registries, trusted policy", server.Config{Registries: []string{"127.0.0.1:5000"}, Policy: trusted}, nil},
		{"source registry, default policy", server.Config{Sources: []server.SourceConfig{{Name: "prod", Registry: "127.0.0.1:5000/capi"}}}, []string{"registry checks of source prod will not verify"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf strings.Builder
			warnUntrusted(&tc.cfg, slog.New(slog.NewTextHandler(&buf, nil)))
			if len(tc.want) == 0 && buf.Len() > 0 {
				t.Fatalf("unexpected warning: %s", buf.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log %q lacks %q", buf.String(), w)
				}
			}
		})
	}
}

// TestServeEngineFetchConfigOCI: in a scheduled scan with a registry, a
// provider installing from spec.fetchConfig.oci is checked against its
// artifact when the config's registries allow it, and is a finding,
// with nothing fetched, when they do not.
func TestServeEngineFetchConfigOCI(t *testing.T) {
	ctx := context.Background()
	tree := remotetest.Tree(t)
	prefix := remotetest.Registry(t)
	key := remotetest.Key(t)
	rels := remotetest.Publish(t, tree, prefix, remotetest.Both(key))
	pol := remotetest.WritePolicy(t, key)
	// A second core provider object that installs the pushed core release
	// by OCI, in a package of its own.
	core := rels["v1.10.1-core"]
	dir := filepath.Join(tree, "oci-core")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "provider.yaml"), []byte(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: CoreProvider
metadata:
  name: cluster-api
  namespace: capi-oci
spec:
  version: v1.10.1-core
  fetchConfig:
    oci: http://`+core.Repo.Name()+`
`), 0o644)

	allowed := engine{registry: remotetest.Options, allow: []string{prefix.Host + "/" + prefix.Path}}
	rep, err := allowed.CheckTree(ctx, tree, server.CheckOptions{Registry: prefix.String(), Policy: pol})
	if err != nil || !rep.Summary.Passed {
		t.Fatalf("allowed: %+v, %v", rep, err)
	}
	found := false
	for _, p := range rep.Packages {
		if p.Path == "oci-core" && len(p.Providers) == 1 && p.Providers[0].Artifact == core.Pinned() {
			found = true
		}
	}
	if !found {
		t.Fatalf("the OCI provider was not checked against %s: %+v", core.Pinned(), rep.Packages)
	}

	other := engine{registry: remotetest.Options, allow: []string{"registry.invalid"}}
	// The --registry prefix's own repositories are still read; the OCI
	// source names the same host, so only an allowlist without it refuses
	// it: use a prefix on another host.
	rep, err = other.CheckTree(ctx, tree, server.CheckOptions{Registry: "registry.invalid/capi", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, f := range rep.Findings {
		if f.Package == "oci-core" && f.Check == "registry-digest" && strings.Contains(f.Message, "is not allowed") {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("a registry outside the allowlist was not refused: %+v", rep.Findings)
	}
}
