package bump

import (
	"os"
	"testing"

	"github.com/pinseal/pinseal/pkg/load"
)

// TestMain lets this test binary be the bounded chart-render child (see
// load.MaybeRunRenderChild).
func TestMain(m *testing.M) {
	load.MaybeRunRenderChild()
	os.Exit(m.Run())
}
