package crdcache_test

import (
	"crypto/sha256"
	"fmt"
	"os"

	"github.com/pinseal/pinseal/internal/app/crdcache"
	"github.com/pinseal/pinseal/pkg/check"
)

// A run remembers what it judged and saves it; the next run of the same
// build recalls it.
func Example() {
	dir, _ := os.MkdirTemp("", "crdcache")
	defer os.RemoveAll(dir)
	sum := sha256.Sum256([]byte(`{"kind":"CustomResourceDefinition"}`))

	first := crdcache.Open(dir, "build-1")
	first.Remember(sum, check.CRDFacts{Kinds: []string{"x.io/v1/Widget"}, Judged: true})
	if err := first.Save(); err != nil {
		fmt.Println(err)
	}

	f, ok := crdcache.Open(dir, "build-1").Recall(sum)
	fmt.Println(ok, f.Kinds)
	_, ok = crdcache.Open(dir, "build-2").Recall(sum)
	fmt.Println(ok)
	// Output:
	// true [x.io/v1/Widget]
	// false
}
