package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/server"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/verify"
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
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("apiVersion: pinseal/v1\nkind: Policy\nkeys:\n- "+remotetest.WritePublicKey(t, key)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CheckTree(ctx, tree, server.CheckOptions{Registry: prefix.String()}); !errors.Is(err, verify.ErrNoTrustedKeys) {
		t.Fatalf("registry checks with no trusted key: %v, want ErrNoTrustedKeys", err)
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
		if _, err := eng.VerifyArtifact(ctx, r.Pinned(), server.VerifyOptions{}); err == nil {
			t.Fatal("VerifyArtifact with no trusted key succeeded")
		}
	}
}
