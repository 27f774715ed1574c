package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/pkg/render"
)

// TestMain lets this test binary be the bounded chart-render child (see
// render.MaybeRunChild), keeps the tests' CRD verdict caches out of the
// user's cache directory, and removes the binaries the tests built.
func TestMain(m *testing.M) {
	render.MaybeRunChild()
	// The go commands the tests run keep the build cache they had (its
	// default lies under XDG_CACHE_HOME).
	if os.Getenv("GOCACHE") == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			os.Setenv("GOCACHE", filepath.Join(dir, "go-build"))
		}
	}
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
