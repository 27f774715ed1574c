package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/rendertest"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// TestMain lets this test binary be the bounded chart-render child.
func TestMain(m *testing.M) { rendertest.Main(m) }

const infra = "packages/capi-providers-infraprovider"

// gitTree is examples/ committed into a fresh git repository (go-git, no
// git program), with the tree under packages/ as ROOT.
type gitTree struct {
	t    *testing.T
	top  string
	repo *git.Repository
}

func newGitTree(t *testing.T) *gitTree {
	t.Helper()
	top := t.TempDir()
	if err := fixture.CopyDir("../../../examples", filepath.Join(top, "examples")); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(top, false)
	if err != nil {
		t.Fatal(err)
	}
	g := &gitTree{t: t, top: top, repo: repo}
	g.commit("examples")
	return g
}

func (g *gitTree) root() string { return filepath.Join(g.top, "examples") }

func (g *gitTree) commit(msg string) string {
	g.t.Helper()
	w, err := g.repo.Worktree()
	if err != nil {
		g.t.Fatal(err)
	}
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		g.t.Fatal(err)
	}
	h, err := w.Commit(msg, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}, AllowEmptyCommits: true})
	if err != nil {
		g.t.Fatal(err)
	}
	return h.String()
}

// edit replaces old with new in file (relative to ROOT), once.
func (g *gitTree) edit(file, old, new string) {
	g.t.Helper()
	p := filepath.Join(g.root(), file)
	b, err := os.ReadFile(p)
	if err != nil {
		g.t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		g.t.Fatalf("%s holds no %q", file, old)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// rename gives the infrastructure provider's release another name (its
// spec.version and its ConfigMap's name).
func (g *gitTree) rename(to string) {
	g.edit(infra+"/templates/providers.yaml", "version: v0.7.7-infraprovider-proxmox", "version: "+to)
	g.edit(infra+"/templates/configmaps.yaml", "name: v0.7.7-infraprovider-proxmox", "name: "+to)
}

// metadataNote changes the release's metadata bytes (a comment in
// data.metadata) and nothing else the tree checks see.
func (g *gitTree) metadataNote() {
	g.edit(infra+"/templates/configmaps.yaml", `| nindent 4 }}`, "| nindent 4 }}\n    # reviewed")
}

// componentsChange changes the release's components (YAML and blob in
// step) under the same name.
func (g *gitTree) componentsChange() {
	g.t.Helper()
	dir := filepath.Join(g.root(), infra, "files")
	y, err := os.ReadFile(filepath.Join(dir, "infrastructure-components.yaml"))
	if err != nil {
		g.t.Fatal(err)
	}
	y = append(y, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n"...)
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(y)
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "infrastructure-components.yaml"), y, 0o644); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "components.gz"), gz.Bytes(), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// check runs the verification of ROOT with and without the base rev and
// returns both reports.
func (g *gitTree) check(rev string) (with, without *report.Report) {
	g.t.Helper()
	ctx := context.Background()
	base, err := Base(ctx, g.root(), rev, BaseOptions{})
	if err != nil {
		g.t.Fatalf("Base(%s): %v", rev, err)
	}
	_, without, err = verify.Run(ctx, g.root(), verify.Options{})
	if err != nil {
		g.t.Fatal(err)
	}
	_, with, err = verify.Run(ctx, g.root(), verify.Options{Extra: Checks(base)})
	if err != nil {
		g.t.Fatal(err)
	}
	return with, without
}

// historyFindings are r's findings of the history checks.
func historyFindings(r *report.Report) []report.Finding {
	var out []report.Finding
	for _, f := range r.Findings {
		if f.Check == VersionReused || f.Check == VersionDowngrade {
			out = append(out, f)
		}
	}
	return out
}

// only asserts that r's history findings are exactly one of check id at
// severity sev naming each of words, and that they are all --base adds.
func only(t *testing.T, with, without *report.Report, id string, sev report.Severity, words ...string) report.Finding {
	t.Helper()
	fs := historyFindings(with)
	if len(fs) != 1 || fs[0].Check != id || fs[0].Severity != sev {
		t.Fatalf("history findings %+v, want one %s %s", fs, sev, id)
	}
	for _, w := range words {
		if !strings.Contains(fs[0].Message+" "+fs[0].Hint, w) {
			t.Errorf("%s finding %q (hint %q) does not name %q", id, fs[0].Message, fs[0].Hint, w)
		}
	}
	if len(with.Findings) != len(without.Findings)+1 {
		t.Errorf("--base added %d findings, want 1", len(with.Findings)-len(without.Findings))
	}
	if fs[0].Package != infra || fs[0].Provider != "InfrastructureProvider/proxmox" {
		t.Errorf("finding at %s %s, want %s InfrastructureProvider/proxmox", fs[0].Package, fs[0].Provider, infra)
	}
	return fs[0]
}

func TestUnchangedTreeIsClean(t *testing.T) {
	g := newGitTree(t)
	with, without := g.check("HEAD")
	if fs := historyFindings(with); len(fs) != 0 || with.Summary.Errors != 0 || without.Summary.Errors != 0 {
		t.Fatalf("the examples against themselves: %d errors, history findings %+v", with.Summary.Errors, fs)
	}
}

func TestMetadataChangeUnderSameName(t *testing.T) {
	g := newGitTree(t)
	g.metadataNote()
	with, without := g.check("HEAD")
	f := only(t, with, without, VersionReused, report.Error,
		"release v0.7.7-infraprovider-proxmox of InfrastructureProvider/proxmox changed since HEAD (", "metadata (sha256:",
		"clusters that installed v0.7.7-infraprovider-proxmox never get this change: release it under a new name", "builder bump")
	if strings.Contains(f.Message, "components (") {
		t.Errorf("metadata-only change names the components: %s", f.Message)
	}
	if f.File != infra+"/templates/configmaps.yaml" || f.Line == 0 {
		t.Errorf("finding at %s:%d, want the ConfigMap in %s/templates/configmaps.yaml", f.File, f.Line, infra)
	}
	// Alone: nothing else in the tree is red.
	if with.Summary.Errors != 1 {
		t.Errorf("%d errors, want version-reused alone: %+v", with.Summary.Errors, with.Findings)
	}
}

func TestComponentsChangeUnderSameName(t *testing.T) {
	g := newGitTree(t)
	g.componentsChange()
	with, without := g.check("HEAD")
	f := only(t, with, without, VersionReused, report.Error, "components (sha256:")
	if strings.Contains(f.Message, "metadata (") {
		t.Errorf("components-only change names the metadata: %s", f.Message)
	}
}

func TestRecompressedBlobIsTheSameRelease(t *testing.T) {
	g := newGitTree(t)
	// The same YAML compressed at another level: other blob bytes, the
	// same components once inflated, which is what the cluster gets.
	dir := filepath.Join(g.root(), infra, "files")
	y, _ := os.ReadFile(filepath.Join(dir, "infrastructure-components.yaml"))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(y)
	zw.Close()
	os.WriteFile(filepath.Join(dir, "components.gz"), gz.Bytes(), 0o644)
	with, _ := g.check("HEAD")
	if fs := historyFindings(with); len(fs) != 0 {
		t.Fatalf("recompressed blob: %+v", fs)
	}
}

func TestNewNameIsClean(t *testing.T) {
	g := newGitTree(t)
	g.metadataNote()
	g.rename("v0.7.7-infraprovider-proxmox.1")
	g.edit(infra+"/pin.yaml", "release: v0.7.7-infraprovider-proxmox", "release: v0.7.7-infraprovider-proxmox.1")
	with, _ := g.check("HEAD")
	if fs := historyFindings(with); len(fs) != 0 || with.Summary.Errors != 0 {
		t.Fatalf("a change under a new, higher name: %d errors, %+v", with.Summary.Errors, with.Findings)
	}
}

func TestDowngrade(t *testing.T) {
	g := newGitTree(t)
	g.rename("v0.6.0-infraprovider-proxmox")
	with, without := g.check("HEAD")
	f := only(t, with, without, VersionDowngrade, report.Error,
		"from release v0.7.7-infraprovider-proxmox at HEAD (", "down to v0.6.0-infraprovider-proxmox", "refuses a provider downgrade")
	if f.File != infra+"/templates/providers.yaml" || f.Line == 0 {
		t.Errorf("finding at %s:%d, want the provider's spec.version in %s/templates/providers.yaml", f.File, f.Line, infra)
	}
}

func TestPatchDowngradeIsAWarning(t *testing.T) {
	g := newGitTree(t)
	g.rename("v0.7.6-infraprovider-proxmox")
	with, without := g.check("HEAD")
	only(t, with, without, VersionDowngrade, report.Warning, "down to v0.7.6-infraprovider-proxmox", "installs a lower patch")
}

func TestBaseAtEarlierCommit(t *testing.T) {
	// A commit after the base: REV names the older one, and the tree is
	// compared with that, not with HEAD.
	g := newGitTree(t)
	first := g.commit("nothing") // no change: the same tree
	g.rename("v0.8.0-infraprovider-proxmox")
	g.commit("bump")
	g.rename2("v0.8.0-infraprovider-proxmox", "v0.7.9-infraprovider-proxmox")
	with, _ := g.check(first[:10])
	if fs := historyFindings(with); len(fs) != 0 {
		t.Fatalf("v0.7.9 against %s (v0.7.7): %+v", first[:10], fs)
	}
	with, without := g.check("HEAD")
	only(t, with, without, VersionDowngrade, report.Error, "from release v0.8.0-infraprovider-proxmox", "down to v0.7.9")
}

func (g *gitTree) rename2(from, to string) {
	g.edit(infra+"/templates/providers.yaml", "version: "+from, "version: "+to)
	g.edit(infra+"/templates/configmaps.yaml", "name: "+from, "name: "+to)
}

func TestBaseErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Base(ctx, t.TempDir(), "HEAD", BaseOptions{}); !errors.Is(err, ErrNotInGit) || !strings.Contains(err.Error(), "leave --base out") {
		t.Errorf("outside git: %v", err)
	}
	g := newGitTree(t)
	if _, err := Base(ctx, g.root(), "no-such-branch", BaseOptions{}); !errors.Is(err, ErrNoRevision) || !strings.Contains(err.Error(), `"no-such-branch"`) {
		t.Errorf("bad REV: %v", err)
	}
	// A root that did not exist at REV: every provider is new.
	g.commit("again")
	sub := filepath.Join(g.top, "later")
	if err := fixture.CopyDir(g.root(), sub); err != nil {
		t.Fatal(err)
	}
	s, err := Base(ctx, sub, "HEAD", BaseOptions{})
	if err != nil || len(s.Releases) != 0 {
		t.Errorf("root new since REV: %v, %+v", err, s)
	}
}

func TestBaseIsBounded(t *testing.T) {
	g := newGitTree(t)
	_, err := Base(context.Background(), g.root(), "HEAD", BaseOptions{MaxFiles: 5})
	if err == nil || !strings.Contains(err.Error(), "examples at HEAD (") || !strings.Contains(err.Error(), "holds more than 5 files, directories and links: a base tree that large is refused") {
		t.Fatalf("a base tree over its file bound: %v", err)
	}
}
