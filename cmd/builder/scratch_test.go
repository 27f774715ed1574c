package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

func TestScratchTurtles(t *testing.T) {
	t.Setenv("PINSEAL_MIRRORS", "")
	root := t.TempDir()
	if err := fixture.WriteTurtles(root); err != nil {
		t.Fatal(err)
	}
	vals := filepath.Join(root, fixture.TurtlesProvidersChart, "values.yaml")
	b, _ := os.ReadFile(vals)
	s := strings.Replace(string(b), "  bootstrapRKE2:\n    enabled: true\n", "  bootstrapRKE2:\n    enabled: true\n    version: v0.25.0\n", 1)
	os.WriteFile(vals, []byte(s), 0o644)
	api := releaseapi.New(t)
	api.Add("rancher/cluster-api-provider-rke2",
		releaseapi.Release{Tag: "v0.26.0", Files: []releaseapi.File{{Name: "bootstrap-components.yaml", Data: []byte("kind: Namespace\napiVersion: v1\nmetadata:\n  name: x\n")}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.25=v1beta2", "0.26=v1beta2")}}},
		releaseapi.Release{Tag: "v0.25.0", Files: []releaseapi.File{{Name: "bootstrap-components.yaml", Data: []byte("kind: Namespace\napiVersion: v1\nmetadata:\n  name: x\n")}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.25=v1beta2")}}})
	api.Add("rancher/cluster-api", releaseapi.Release{Tag: "v1.13.4", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("1.13=v1beta2")}}})
	for _, args := range [][]string{
		{"outdated", filepath.Join(root, fixture.TurtlesProvidersChart), "--api-url", api.URL(), "--allow-host", api.ObjectsHost()},
		{"outdated", filepath.Join(root, fixture.TurtlesChart), "--api-url", api.URL(), "--allow-host", api.ObjectsHost()},
		{"plan", root, "--api-url", api.URL(), "--allow-host", api.ObjectsHost()},
		{"vendor", filepath.Join(root, fixture.TurtlesProvidersChart), "--provider", "BootstrapProvider/rke2", "--api-url", api.URL(), "--mirror", api.Mirror(), "--allow-host", api.ObjectsHost(), "--retries", "0"},
		{"bump", filepath.Join(root, fixture.TurtlesProvidersChart), "--provider", "BootstrapProvider/rke2", "--to", "v0.26.0", "--api-url", api.URL(), "--mirror", api.Mirror(), "--allow-host", api.ObjectsHost(), "--retries", "0"},
	} {
		out, errs, err := runBuildTestCmd(t, args...)
		t.Logf("== %v\nerr=%v\n%s\n%s", args[0], err, out, errs)
	}
}
