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
	doc := []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.x.io\n# ...\n")
	sum := sha256.Sum256(doc)

	first := crdcache.Open(dir, "build-1")
	first.Remember(sum, check.CRDFacts{APIVersion: "apiextensions.k8s.io/v1", Name: "widgets.x.io", Line: 3, Decoded: true, Kinds: []string{"x.io/v1/Widget"}})
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
