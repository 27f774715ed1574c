package pin

import "testing"

// benchPin is a pin file of the shape real provider packages carry: one
// provider, two sources, a blob.
const benchPin = `providers:
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
`

// BenchmarkParse parses and validates a real-shaped pin file: the
// verifier does it once per package.
func BenchmarkParse(b *testing.B) {
	data := []byte(benchPin)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Parse(data, "pin.yaml")
		if err != nil || len(f.Providers) != 1 {
			b.Fatal(f, err)
		}
	}
}
