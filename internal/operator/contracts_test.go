package operator

import (
	"slices"
	"testing"
)

func TestServed(t *testing.T) {
	for _, c := range []struct {
		core, contract string
		want           []string
	}{
		{"v1.10.1", "v1beta1", []string{"v1beta1"}},
		{"v1.10.1", "", []string{"v1beta1"}},
		{"v1.11.0", "v1beta2", []string{"v1beta2", "v1beta1"}},
		{"v1.15.3", "", []string{"v1beta2", "v1beta1"}},
		{"v1.16.0", "v1beta2", []string{"v1beta2"}}, // v1beta1 compatibility ends with v1.16
		{"v1.11.0-core", "v1beta2", []string{"v1beta2", "v1beta1"}},
		{"v0.4.8", "", []string{"v1alpha4"}},
		{"v0.2.0", "", nil},
		{"nonsense", "v1beta2", []string{"v1beta2", "v1beta1"}},
	} {
		if got := Served(c.core, c.contract); !slices.Equal(got, c.want) {
			t.Errorf("Served(%s, %q) = %v, want %v", c.core, c.contract, got, c.want)
		}
	}
	if !Serves("v1.12.0", "", "v1beta1") || Serves("v1.10.1", "", "v1beta2") {
		t.Error("Serves disagrees with Served")
	}
	if CoreContract("v1.11.0") != "v1beta2" || CoreContract("v1.10.9") != "v1beta1" {
		t.Error("CoreContract")
	}
}
