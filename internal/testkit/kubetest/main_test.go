package kubetest

import (
	"os"
	"testing"

	"github.com/pinseal/pinseal/pkg/render"
)

// TestMain lets this test binary be the bounded chart-render child (see
// render.MaybeRunChild): without it every chart loads as a package-load
// problem, with no providers and no ConfigMaps.
func TestMain(m *testing.M) {
	render.MaybeRunChild()
	os.Exit(m.Run())
}
