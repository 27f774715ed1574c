package bump

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBumpRefusesWhatItCannotEdit: a release name the templates compute
// from a value bump does not move (v0.7.7-{{ .Values.suffix }}) stays
// behind in the staged package; the gate's checks see the skew and refuse,
// and nothing changes. Without the gate this bump would land half done.
func TestBumpRefusesWhatItCannotEdit(t *testing.T) {
	u := newUpstream(t)
	root := fixtureTree(t, u)
	dir := pkgDir(root, "capi-providers-proxmox")
	for _, f := range []string{"templates/configmaps.yaml", "templates/providers.yaml"} {
		p := filepath.Join(dir, f)
		b, _ := os.ReadFile(p)
		b = []byte(strings.ReplaceAll(string(b), "v0.7.7-infraprovider-proxmox", "v0.7.7-{{ .Values.suffix }}"))
		os.WriteFile(p, b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "values.yaml"), []byte("suffix: infraprovider-proxmox\n"), 0o644)
	requireClean(t, root)
	before := snapshot(t, root)
	o := opts(u, "v0.7.8")
	o.TrustOnFirstUse = true
	_, err := Bump(context.Background(), dir, o)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a refusal by the gate", err)
	}
	checks := map[string]bool{}
	for _, f := range re.Findings {
		checks[f.Check] = true
	}
	if !checks["pin-version"] {
		t.Errorf("refused by %v, want pin-version among them: %v", checks, err)
	}
	requireSame(t, before, snapshot(t, root))
}

// TestRecoverRefusesHostileJournal: a journal that names a file outside
// the package, or a backup that is not a bump's, is refused untouched.
func TestRecoverRefusesHostileJournal(t *testing.T) {
	for _, j := range []string{
		`{"entries":[{"target":"../outside","temp":".pinseal-tmp-x","backup":".pinseal-tmp-y"}]}`,
		`{"entries":[{"target":"files/a.yaml","temp":".pinseal-tmp-x","backup":"../../etc/passwd"}]}`,
		`{"entries":[{"target":"files/a.yaml","temp":"a.yaml","backup":""}]}`,
		`not json`,
	} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "files"), 0o755)
		os.WriteFile(filepath.Join(dir, "files", "a.yaml"), []byte("keep\n"), 0o644)
		os.WriteFile(filepath.Join(dir, JournalName), []byte(j), 0o644)
		if _, err := Recover(dir); err == nil {
			t.Errorf("journal %s: accepted", j)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "files", "a.yaml")); string(b) != "keep\n" {
			t.Errorf("journal %s: changed files/a.yaml", j)
		}
	}
}

// BenchmarkBumpDryRun measures a whole bump (load the tree, fetch from the
// cache, stage, edit, build, gate) of the proxmox fixture, writing nothing.
func BenchmarkBumpDryRun(b *testing.B) {
	u := newUpstream(b)
	root := fixtureTree(b, u)
	o := opts(u, "v0.7.8")
	o.TrustOnFirstUse, o.DryRun = true, true
	o.Fetcher.CacheDir = b.TempDir()
	for b.Loop() {
		if _, err := Bump(context.Background(), pkgDir(root, "capi-providers-proxmox"), o); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRecoverChecksEveryEntryFirst: a hostile entry after a good one
// leaves the good one untouched too.
func TestRecoverChecksEveryEntryFirst(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("new\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".pinseal-tmp-a.yaml.old.1"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, JournalName), []byte(`{"entries":[
		{"target":"a.yaml","temp":".pinseal-tmp-a.yaml.1","backup":".pinseal-tmp-a.yaml.old.1"},
		{"target":"../b","temp":".pinseal-tmp-b.1"}]}`), 0o644)
	if _, err := Recover(dir); err == nil {
		t.Fatal("accepted")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.yaml")); string(b) != "new\n" {
		t.Errorf("a.yaml restored before the journal was checked: %q", b)
	}
}
