package release

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/pin"
)

// TestPinsOfReusesTheLoadedPins: push takes the pin set the loader read
// for the package at dir (the same set, not a second read); a directory
// the loader found no package at is read for its pins.
func TestPinsOfReusesTheLoadedPins(t *testing.T) {
	root := fixture.CleanCopy(t)
	dir := filepath.Join(root, "packages/system/capi-providers-core")
	tree, _, err := checkTree(context.Background(), dir, Options{})
	if err != nil || len(tree.Packages) == 0 {
		t.Fatalf("load %s: %v", dir, err)
	}
	set, err := pinsOf(dir, tree)
	if err != nil || set == nil || set.Source != pin.SourcePinFile {
		t.Fatalf("pins of %s: %+v, %v", dir, set, err)
	}
	if set != tree.Packages[0].Pins {
		t.Fatalf("pins of %s were read again instead of taken from the loaded tree", dir)
	}

	pinOnly := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, pin.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pinOnly, pin.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	tree, _, err = checkTree(context.Background(), pinOnly, Options{})
	if err != nil || len(tree.Packages) != 0 {
		t.Fatalf("pin-only dir: %d packages, %v", len(tree.Packages), err)
	}
	set, err = pinsOf(pinOnly, tree)
	if err != nil || set == nil || set.Source != pin.SourcePinFile || set.File == nil {
		t.Fatalf("pins of a pin-only dir: %+v, %v", set, err)
	}
}
