package check

import (
	"fmt"
	"slices"

	"github.com/pinseal/pinseal/pkg/report"
)

// imageRelocation: every image of a release whose pin records a
// relocation (pin.yaml relocate) is moved, in the vendored YAML and in the
// blob alike: an image still under a relocated prefix is pulled from
// upstream, which an air-gapped cluster cannot reach.
func imageRelocation(in *Input) []report.Finding {
	var out []report.Finding
	for p := range pinFileProviders(in.Tree) {
		pkg, pf, pp, id := p.pkg, p.pf, p.pp, p.id
		if len(pp.Relocate) == 0 {
			continue
		}
		for _, img := range pkg.Images {
			if img.Release != pp.Release && !slices.Contains(img.Providers, id) {
				continue
			}
			to, ok := pp.Relocate.Map(img.Ref)
			if !ok {
				continue
			}
			out = append(out, newFinding(ImageRelocation, pkg, id, img.Location,
				fmt.Sprintf("image %q %s was not relocated: %s relocates it to %q (relocate: %s), so the package does not hold what its pins say", img.Ref, imageWhere(img), pf, to, pp.Relocate),
				fmt.Sprintf("`builder build %s` applies the relocation %s records to the YAML and the blob; if the images should stay upstream, remove the entry from relocate and build again", pkg.CommandPath(), pf)))
		}
	}
	return out
}
