package build

import (
	"os"
	"path/filepath"
	"testing"
)

// escapesRoot tells os.Root's "leads outside" refusal from other errors.
func TestEscapesRoot(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "p.diff"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "p.diff"), filepath.Join(dir, "out.diff")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	if err := os.Symlink("../"+filepath.Base(outside)+"/p.diff", filepath.Join(dir, "rel.diff")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"out.diff", true},
		{"rel.diff", true},
		{"sub", false},
		{"missing.diff", false},
	} {
		_, err := root.ReadFile(tc.name)
		if err == nil {
			t.Fatalf("%s: read, want an error", tc.name)
		}
		if got := escapesRoot(root, err); got != tc.want {
			t.Errorf("%s: escapesRoot(%v) = %v, want %v", tc.name, err, got, tc.want)
		}
	}
	if escapesRoot(root, nil) {
		t.Error("escapesRoot(nil) = true")
	}
}
