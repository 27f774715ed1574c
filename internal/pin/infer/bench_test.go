package infer

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadDir reads the pins of a real-shaped package: a pin.yaml of
// one provider and the Makefile the package is built with. The verifier
// does it once per package.
func BenchmarkLoadDir(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{
		"pin.yaml": `providers:
  - kind: AddonProvider
    name: synth0005
    version: v0.17.5
    release: v0.17.5-addon-synth0005
    sources:
      - url: https://github.com/pinseal-synthetic/cluster-api-provider-synth0005/releases/download/v0.17.5/addon-components.yaml
        sha256: eda0dde9a08cd41a7af3d39f49911caf402d3e108a129903ccd06f0de6365dc0
        to: files/addon-components.yaml
      - url: https://github.com/pinseal-synthetic/cluster-api-provider-synth0005/releases/download/v0.17.5/metadata.yaml
        sha256: 0f42c0f05ce1a3a79c94f635eec44421bc63b216b4779029b544fcfd327f6732
        to: files/metadata.yaml
    blob: files/components.gz
`,
		"Makefile": `export NAME=capi-providers-addon-synth0005
export NAMESPACE=cozy-cluster-api

SYNTH0005_UPSTREAM_VERSION = v0.17.5

include ../../../scripts/package.mk

update:
	rm -rf files
	mkdir -p files
	curl -sSL -o files/addon-components.yaml https://github.com/pinseal-synthetic/cluster-api-provider-synth0005/releases/download/$(SYNTH0005_UPSTREAM_VERSION)/addon-components.yaml
	curl -sSL -o files/metadata.yaml https://github.com/pinseal-synthetic/cluster-api-provider-synth0005/releases/download/$(SYNTH0005_UPSTREAM_VERSION)/metadata.yaml
	gzip -9 -n -c files/addon-components.yaml > files/components.gz
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		set, err := LoadDir(dir)
		if err != nil || set.File == nil || set.Namespace != "cozy-cluster-api" {
			b.Fatal(set, err)
		}
	}
}
