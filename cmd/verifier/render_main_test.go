package main

import (
	"os"
	"testing"

	"github.com/pinseal/pinseal/pkg/render"
)

// TestMain lets this test binary be the bounded chart-render child (see
// render.MaybeRunChild), and removes the binaries the tests built.
func TestMain(m *testing.M) {
	render.MaybeRunChild()
	code := m.Run()
	removeBuildDir()
	os.Exit(code)
}
