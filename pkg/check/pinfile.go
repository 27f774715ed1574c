package check

import (
	"iter"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// pinEntry is one provider entry of a package's pin.yaml.
type pinEntry struct {
	pkg *model.Package
	pf  string // the pin file as findings name it (pinFile)
	pp  pin.Provider
	id  string // Kind/name
}

// pinFileProviders yields the provider entries of every package's
// pin.yaml, in package and file order; packages pinned by Makefile
// variables or not at all yield none.
func pinFileProviders(t *model.Tree) iter.Seq[pinEntry] {
	return func(yield func(pinEntry) bool) {
		for _, pkg := range t.Packages {
			if pkg.Pins == nil || pkg.Pins.File == nil {
				continue
			}
			pf := pinFile(pkg)
			for _, pp := range pkg.Pins.File.Providers {
				if !yield(pinEntry{pkg: pkg, pf: pf, pp: pp, id: pp.Kind + "/" + pp.Name}) {
					return
				}
			}
		}
	}
}
