package relocate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/killtest"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/pin"
)

// relocateJournaled relocates dir as `builder relocate` does: committed
// with bump.Commit, under the bump journal.
func relocateJournaled(dir string) (*Result, error) {
	return Package(context.Background(), dir, Options{Maps: pin.Relocations{capiMap}, Commit: func(d string, files []File) error {
		ws := make([]bump.Write, len(files))
		for i, f := range files {
			ws[i] = bump.Write{Path: f.Path, Data: f.Data}
		}
		return bump.Commit(d, ws)
	}})
}

// TestKilledRelocationHelper is the child process of TestKilledRelocation:
// it relocates the package and stops for good after the n-th rename.
func TestKilledRelocationHelper(t *testing.T) {
	dir := os.Getenv("PINSEAL_RELOCATE_KILL_DIR")
	if dir == "" {
		t.Skip("helper process for TestKilledRelocation")
	}
	killtest.StopAtRename()
	if _, err := relocateJournaled(dir); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the relocation finished: it was not stopped between renames")
}

// TestKilledRelocation SIGKILLs `builder relocate` between two renames of
// its commit: the journal lets bump.Recover (which builder build, bump and
// relocate run first) bring every file back byte for byte, and the
// relocation run again completes, green.
func TestKilledRelocation(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	root := fixture.CleanCopy(t)
	dir := sysPackage(root, "capi-providers-core")
	before := snapshot(t, root)
	const files = 3 // pin.yaml, YAML, blob
	for _, n := range []int{1, 2} {
		killtest.KillAtRename(t, "TestKilledRelocationHelper", n, "PINSEAL_RELOCATE_KILL_DIR="+dir)
		mid := snapshot(t, root)
		if _, ok := mid[filepath.Join(dir, bump.JournalName)]; !ok {
			t.Fatal("no journal left by the killed relocation")
		}
		if changed := killtest.ChangedFiles(before, mid); changed != n {
			t.Errorf("%d files hold new content after %d renames", changed, n)
		}
		restored, err := bump.Recover(dir)
		if err != nil || len(restored) != files {
			t.Fatalf("Recover: %v, restored %v", err, restored)
		}
		if after := snapshot(t, root); !maps2Equal(before, after) {
			t.Fatal("Recover did not bring the tree back byte for byte")
		}
	}
	res, err := relocateJournaled(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != files {
		t.Errorf("the relocation run again wrote %v", res.Files)
	}
	if errs := errorsOf(t, root); len(errs) != 0 {
		t.Errorf("after the relocation: %v", errs)
	}
	after := snapshot(t, root)
	if _, ok := after[filepath.Join(dir, bump.JournalName)]; ok {
		t.Error("journal left after a finished relocation")
	}
	if changed := killtest.ChangedFiles(before, after); changed != files {
		t.Errorf("%d files changed by the relocation, want %d", changed, files)
	}
}
