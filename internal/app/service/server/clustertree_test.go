package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/report"
)

// clusterFake is a fakeEngine that also checks clusters: it records the
// tree each cluster check was given and what that tree held.
type clusterFake struct {
	*fakeEngine
	mu    sync.Mutex
	trees []string
	held  []string
}

func (f *clusterFake) CheckCluster(ctx context.Context, opts ClusterCheckOptions) (*report.Report, error) {
	b, err := os.ReadFile(filepath.Join(opts.Tree, "p", "f.yaml"))
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trees = append(f.trees, opts.Tree)
	f.held = append(f.held, string(b))
	return newReport(), nil
}

// TestClusterSourceGitTree: a cluster source whose tree is a git source
// is checked against that source's checkout at the commit of its newest
// successful scan, following it to a new commit; before the git source
// has been scanned, the cluster scan fails saying to scan it first.
func TestClusterSourceGitTree(t *testing.T) {
	repo, git, c1 := newGitRepo(t)

	cfg := testConfig(t)
	kc := filepath.Join(t.TempDir(), "kc")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600)
	cfg.Sources = append(cfg.Sources,
		SourceConfig{Name: "g", Git: &GitConfig{URL: "file://" + repo, Ref: "main"}},
		SourceConfig{Name: "prod", Cluster: &ClusterSourceConfig{Kubeconfig: kc, Tree: "g"}})
	eng := &clusterFake{fakeEngine: &fakeEngine{}}
	ts := startServer(t, cfg, eng)

	d := ts.scanNow("prod")
	if d.Scan.Status != store.Failed || !strings.Contains(d.Scan.Error, "git source g, has no successful scan yet: scan g first") {
		t.Fatalf("cluster scan before its git tree was scanned: %+v, want failed naming the git source", d.Scan)
	}
	if d := ts.scanNow("g"); d.Scan.Status != store.Succeeded || d.Scan.Revision != c1 {
		t.Fatalf("git scan %+v", d.Scan)
	}
	if d := ts.scanNow("prod"); d.Scan.Status != store.Succeeded {
		t.Fatalf("cluster scan %+v, want succeeded", d.Scan)
	}
	os.WriteFile(filepath.Join(repo, "p", "f.yaml"), []byte("a: 2\n"), 0o644)
	git("commit", "-q", "-am", "two")
	c2 := git("rev-parse", "HEAD")
	if d := ts.scanNow("g"); d.Scan.Revision != c2 {
		t.Fatalf("git scan %+v, want at %s", d.Scan, c2)
	}
	if d := ts.scanNow("prod"); d.Scan.Status != store.Succeeded {
		t.Fatalf("cluster scan %+v, want succeeded", d.Scan)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	want := []string{filepath.Join(cfg.DataDir, "git", "g", c1), filepath.Join(cfg.DataDir, "git", "g", c2)}
	if len(eng.trees) != 2 || eng.trees[0] != want[0] || eng.trees[1] != want[1] || eng.held[0] != "a: 1\n" || eng.held[1] != "a: 2\n" {
		t.Fatalf("cluster checks read trees %q holding %q, want the checkouts %q", eng.trees, eng.held, want)
	}
}
