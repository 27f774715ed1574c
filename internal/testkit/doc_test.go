package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNotInBinaries: the binaries link nothing from internal/testkit (the
// README's layout says which folders ship and which only serve tests).
func TestNotInBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/pinseal/pinseal/cmd/builder", "github.com/pinseal/pinseal/cmd/verifier").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "/internal/testkit") {
			t.Errorf("%s is linked into the binaries; test tooling belongs in tests only", pkg)
		}
	}
}
