package check_test

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/check"
)

// The catalog names every check: its stable ID, default severity, what it
// reads besides the tree and what an error finding does to a push.
func ExampleLookup() {
	for _, id := range []string{check.BlobYAML, check.BlobHeader, check.Signature} {
		c, _ := check.Lookup(id)
		fmt.Printf("%s: %s, needs %s, refuses a push: %v\n", c.ID, c.Severity, c.Needs(), c.Push == check.PushRefuses)
	}
	// Output:
	// blob-yaml: error, needs tree, refuses a push: true
	// blob-header: error, needs tree, refuses a push: false
	// signature: error, needs registry, refuses a push: false
}
