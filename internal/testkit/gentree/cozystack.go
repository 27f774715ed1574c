package gentree

import "math"

// Cozystack packages are Cozystack's four CAPI provider packages as
// measured, repeated: package i is shaped as measured[i%4] (the core
// first, so one package in four has the core's size, the one whose
// release lies nearest the release-size warning line), its YAML that
// package's size times Options.Size/1 MiB (0.97–1.00 of it, so no two
// packages are the same size), the raw YAML shipped beside its blob
// under the .helmignore all four have (a glob that matches nothing), the
// bootstrap package's second (talos) provider, and patches/ and images/
// where the measured package has them. Every package's bytes are its
// own (its seed and index).
const Cozystack Shape = "cozystack"

// Measured is where the Cozystack shape's numbers come from.
const Measured = "github.com/cozystack/cozystack packages/system/capi-providers-* at commit 3c780acd"

// measuredPackage is one of Cozystack's provider packages as measured.
type measuredPackage struct {
	name                   string
	yaml, blob             int // files/<type>-components.yaml and files/components.gz, bytes
	secondYAML, secondBlob int // the talos provider's, 0 for none
	patches, images        bool
}

// measured are the four packages at Measured (wc -c of each file), in
// the order of the generator's provider kinds (core, then infrastructure,
// bootstrap, control plane), so the first four packages are each the
// measured package of its kind.
var measured = []measuredPackage{
	{name: "capi-providers-core", yaml: 853440, blob: 88455},
	{name: "capi-providers-infraprovider", yaml: 731570, blob: 71825},
	{name: "capi-providers-bootstrap", yaml: 484478, blob: 62615, secondYAML: 24655, secondBlob: 3907, patches: true},
	{name: "capi-providers-cpprovider", yaml: 1098819, blob: 126108, images: true},
}

// measuredHelmignore is the .helmignore of all four.
const measuredHelmignore = "files/.*-components.yaml\n"

// cozystackSpec shapes package i as measured[i%4].
func cozystackSpec(s *spec, opts Options) realSpec {
	i := s.index
	m := measured[i%len(measured)]
	r := realSpec{on: true, second: m.secondYAML > 0, images: m.patches || m.images, helmignore: measuredHelmignore,
		indent: i%2 == 1, licensed: i%2 == 0}
	u := math.Mod(float64(i)*0.6180339887498949, 1)
	s.size = int64(float64(m.yaml) * (0.97 + 0.03*u) * float64(opts.Size) / (1 << 20))
	return r
}
