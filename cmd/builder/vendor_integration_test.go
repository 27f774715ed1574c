//go:build integration

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestIntegrationVendorToOCICommand: builder vendor --to-oci with a key
// file and COSIGN_PASSWORD pushes the core provider's release to the
// reference the chart's registry value names, and the upstream cosign
// verifies what it signed.
func TestIntegrationVendorToOCICommand(t *testing.T) {
	reg := testpeer.StartRegistry(t)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv("PINSEAL_MIRRORS", "")
	keys := testKeys(t)
	root := t.TempDir()
	if err := fixture.WriteFetched(root); err != nil {
		t.Fatal(err)
	}
	core := fixture.FetchedProviders[0]
	host := releaseapi.New(t)
	comp, meta := fixture.FetchedRelease(core)
	host.Add(core.Repo, releaseapi.Release{Tag: core.Version, Files: []releaseapi.File{{Name: core.Asset, Data: comp}, {Name: "metadata.yaml", Data: meta}}})
	values := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(values, []byte("registry: http://"+reg.Host+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := fixture.FetchedChartDir(root, core.Chart)
	stdout, stderr, err := runBuildTestCmd(t, "vendor", dir, "--api-url", host.URL(), "--mirror", host.Mirror(), "--allow-host", host.ObjectsHost(),
		"--to-oci", reg.Host+"/capi", "--values", values, "--key", keys+".key")
	repo := reg.Host + "/capi/core-cluster-api-components"
	if err != nil || !strings.Contains(stdout, "pushed "+repo+"@sha256:") || !strings.Contains(stdout, "(tag v1.10.1), signed and attested") {
		t.Fatalf("vendor --to-oci: %v\n%s%s", err, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pin.yaml")); err != nil {
		t.Fatalf("no pin.yaml recorded: %v", err)
	}
	ref := repo + ":v1.10.1"
	cosign3 := testpeer.Cosign3(t)
	if r := testpeer.Run(t, nil, cosign3, "verify", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-http-registry", ref); r.Err != nil {
		t.Fatalf("cosign verify %s: %v", ref, r.Err)
	}
}
