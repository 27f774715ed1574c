package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// BenchmarkRescan measures a scan of a git source (file URL) of a
// committed tree with the real verification engine (pkg/verify, the
// offline checks of `verifier check`): "full" is the first scan of a
// commit (clone, load, every check), "unchanged" a re-scan of the same
// commit under the same policy (ls-remote, the recorded results kept).
// BENCH_RESCAN_TREE names the tree to commit (scripts/bench-rescan.sh
// passes a 100-package gentree tree); default: 20 packages of 64 KiB.
func BenchmarkRescan(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		testpeer.Missing(b, "git CLI (it makes the repository): apt-get install git")
	}
	tree := os.Getenv("BENCH_RESCAN_TREE")
	repo := b.TempDir()
	if tree == "" {
		tree = filepath.Join(b.TempDir(), "tree")
		if _, err := gentree.Generate(tree, gentree.Options{Packages: 20, Size: 64 << 10}); err != nil {
			b.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=b", "-c", "user.email=b@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	cp := exec.Command("cp", "-a", tree+"/.", repo)
	if out, err := cp.CombinedOutput(); err != nil {
		b.Fatalf("cp: %v\n%s", err, out)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "tree")

	eng := &fakeEngine{check: func(ctx context.Context, root string, opts CheckOptions) (*report.Report, error) {
		_, r, err := verify.Run(ctx, root, verify.Options{OnlyExtra: opts.RegistryOnly})
		return r, err
	}}
	ctx := context.Background()
	newServer := func(b *testing.B) *Server {
		dir := b.TempDir()
		cfg := &Config{DataDir: dir, Sources: []SourceConfig{{Name: "src", Git: &GitConfig{URL: "file://" + repo, Ref: "main"}}}}
		s, err := New(ctx, cfg, eng, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	scan := func(b *testing.B, s *Server) store.Meta {
		sc, err := s.store.Begin(ctx, "src", "schedule")
		if err != nil {
			b.Fatal(err)
		}
		rep, meta, err := s.checkSourceMeta(ctx, "src")
		if err != nil {
			b.Fatal(err)
		}
		if rep.Summary.Errors != 0 {
			b.Fatalf("the clean tree has %d errors", rep.Summary.Errors)
		}
		if err := s.store.SetMeta(ctx, sc.ID, meta); err != nil {
			b.Fatal(err)
		}
		if _, err := s.store.Succeed(ctx, sc.ID, rep); err != nil {
			b.Fatal(err)
		}
		return meta
	}
	b.Run("full", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s := newServer(b) // no checkout, no history: a first scan
			b.StartTimer()
			if m := scan(b, s); m.OfflineReused {
				b.Fatal("a first scan reused results")
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		s := newServer(b)
		scan(b, s)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if m := scan(b, s); !m.OfflineReused || m.Fingerprint == "" {
				b.Fatal("a re-scan of an unchanged commit ran the offline checks")
			}
		}
	})
}
