package release

import (
	"github.com/pinseal/pinseal/pkg/check"
)

// What refuses a push. `builder push` publishes one artifact per provider:
// the components YAML, its blob and the metadata, under the release name,
// with the pins as provenance. An error finding refuses a provider when
// its check's catalog entry says so (check.Check.Push: the artifact would
// be wrong); the others do not change what is pushed and are reported
// beside the result as warnings. docs/gates.md says why for each check.
//
// A check the catalog does not judge (or does not know) refuses: a new
// check is judged before it can let anything through
// (TestRefusingCoversCatalog names it).
var (
	Refusing    = gated(check.PushRefuses)
	NotRefusing = gated(check.PushWarns)
)

// gated lists the catalog's IDs under gate g, in catalog order.
func gated(g check.Gate) []string {
	var ids []string
	for _, c := range check.Catalog() {
		if c.Push == g {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// Refuses reports whether an error finding of check id refuses a provider
// at push time: every check but those the catalog says warn.
func Refuses(id string) bool {
	c, ok := check.Lookup(id)
	return !ok || c.Push != check.PushWarns
}
