// Package rendertest is the TestMain of the test binaries that load charts.
//
// The test binary must be able to serve as the bounded render child (see
// render.MaybeRunChild), as the builder and verifier binaries do.
package rendertest

import (
	"os"
	"testing"

	"github.com/pinseal/pinseal/pkg/render"
)

// Main runs the render child when the binary was started as one, else the
// tests.
func Main(m *testing.M) {
	render.MaybeRunChild()
	os.Exit(m.Run())
}
