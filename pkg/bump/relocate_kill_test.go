package bump

import (
	"context"
	"os"
	"testing"

	"github.com/pinseal/pinseal/internal/app/relocate"
	"github.com/pinseal/pinseal/pkg/pin"
)

var killRelocation = pin.Relocations{{From: "ghcr.io/example", To: "mirror.example:5000/example"}}

// relocateJournaled relocates dir as `builder relocate` does: committed
// with Commit, under the bump journal.
func relocateJournaled(dir string) (*relocate.Result, error) {
	return relocate.Package(context.Background(), dir, relocate.Options{Maps: killRelocation, Commit: func(d string, files []relocate.File) error {
		ws := make([]Write, len(files))
		for i, f := range files {
			ws[i] = Write{Path: f.Path, Data: f.Data}
		}
		return Commit(d, ws)
	}})
}

// TestKilledRelocationHelper is the child process of TestKilledRelocation:
// it relocates the package and stops for good after the n-th rename.
func TestKilledRelocationHelper(t *testing.T) {
	dir := os.Getenv("PINSEAL_RELOCATE_KILL_DIR")
	if dir == "" {
		t.Skip("helper process for TestKilledRelocation")
	}
	stopAtRename()
	if _, err := relocateJournaled(dir); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the relocation finished: it was not stopped between renames")
}

// TestKilledRelocation SIGKILLs `builder relocate` between two renames of
// its commit: the journal lets Recover (which builder build, bump and
// relocate run first) bring every file back byte for byte, and the
// relocation run again completes, green.
func TestKilledRelocation(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	u := newUpstream(t)
	root := fixtureTree(t, u)
	dir := pkgDir(root, "capi-providers-core")
	before := snapshot(t, root)
	const files = 3 // pin.yaml, YAML, blob
	for _, n := range []int{1, 2} {
		killAtRename(t, "TestKilledRelocationHelper", n, "PINSEAL_RELOCATE_KILL_DIR="+dir)
		mid := snapshot(t, root)
		if changed := changedFiles(before, mid); changed != n {
			t.Errorf("%d files hold new content after %d renames", changed, n)
		}
		restored, err := Recover(dir)
		if err != nil || len(restored) != files {
			t.Fatalf("Recover: %v, restored %v", err, restored)
		}
		requireSame(t, before, snapshot(t, root))
	}
	if _, err := relocateJournaled(dir); err != nil {
		t.Fatal(err)
	}
	requireClean(t, root)
	if got := numstat(t, root); len(got) != files {
		t.Errorf("git diff after the relocation: %v", got)
	}
}
