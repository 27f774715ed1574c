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
	rep, err := engine{}.CheckTree(ctx, "../../examples", server.CheckOptions{})
	if err != nil || rep == nil || rep.Summary.Packages == 0 {
		t.Fatalf("CheckTree(examples) = %+v, %v", rep, err)
	}
	if _, err := (engine{}).CheckTree(ctx, "../../examples", server.CheckOptions{Registry: "127.0.0.1:5000/capi"}); !errors.Is(err, server.ErrEngineUnavailable) {
		t.Fatalf("registry checks: %v, want ErrEngineUnavailable", err)
	}
	if _, err := (engine{}).CheckTree(ctx, "../../examples", server.CheckOptions{Policy: "nope.yaml"}); err == nil {
		t.Fatal("a missing policy file is not an error")
	}
	if _, err := (engine{}).Resolve(ctx, "x"); !errors.Is(err, server.ErrEngineUnavailable) {
		t.Fatalf("Resolve: %v", err)
	}
	if _, err := (engine{}).VerifyArtifact(ctx, "x", server.VerifyOptions{}); !errors.Is(err, server.ErrEngineUnavailable) {
		t.Fatalf("VerifyArtifact: %v", err)
	}
}
