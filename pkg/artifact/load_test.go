package artifact

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

func writePackage(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const testPin = `providers:
- kind: InfrastructureProvider
  name: proxmox
  version: v0.7.7
  release: v0.7.7-infraprovider-proxmox
  sources:
  - url: https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7/infrastructure-components.yaml
    sha256: 0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a
    to: files/infrastructure-components.yaml
  - url: https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7/metadata.yaml
    sha256: 0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b
    to: files/metadata.yaml
  patches:
  - patches/0001.diff
  blob: files/components.gz
`

func TestLoadReleases(t *testing.T) {
	blob := string(gz(t, testYAML))
	dir := writePackage(t, map[string]string{
		"pin.yaml":                             testPin,
		"files/infrastructure-components.yaml": testYAML,
		"files/metadata.yaml":                  testMetadata,
		"files/components.gz":                  blob,
		"patches/0001.diff":                    "--- a\n+++ b\n",
	})
	rels, err := LoadReleases(dir, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) != 1 {
		t.Fatalf("%d releases", len(rels))
	}
	r := rels[0]
	if r.Type != "infrastructure" || r.Contract != "v1beta1" || r.Release != "v0.7.7-infraprovider-proxmox" || r.BuilderVersion != "v0.1.0" {
		t.Fatalf("release %+v", r)
	}
	if !bytes.Equal(r.Blob, []byte(blob)) || string(r.YAML) != testYAML || string(r.Metadata) != testMetadata || len(r.Pins) != 2 {
		t.Fatal("files not read as they are")
	}
	if len(r.Patches) != 1 || r.Patches[0].Path != "patches/0001.diff" || len(r.Patches[0].SHA256) != 64 {
		t.Fatalf("patches %+v", r.Patches)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadReleasesErrors(t *testing.T) {
	blob := string(gz(t, testYAML))
	base := map[string]string{
		"pin.yaml":                             testPin,
		"files/infrastructure-components.yaml": testYAML,
		"files/metadata.yaml":                  testMetadata,
		"files/components.gz":                  blob,
		"patches/0001.diff":                    "x",
	}
	tests := []struct {
		name   string
		change func(map[string]string)
		want   string
	}{
		{"no pin", func(m map[string]string) { delete(m, "pin.yaml") }, "no pin.yaml"},
		{"no blob", func(m map[string]string) { delete(m, "files/components.gz") }, "run builder build first"},
		{"no series", func(m map[string]string) {
			m["files/metadata.yaml"] = "releaseSeries:\n- major: 0\n  minor: 6\n  contract: v1beta1\n"
		}, "no releaseSeries entry for 0.7 (has: 0.6)"},
		{"bad pin", func(m map[string]string) { m["pin.yaml"] = "providers: [{kind: X}]\n" }, "pin.yaml"},
		// What verifier verify flags, builder push refuses (one parser).
		{"duplicate key in metadata", func(m map[string]string) {
			m["files/metadata.yaml"] = testMetadata + "releaseSeries: []\n"
		}, "files/metadata.yaml: not clusterctl metadata: metadata has duplicate key \"releaseSeries\""},
		{"metadata of another kind", func(m map[string]string) {
			m["files/metadata.yaml"] = strings.Replace(testMetadata, "kind: Metadata", "kind: Other", 1)
		}, "metadata kind is \"Other\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			tt.change(files)
			_, err := LoadReleases(writePackage(t, files), "v0.1.0")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("LoadReleases = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestHashPatches(t *testing.T) {
	files := map[string]string{"patches/1.diff": "one", "patches/2.diff": "two"}
	read := func(rel string) ([]byte, error) {
		s, ok := files[rel]
		if !ok {
			return nil, fmt.Errorf("%s does not exist", rel)
		}
		return []byte(s), nil
	}
	got, err := HashPatches([]string{"patches/2.diff", "patches/1.diff"}, read)
	want := []Patch{
		{Path: "patches/2.diff", SHA256: "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3"},
		{Path: "patches/1.diff", SHA256: "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("HashPatches = %+v, %v; want %+v", got, err, want)
	}
	if _, err := HashPatches([]string{"patches/1.diff", "patches/absent.diff"}, read); err == nil || !strings.Contains(err.Error(), "patches/absent.diff does not exist") {
		t.Fatalf("a missing patch: %v", err)
	}
}

func TestReleaseComplete(t *testing.T) {
	r := Release{ArtifactConfig: model.ArtifactConfig{Kind: "InfrastructureProvider", Version: "v0.7.1"}, Metadata: []byte(testMetadata)}
	if err := r.Complete("files/metadata.yaml"); err != nil || r.Type != "infrastructure" || r.Contract != "v1beta1" {
		t.Fatalf("Complete: type %q contract %q, %v", r.Type, r.Contract, err)
	}
	bad := Release{ArtifactConfig: model.ArtifactConfig{Kind: "Provider", Version: "v0.7.1"}, Metadata: []byte(testMetadata)}
	if err := bad.Complete("files/metadata.yaml"); err == nil || !strings.Contains(err.Error(), `kind "Provider" is not a cluster-api-operator provider kind`) {
		t.Fatalf("unknown kind: %v", err)
	}
	old := Release{ArtifactConfig: model.ArtifactConfig{Kind: "InfrastructureProvider", Version: "v0.5.0"}, Metadata: []byte(testMetadata)}
	if err := old.Complete("files/m.yaml"); err == nil || !strings.HasPrefix(err.Error(), "files/m.yaml: ") || old.Contract != "" {
		t.Fatalf("version outside the series: %v (contract %q)", err, old.Contract)
	}
}
