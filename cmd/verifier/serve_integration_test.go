//go:build integration

package main

import (
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
)

// TestIntegrationServeVerifyRef is TestServeVerifyRefEndToEnd against
// Debian's docker-registry on 127.0.0.1: `verifier serve`'s engine verifies
// signed releases in a real registry through POST /v1/verify {"ref"}.
func TestIntegrationServeVerifyRef(t *testing.T) {
	reg := testpeer.StartRegistry(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	prefix, err := artifact.ParsePrefix(reg.Host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	serveVerifyRefEndToEnd(t, prefix)
}
