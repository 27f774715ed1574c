package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// benchManifest is a ~1 MiB provider manifest: CRDs with controller-gen
// style schemas and varying names (internal/testkit/manifestgen), the same input
// scripts/bench.sh gives GNU gzip.
func benchManifest() []byte {
	return manifestgen.Generate(manifestgen.Spec{
		Provider: "infrastructure-proxmox", Prefix: "capmox", Group: "infrastructure.cluster.x-k8s.io",
		Kinds:    []string{"ProxmoxCluster", "ProxmoxClusterTemplate", "ProxmoxMachine", "ProxmoxMachineTemplate"},
		Versions: []string{"v1alpha1", "v1alpha2"}, Image: "ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7",
		Size: 1 << 20, Seed: 1,
	})
}

// BenchmarkCompress is the blob build: blob.CompressBytes of a 1 MiB
// manifest. It reports MB/s of input and the output size; with GNU gzip on
// PATH it also reports GNU `gzip -9 -n`'s output size on the same input.
func BenchmarkCompress(b *testing.B) {
	data := benchManifest()
	var out []byte
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = blob.CompressBytes(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out)), "out-bytes")
	b.ReportMetric(float64(len(data))/float64(len(out)), "ratio")
	if gz, err := exec.LookPath("gzip"); err == nil {
		cmd := exec.Command(gz, "-9", "-n", "-c")
		cmd.Stdin = bytes.NewReader(data)
		if gnu, err := cmd.Output(); err == nil {
			b.ReportMetric(float64(len(gnu)), "gnu-out-bytes")
		}
	}
}

// BenchmarkBuild is a whole package build of a 1 MiB components file from
// a file: source (no network): fetch and verify, compress, compare with
// the existing outputs, write atomically. Every other iteration flips one
// byte of the pinned upstream file so both the write and the no-op paths
// are measured.
func BenchmarkBuild(b *testing.B) {
	root := b.TempDir()
	data := benchManifest()
	variants := [2][]byte{data, append(bytes.Clone(data), "# v2\n"...)}
	pins := [2]string{}
	for i, v := range variants {
		up := filepath.Join(root, "upstream", fmt.Sprint(i))
		os.MkdirAll(up, 0o755)
		os.WriteFile(filepath.Join(up, "infrastructure-components.yaml"), v, 0o644)
		pins[i] = fmt.Sprintf("providers:\n- kind: InfrastructureProvider\n  name: proxmox\n  version: v0.7.7\n  release: v0.7.7-infraprovider-proxmox\n  sources:\n  - url: file://%s/infrastructure-components.yaml\n    sha256: %s\n    to: files/infrastructure-components.yaml\n  blob: files/components.gz\n",
			filepath.ToSlash(up), shaHex(v))
	}
	dir := filepath.Join(root, "pkg")
	os.MkdirAll(dir, 0o755)
	f := &fetch.Fetcher{}
	b.SetBytes(int64(len(data)))
	i := 0
	for b.Loop() {
		os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(pins[i%2]), 0o644)
		if _, err := Build(context.Background(), dir, Options{Fetcher: f}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
