package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestGitSource: a git source is fetched and scanned at its commit, which
// the scan and its findings record (with links); an unchanged commit keeps
// the offline results without calling the engine when there are no
// registry checks; a fetch failure is a failed scan with the git error.
func TestGitSource(t *testing.T) {
	repo, git, c1 := newGitRepo(t)

	cfg := testConfig(t)
	cfg.PublicReads = true
	cfg.Sources = append(cfg.Sources,
		SourceConfig{Name: "g", Git: &GitConfig{URL: "file://" + repo, Ref: "main"}},
		SourceConfig{Name: "gone", Git: &GitConfig{URL: "file://" + filepath.Join(repo, "missing"), Ref: "main"}})
	eng := &fakeEngine{check: func(ctx context.Context, root string, opts CheckOptions) (*report.Report, error) {
		if _, err := os.Stat(filepath.Join(root, "p", "f.yaml")); err != nil {
			return nil, err
		}
		f := report.Finding{Check: "pin-digest", Severity: report.Error, Package: "p", File: "p/f.yaml", Line: 1, Message: "drift"}
		return newReport(f), nil
	}}
	ts := startServer(t, cfg, eng)
	d := ts.scanNow("g")
	if d.Scan.Status != store.Succeeded || d.Scan.Revision != c1 || d.Scan.OfflineReused {
		t.Fatalf("first scan %+v, want succeeded at %s", d.Scan, c1)
	}
	if len(d.New) != 1 || d.New[0].Revision != c1 || d.New[0].Link != "file://"+repo+"@"+c1+"/p/f.yaml#L1" {
		t.Fatalf("new findings %+v, want one at %s with a link", d.New, c1)
	}
	checks := eng.checks.Load()
	d = ts.scanNow("g")
	if d.Scan.Status != store.Succeeded || !d.Scan.OfflineReused || d.Scan.Revision != c1 || eng.checks.Load() != checks {
		t.Fatalf("re-scan %+v (engine called %d times more), want the results kept without the engine", d.Scan, eng.checks.Load()-checks)
	}
	os.WriteFile(filepath.Join(repo, "p", "f.yaml"), []byte("a: 2\n"), 0o644)
	git("commit", "-q", "-am", "two")
	c2 := git("rev-parse", "HEAD")
	d = ts.scanNow("g")
	if d.Scan.Revision != c2 || d.Scan.OfflineReused || eng.checks.Load() != checks+1 {
		t.Fatalf("scan after a commit %+v, want a full scan at %s", d.Scan, c2)
	}
	var fs struct{ Findings []store.Finding }
	ts.GetJSON("/v1/findings?source=g", 200, &fs)
	if len(fs.Findings) != 1 || fs.Findings[0].Revision != c2 || !strings.Contains(fs.Findings[0].Link, c2) {
		t.Fatalf("findings %+v, want one at %s", fs.Findings, c2)
	}
	_, page := ts.Get("/")
	if !strings.Contains(string(page), c2[:12]) {
		t.Error("the dashboard does not show the commit")
	}

	d = ts.scanNow("gone")
	if d.Scan.Status != store.Failed || !strings.Contains(d.Scan.Error, "git ls-remote") {
		t.Fatalf("scan of a missing repository %+v, want failed with the git error", d.Scan)
	}
}
