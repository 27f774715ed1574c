package build

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
)

// TestExamplesAreBuilt rebuilds every example package (examples/packages)
// offline, from a cache filled with examples/upstream — the cache is
// content-addressed, so the pins' digests find the files — and checks that
// the committed outputs are exactly what the build produces: the example
// tree stays valid as committed.
func TestExamplesAreBuilt(t *testing.T) {
	repo := filepath.Dir(fixture.TestdataDir())
	examples := filepath.Join(repo, "examples")
	cache := t.TempDir()
	f := &fetch.Fetcher{CacheDir: cache, Offline: true}
	err := filepath.WalkDir(filepath.Join(examples, "upstream"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := f.CachePath(shaHex(b))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	pkgs, _ := filepath.Glob(filepath.Join(examples, "packages", "*", pin.FileName))
	if len(pkgs) < 2 {
		t.Fatalf("found %d example packages, want the core and the infrastructure provider", len(pkgs))
	}
	for _, pf := range pkgs {
		src := filepath.Dir(pf)
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := t.TempDir()
			if err := fixture.CopyDir(src, dir); err != nil {
				t.Fatal(err)
			}
			res, err := Build(context.Background(), dir, Options{Fetcher: f})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Files {
				if r.Status != Unchanged {
					t.Errorf("%s: %s by a rebuild; run scripts/demo.sh or `builder build` on the example and commit the result", r.Path, r.Status)
				}
			}
		})
	}
}
