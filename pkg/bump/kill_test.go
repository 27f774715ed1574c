package bump

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/killtest"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// TestKilledBumpHelper is the child process of TestKilledBump: it bumps
// the package and stops for good after the n-th rename, announcing it in
// a marker file, so the parent SIGKILLs it exactly between two renames.
func TestKilledBumpHelper(t *testing.T) {
	dir := os.Getenv("PINSEAL_BUMP_KILL_DIR")
	if dir == "" {
		t.Skip("helper process for TestKilledBump")
	}
	killtest.StopAtRename()
	o := Options{To: "v0.7.8", TrustOnFirstUse: true, Fetcher: &fetch.Fetcher{
		Mirrors: []fetch.Mirror{{From: "https://github.com/", To: os.Getenv("PINSEAL_BUMP_KILL_MIRROR")}}}}
	if _, err := Bump(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the bump finished: it was not stopped between renames")
}

// killBump runs TestKilledBumpHelper on dir until it has done n renames
// and SIGKILLs it.
func killBump(t *testing.T, u *upstream, dir string, n int) {
	t.Helper()
	killtest.KillAtRename(t, "TestKilledBumpHelper", n, "PINSEAL_BUMP_KILL_DIR="+dir, "PINSEAL_BUMP_KILL_MIRROR="+u.Objects()+"/")
}

// TestKilledBump SIGKILLs a bump between two renames (after the first,
// in the middle, after the last): the package is then mixed, and the
// journal lets Recover — or the next bump, which recovers first — bring
// every file back byte for byte.
func TestKilledBump(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	u := newUpstream(t)
	root := fixtureTree(t, u)
	dir := pkgDir(root, "capi-providers-proxmox")
	before := snapshot(t, root)
	const files = 6 // Makefile, pin.yaml, 2 templates, YAML, blob
	for _, n := range []int{1, 3, files} {
		t.Run(fmt.Sprintf("after rename %d", n), func(t *testing.T) {
			killBump(t, u, dir, n)
			mid := snapshot(t, root)
			if _, ok := mid["packages/system/capi-providers-proxmox/"+JournalName]; !ok {
				t.Fatal("no journal left by the killed bump")
			}
			if changed := killtest.ChangedFiles(before, mid); changed != n {
				t.Errorf("%d files hold new content after %d renames", changed, n)
			}
			restored, err := Recover(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(restored) != files {
				t.Errorf("restored %v", restored)
			}
			requireSame(t, before, snapshot(t, root))
		})
	}
	// Killed again, and this time the next bump recovers and completes.
	killBump(t, u, dir, 2)
	o := opts(u, "v0.7.8")
	o.TrustOnFirstUse = true
	res, err := Bump(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recovered) != files {
		t.Errorf("recovered %v", res.Recovered)
	}
	requireClean(t, root)
	if _, err := os.Stat(filepath.Join(dir, JournalName)); err == nil {
		t.Error("journal left after a finished bump")
	}
	got := numstat(t, root)
	if len(got) != files {
		t.Errorf("git diff: %v", got)
	}
}
