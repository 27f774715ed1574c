package load

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

// memCache is a Cache in memory that counts what it answered.
type memCache struct {
	mu                 sync.Mutex
	m                  map[[32]byte][]byte
	hits, misses, puts int
}

func newMemCache() *memCache { return &memCache{m: map[[32]byte][]byte{}} }

func (c *memCache) Get(k [32]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[k]
	if ok {
		c.hits++
	} else {
		c.misses++
	}
	return b, ok
}

func (c *memCache) Put(k [32]byte, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = b
	c.puts++
}

// cacheTrees are the fixture trees and a bench tree, by name.
func cacheTrees(t *testing.T) map[string]string {
	t.Helper()
	trees := map[string]string{"clean": fixture.Root(), "dirty": fixture.DirtyRoot()}
	ex, err := filepath.Abs("../../examples/packages")
	if err != nil {
		t.Fatal(err)
	}
	trees["examples"] = ex
	trees["monorepo"], _ = fixture.Monorepo(t)
	for name, write := range map[string]func(string) error{"as-it-stands": fixture.AsItStands, "turtles": fixture.WriteTurtles} {
		dir := filepath.Join(t.TempDir(), name)
		if err := write(dir); err != nil {
			t.Fatal(err)
		}
		trees[name] = dir
	}
	for _, shape := range []string{"cozystack", "monorepo"} {
		gen, err := gentree.Generate(filepath.Join(t.TempDir(), shape), gentree.Options{Shape: gentree.Shape(shape), Packages: 8, Others: 12, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		trees["bench-"+shape] = gen.Root
	}
	return trees
}

// TestCacheRoundTrip: every package of every fixture tree and of bench
// trees loads from the cache (all of them, nothing loaded again) exactly
// as it loaded from disk: equal field by field, and every pointer shared
// as it was (a layout's ConfigMap is the package's ConfigMap).
func TestCacheRoundTrip(t *testing.T) {
	for name, root := range cacheTrees(t) {
		t.Run(name, func(t *testing.T) {
			cache := newMemCache()
			opts := Options{Render: testRenderLimits, Cache: cache}
			cold, err := Tree(context.Background(), root, opts)
			if err != nil {
				t.Fatal(err)
			}
			if cache.puts == 0 || len(cold.Packages) == 0 {
				t.Fatalf("%d entries kept for %d packages", cache.puts, len(cold.Packages))
			}
			cache.misses = 0
			warm, err := Tree(context.Background(), root, opts)
			if err != nil {
				t.Fatal(err)
			}
			if cache.hits != cache.puts || cache.misses != 0 {
				t.Errorf("%d of %d entries recalled, %d directories not found", cache.hits, cache.puts, cache.misses)
			}
			if !reflect.DeepEqual(cold, warm) {
				for i := range cold.Packages {
					if i < len(warm.Packages) && !reflect.DeepEqual(cold.Packages[i], warm.Packages[i]) {
						t.Errorf("package %s differs:\n%+v\n%+v", cold.Packages[i].Path, cold.Packages[i], warm.Packages[i])
					}
				}
				t.Fatalf("the tree loaded from the cache is not the tree loaded from disk")
			}
			if err := sameSharing(reflect.ValueOf(cold), reflect.ValueOf(warm), map[uintptr]uintptr{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// sameSharing walks a and b (deeply equal) together and fails when a
// pointer of a that points where another did does not do so in b.
func sameSharing(a, b reflect.Value, seen map[uintptr]uintptr) error {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return nil
		}
		pa, pb := a.Pointer(), b.Pointer()
		if q, ok := seen[pa]; ok {
			if q != pb {
				return fmt.Errorf("a shared %s is not shared after the cache", a.Type())
			}
			return nil
		}
		seen[pa] = pb
		return sameSharing(a.Elem(), b.Elem(), seen)
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.Len() > 0 && a.Type().Elem().Kind() == reflect.Struct {
			for i := range a.Len() {
				pa, pb := a.Index(i).Addr().Pointer(), b.Index(i).Addr().Pointer()
				if q, ok := seen[pa]; ok && q != pb {
					return fmt.Errorf("a pointer into a []%s does not point into it after the cache", a.Type().Elem())
				}
				seen[pa] = pb
			}
		}
		for i := range a.Len() {
			if err := sameSharing(a.Index(i), b.Index(i), seen); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if err := sameSharing(a.Field(i), b.Field(i), seen); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, k := range a.MapKeys() {
			if err := sameSharing(a.MapIndex(k), b.MapIndex(k), seen); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if !a.IsNil() {
			return sameSharing(a.Elem(), b.Elem(), seen)
		}
	}
	return nil
}
