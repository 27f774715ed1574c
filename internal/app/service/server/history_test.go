package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
)

// TestGitSourceHistory: each scan of a git source compares the tree with
// the commit scanned before it, with the real engine. The first commit has
// no base; a second commit that changes a release's metadata under the
// same name opens version-reused; a third that gives the change a new name
// resolves it; and the dashboard draws the three scans.
func TestGitSourceHistory(t *testing.T) {
	repo := t.TempDir()
	if err := fixture.CopyDir("../../../../examples", repo); err != nil {
		t.Fatal(err)
	}
	r, err := git.PlainInit(repo, false)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := r.Worktree()
	commit := func(msg string) string {
		t.Helper()
		if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			t.Fatal(err)
		}
		h, err := w.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	edit := func(file, old, new string) {
		t.Helper()
		p := filepath.Join(repo, "packages/capi-providers-infraprovider", file)
		b, _ := os.ReadFile(p)
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("%s has no %q", file, old)
		}
		os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
	}
	c1 := commit("examples")

	cfg := testConfig(t)
	cfg.PublicReads = true
	cfg.Sources = []SourceConfig{{Name: "g", Git: &GitConfig{URL: "file://" + repo, Ref: "master"}}}
	engine := NewVerifyEngine(cfg, false, nil)
	t.Cleanup(engine.Sandbox.Close)
	ts := startServer(t, cfg, engine)
	history := func(fs []store.Finding) []store.Finding {
		var out []store.Finding
		for _, f := range fs {
			if f.Check == "version-reused" || f.Check == "version-downgrade" {
				out = append(out, f)
			}
		}
		return out
	}

	d := ts.scanNow("g")
	if d.Scan.Status != store.Succeeded || d.Scan.Revision != c1 || d.Scan.Errors != 0 {
		t.Fatalf("first scan %+v (%s), want a clean scan at %s", d.Scan, d.Scan.Error, c1)
	}

	edit("templates/configmaps.yaml", "| nindent 4 }}", "| nindent 4 }}\n    # reviewed")
	c2 := commit("metadata note")
	d = ts.scanNow("g")
	got := history(d.New)
	if d.Scan.Revision != c2 || len(got) != 1 || got[0].Check != "version-reused" ||
		!strings.Contains(got[0].Message, "changed since commit "+c1[:12]) ||
		!strings.Contains(got[0].Message, "clusters that installed v0.7.7-infraprovider-proxmox never get this change") {
		t.Fatalf("scan of the second commit %+v: history findings %+v, want version-reused against %s", d.Scan, got, c1[:12])
	}
	if len(d.New) != 1 || d.Scan.Errors != 1 {
		t.Errorf("second scan: %d new findings, %d errors; want version-reused alone", len(d.New), d.Scan.Errors)
	}

	// The same commit again: still compared with c1, the finding stays.
	d = ts.scanNow("g")
	if d.Scan.Errors != 1 || len(d.New)+len(d.Resolved) != 0 {
		t.Fatalf("re-scan of the second commit %+v: new %+v resolved %+v, want the finding kept", d.Scan, d.New, d.Resolved)
	}

	for _, f := range []string{"templates/providers.yaml", "templates/configmaps.yaml"} {
		edit(f, "v0.7.7-infraprovider-proxmox", "v0.7.7-infraprovider-proxmox.1")
	}
	edit("pin.yaml", "release: v0.7.7-infraprovider-proxmox", "release: v0.7.7-infraprovider-proxmox.1")
	commit("new release name")
	d = ts.scanNow("g")
	if got := history(d.Resolved); d.Scan.Errors != 0 || len(got) != 1 {
		t.Fatalf("scan of the renamed release %+v: resolved %+v, want version-reused resolved and no error", d.Scan, d.Resolved)
	}

	_, page := ts.Get("/")
	chart := section(string(page), `id="history"`)
	for _, want := range []string{`id="chart-g"`, `<svg xmlns="http://www.w3.org/2000/svg" class="history-chart"`, `class="errors"`,
		`href="/scans/2"`, "scan #2, ", ": 1 errors, 0 warnings at commit " + c2[:12]} {
		if !strings.Contains(chart, want) {
			t.Errorf("dashboard chart lacks %q:\n%s", want, chart)
		}
	}
	if n := strings.Count(chart, `class="scan-point"`); n != 4 {
		t.Errorf("chart has %d scan points, want 4", n)
	}
}
