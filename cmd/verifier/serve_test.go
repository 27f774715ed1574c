package main

import (
	"context"
	"encoding/json"
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

	"github.com/pinseal/pinseal/internal/app/service/server"
	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
)

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "serve.yaml")
	os.WriteFile(bad, []byte("dataDir: d\nlistn: x\n"), 0o600)
	brokenPolicy := filepath.Join(dir, "broken-policy.yaml")
	os.WriteFile(brokenPolicy, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: [\n"), 0o600)
	withBrokenPolicy := filepath.Join(dir, "serve-broken-policy.yaml")
	os.WriteFile(withBrokenPolicy, []byte("dataDir: d\npolicy: broken-policy.yaml\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad config", []string{"serve", "--config", bad}, "unknown field"},
		{"missing config", []string{"serve", "--config", filepath.Join(dir, "nope.yaml")}, "read config"},
		{"broken policy", []string{"serve", "--config", withBrokenPolicy}, "policy: policy " + brokenPolicy},
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
	tree := remotetest.CopyExamples(t)
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
	srv, err := server.New(context.Background(), cfg, server.VerifyEngine{Registry: remotetest.Options}, log)
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
