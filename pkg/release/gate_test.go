package release

import (
	"slices"
	"testing"

	"github.com/pinseal/pinseal/pkg/check"
)

// TestRefusingCoversCatalog: every check of the catalog is judged, refusing
// or not, so a new check cannot slip through unjudged.
func TestRefusingCoversCatalog(t *testing.T) {
	for _, c := range check.Catalog() {
		in, out := slices.Contains(Refusing, c.ID), slices.Contains(NotRefusing, c.ID)
		if in == out {
			t.Errorf("check %s: in Refusing %v, in NotRefusing %v: set its catalog entry's Push (pkg/check/check.go; check.Gate says what each means)", c.ID, in, out)
		}
		if Refuses(c.ID) != (c.Push != check.PushWarns) {
			t.Errorf("Refuses(%s) = %v, but its catalog entry says %v", c.ID, Refuses(c.ID), c.Push)
		}
	}
	if len(Refusing) == 0 || len(NotRefusing) == 0 {
		t.Errorf("Refusing %v, NotRefusing %v: the catalog judges no check one way", Refusing, NotRefusing)
	}
	for _, id := range []string{check.BlobYAML, check.ImageRef} {
		if !Refuses(id) {
			t.Errorf("%s does not refuse", id)
		}
	}
	for _, id := range []string{check.BlobHeader, check.Signature} {
		if Refuses(id) {
			t.Errorf("%s refuses", id)
		}
	}
	if !Refuses("a-check-nobody-judged") {
		t.Error("an unknown check does not refuse")
	}
}
