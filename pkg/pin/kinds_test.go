package pin_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// The kinds a pin may name are exactly the operator kinds the model knows.
func TestKindsMatchModel(t *testing.T) {
	var want []string
	for k := range model.ProviderKinds {
		want = append(want, k)
	}
	sort.Strings(want)
	got := slices.Clone(pin.Kinds)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("pin.Kinds %v, model.ProviderKinds %v", got, want)
	}
	for _, k := range pin.Kinds {
		if !pin.ValidKind(k) {
			t.Errorf("ValidKind(%q) = false", k)
		}
	}
	if pin.ValidKind("coreprovider") {
		t.Error("ValidKind is case-insensitive")
	}
}
