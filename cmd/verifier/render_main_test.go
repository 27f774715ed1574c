package main

import (
	"os"
	"testing"

	"github.com/pinseal/pinseal/pkg/render"
)

// TestMain lets this test binary be the bounded chart-render child (see
// render.MaybeRunChild), keeps the tests' CRD verdict caches out of the
// user's cache directory, and removes the binaries the tests built.
func TestMain(m *testing.M) {
	render.MaybeRunChild()
	cache, err := os.MkdirTemp("", "verifier-test-cache-")
	if err == nil {
		os.Setenv("XDG_CACHE_HOME", cache)
	}
	code := m.Run()
	removeBuildDir()
	if cache != "" {
		os.RemoveAll(cache)
	}
	os.Exit(code)
}
