package pkgcache_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/app/pkgcache"
)

func ExampleStore() {
	dir, _ := os.MkdirTemp("", "pkgcache")
	defer os.RemoveAll(dir)
	s := pkgcache.Open(filepath.Join(dir, "packages"), "build-1", nil)
	key := [32]byte{1} // load.Options.Cache gives SHA-256 keys
	s.Put(key, []byte("a loaded package"))
	got, ok := s.Get(key)
	fmt.Println(string(got), ok)
	_, ok = pkgcache.Open(filepath.Join(dir, "packages"), "build-2", nil).Get(key)
	fmt.Println(ok)
	// Output:
	// a loaded package true
	// false
}
