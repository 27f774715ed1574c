package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/add"
	"github.com/pinseal/pinseal/internal/app/cli"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

// TestAddCommand: usage errors exit 2; --dry-run prints the release, the
// release passed over and why, and the files; --output json is the
// library's result under api/add.schema.json; an existing directory is
// refused (exit 1).
func TestAddCommand(t *testing.T) {
	root := filepath.Join(t.TempDir(), "packages")
	if err := fixture.CopyDir(filepath.Join("..", "..", "examples", "packages", "capi-providers-core"), filepath.Join(root, "capi-providers-core")); err != nil {
		t.Fatal(err)
	}
	comp, err := os.ReadFile(filepath.Join("..", "..", "examples", "upstream", "cluster-api-provider-proxmox", "v0.7.7", "infrastructure-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	host := releaseapi.New(t)
	const repo = "ionos-cloud/cluster-api-provider-proxmox"
	host.Add(repo,
		releaseapi.Release{Tag: "v0.9.1", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.9=v1beta2")}}},
		releaseapi.Release{Tag: "v0.7.7", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}}},
	)
	dir := filepath.Join(root, "capi-providers-infraprovider")
	base := []string{"add", dir, "--provider", "InfrastructureProvider/proxmox", "--github", repo, "--api-url", host.URL(), "--allow-host", host.ObjectsHost()}
	var ue cli.UsageError
	for _, args := range [][]string{
		{"add", dir, "--github", repo},
		{"add", dir, "--provider", "InfrastructureProvider/proxmox"},
		append(append([]string{}, base...), "--provider", "proxmox"),
		append(append([]string{}, base...), "--output", "yaml"),
		append(append([]string{}, base...), "--allow-breaking"),
		append(append([]string{}, base...), "--version", "latest"),
	} {
		if _, _, err := runBuildTestCmd(t, args...); !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}

	out, _, err := runBuildTestCmd(t, append(append([]string{}, base...), "--dry-run")...)
	if err != nil || !strings.Contains(out, "passed over v0.9.1 needs contract v1beta2; core v1.10.1 serves v1beta1") ||
		!strings.Contains(out, "v0.7.7-infraprovider-proxmox") || !strings.Contains(out, "shaped like capi-providers-core") ||
		!strings.Contains(out, "files/components.gz ") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("--dry-run wrote the package")
	}

	out, _, err = runBuildTestCmd(t, append(append([]string{}, base...), "--output", "json")...)
	validateJSON(t, "add.schema.json", out)
	var res add.Result
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || res.Version != "v0.7.7" || res.Pins != "pin.yaml" || len(res.PassedOver) != 1 {
		t.Fatalf("json: %v\n%s", err, out)
	}

	if _, _, err := runBuildTestCmd(t, base...); !errors.Is(err, add.ErrExists) || errors.As(err, &ue) {
		t.Fatalf("existing directory: %v", err)
	}
}
