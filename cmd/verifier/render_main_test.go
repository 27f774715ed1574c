package main

import (
	"os"
	"testing"

	"github.com/pinseal/pinseal/pkg/load"
)

// TestMain lets this test binary be the bounded chart-render child (see
// load.MaybeRunRenderChild), and removes the binaries the tests built.
func TestMain(m *testing.M) {
	load.MaybeRunRenderChild()
	code := m.Run()
	removeBuildDir()
	os.Exit(code)
}
