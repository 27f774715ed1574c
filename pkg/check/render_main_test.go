package check

import (
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/rendertest"
)

// TestMain lets this test binary be the bounded chart-render child.
func TestMain(m *testing.M) { rendertest.Main(m) }
