package load

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

// keyTree is a small bench tree of its own and the path of one file of its
// first package that the load hashes into the package's Files.
func keyTree(t *testing.T) (root, pkg, file string) {
	t.Helper()
	gen, err := gentree.Generate(filepath.Join(t.TempDir(), "bench"), gentree.Options{Shape: gentree.Cozystack, Packages: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	pkgs, _ := filepath.Glob(filepath.Join(gen.Root, "packages", "system", "*"))
	if len(pkgs) == 0 {
		t.Fatal("no package generated")
	}
	return gen.Root, pkgs[0], filepath.Join(pkgs[0], "files", "metadata.yaml")
}

// keyOf is the cache key of the package at dir in the tree at root.
func keyOf(t *testing.T, root, dir string, opts Options) ([32]byte, bool) {
	t.Helper()
	real, fsys, err := openDir(root, "tree", "")
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	l, done := newScanner(real, fsys, opts.withDefaults(), nil)
	defer done()
	rel, _ := filepath.Rel(real, dir)
	k, ok := l.cacheKey(candidate{dir: dir, rel: filepath.ToSlash(rel), chart: true})
	return k.sum, ok
}

// rewrite changes the file at fp with change and gives it back the
// modification time it had, as a tool that keeps times would.
func rewrite(t *testing.T, fp string, change func([]byte) []byte) {
	t.Helper()
	fi, err := os.Stat(fp)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fp, change(b), fi.Mode()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(fp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// TestCacheKeyCovers: the key of a package is the same twice over, and
// changes with every change to what its load reads: a byte changed in
// place (same size, same modification time), a file shorter, a mode, a
// new file, an empty directory, a link's target.
func TestCacheKeyCovers(t *testing.T) {
	flip := func(b []byte) []byte { b[len(b)/2] ^= 1; return b }
	for name, change := range map[string]func(t *testing.T, pkg, file string){
		"byte in place": func(t *testing.T, _, file string) { rewrite(t, file, flip) },
		"shorter":       func(t *testing.T, _, file string) { rewrite(t, file, func(b []byte) []byte { return b[:len(b)-1] }) },
		"mode": func(t *testing.T, _, file string) {
			if err := os.Chmod(file, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"new file": func(t *testing.T, pkg, _ string) {
			if err := os.WriteFile(filepath.Join(pkg, "templates", "extra.yaml"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"new directory": func(t *testing.T, pkg, _ string) {
			if err := os.Mkdir(filepath.Join(pkg, "charts"), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"link target": func(t *testing.T, pkg, _ string) {
			link := filepath.Join(pkg, "files", "link.yaml")
			if err := os.Symlink("metadata.yaml", link); err != nil {
				t.Fatal(err)
			}
			before, _ := keyOf(t, filepath.Dir(filepath.Dir(filepath.Dir(pkg))), pkg, Options{})
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("ipam-components.yaml", link); err != nil {
				t.Fatal(err)
			}
			if after, _ := keyOf(t, filepath.Dir(filepath.Dir(filepath.Dir(pkg))), pkg, Options{}); after == before {
				t.Error("the key did not change with the link's target")
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			root, pkg, file := keyTree(t)
			before, ok := keyOf(t, root, pkg, Options{})
			if again, _ := keyOf(t, root, pkg, Options{}); !ok || again != before {
				t.Fatalf("the key is not the same twice (keyed: %v)", ok)
			}
			change(t, pkg, file)
			if after, _ := keyOf(t, root, pkg, Options{}); after == before {
				t.Fatal("the key did not change")
			}
		})
	}
}

// missCache is a memCache that calls onMiss (once) on a key not found:
// between the key and the load.
type missCache struct {
	*memCache
	onMiss func()
}

func (c *missCache) Get(k [32]byte) ([]byte, bool) {
	b, ok := c.memCache.Get(k)
	if !ok && c.onMiss != nil {
		c.onMiss()
		c.onMiss = nil
	}
	return b, ok
}

// TestCacheChangedInPlace: a file changed in place, same size and same
// modification time, is loaded again (its bytes are what the key holds,
// whatever file the buffer they were read into held before), and the load
// sees its new bytes.
func TestCacheChangedInPlace(t *testing.T) {
	root, pkg, file := keyTree(t)
	cache := newMemCache()
	opts := Options{Render: testRenderLimits, Cache: cache, Workers: 1} // one buffer for every file
	cold, err := Tree(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cache.puts != len(cold.Packages) || cache.puts < 3 {
		t.Fatalf("%d entries kept for %d packages", cache.puts, len(cold.Packages))
	}
	rewrite(t, file, func(b []byte) []byte { b[len(b)-2] ^= 1; return b })
	new, _ := os.ReadFile(file)
	cache.hits, cache.misses = 0, 0
	warm, err := Tree(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cold.Packages); cache.misses != 1 || cache.hits != n-1 {
		t.Fatalf("%d recalled and %d loaded again, want %d and 1", cache.hits, cache.misses, n-1)
	}
	rel, _ := filepath.Rel(pkg, file)
	for _, p := range warm.Packages {
		if filepath.Join(root, p.Path) != pkg {
			continue
		}
		f := p.Files[filepath.ToSlash(rel)]
		if f == nil || f.SHA256 != sha256.Sum256(new) {
			t.Fatalf("the package loaded again does not hold the new bytes of %s: %+v", rel, f)
		}
		return
	}
	t.Fatal("the changed package is not in the tree")
}

// TestCacheChangedWhileLoading: a file changed after its package was
// keyed and before it loaded is not kept under that key: the next load
// of the unchanged tree loads that package again, and no other.
func TestCacheChangedWhileLoading(t *testing.T) {
	root, _, file := keyTree(t)
	cache := &missCache{memCache: newMemCache()}
	cache.onMiss = func() {
		rewrite(t, file, func(b []byte) []byte { return append(b, "# changed\n"...) })
		// A write a tick later than the key's read, whatever the clock.
		later := time.Now().Add(time.Second)
		if err := os.Chtimes(file, later, later); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Render: testRenderLimits, Cache: cache, Workers: 1}
	first, err := Tree(context.Background(), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cache.puts != len(first.Packages)-1 {
		t.Fatalf("%d of %d packages kept, want all but the one changed while it loaded", cache.puts, len(first.Packages))
	}
	cache.hits, cache.misses = 0, 0
	if _, err := Tree(context.Background(), root, opts); err != nil {
		t.Fatal(err)
	}
	if cache.misses != 1 || cache.hits != len(first.Packages)-1 {
		t.Fatalf("%d recalled and %d loaded again, want %d and 1", cache.hits, cache.misses, len(first.Packages)-1)
	}
}
