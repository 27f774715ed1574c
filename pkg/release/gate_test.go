package release

import (
	"slices"
	"testing"

	"github.com/pinseal/pinseal/pkg/check"
)

// TestRefusingCoversCatalog: every check of the catalog is judged once,
// refusing or not, so a new check cannot slip through unjudged.
func TestRefusingCoversCatalog(t *testing.T) {
	for _, id := range check.IDs() {
		in, out := slices.Contains(Refusing, id), slices.Contains(NotRefusing, id)
		if in == out {
			t.Errorf("check %s: in Refusing %v, in NotRefusing %v: put it in exactly one (pkg/release/gate.go says what each means)", id, in, out)
		}
		if Refuses(id) != in {
			t.Errorf("Refuses(%s) = %v, but Refusing lists it: %v", id, !in, in)
		}
	}
	for _, id := range append(slices.Clone(Refusing), NotRefusing...) {
		if _, ok := check.Lookup(id); !ok {
			t.Errorf("%s is no check of the catalog", id)
		}
	}
	if !Refuses("a-check-nobody-judged") {
		t.Error("an unknown check does not refuse")
	}
}
