package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
)

// TestBuildCommandProvider: `builder build --provider` rebuilds that
// provider's blob only (kubeadm's dirty-header blob stays), and names the
// package's providers when it has no such one.
func TestBuildCommandProvider(t *testing.T) {
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, fixture.AsItStandsBootstrap)
	kubeadm, err := os.ReadFile(filepath.Join(dir, "files/components.gz"))
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runBuildTestCmd(t, "build", dir, "--offline", "--cache", t.TempDir(), "--provider", "BootstrapProvider/nope")
	if err == nil || !strings.Contains(stderr, "BootstrapProvider/kubeadm, BootstrapProvider/talos") {
		t.Fatalf("unknown provider: %v\n%s", err, stderr)
	}
	var out string
	out, stderr, err = runBuildTestCmd(t, "build", dir, "--offline", "--cache", t.TempDir(), "--provider", "BootstrapProvider/talos", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if strings.Contains(out, `"files/components.gz"`) || !strings.Contains(out, `"files/components-talos.gz"`) {
		t.Errorf("build of talos touched other files:\n%s", out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "files/components.gz")); !bytes.Equal(after, kubeadm) {
		t.Error("the build of talos changed kubeadm's blob")
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.yaml")); err == nil {
		t.Error("build wrote a pin.yaml")
	}
}
