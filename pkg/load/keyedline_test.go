package load

import "github.com/pinseal/pinseal/pkg/render"

import "testing"

// TestKeyedLineMap: a rendered line whose value was templated is placed at
// the template line with its key, in its own object's document when two
// objects of one template have the key, and nowhere when that is unsure.
func TestKeyedLineMap(t *testing.T) {
	src := []byte(`kind: ControlPlaneProvider
metadata:
  name: kamaji
spec:
  fetchConfig:
    oci: {{ .Values.registry }}/capi/kamaji
---
kind: InfrastructureProvider
metadata:
  name: proxmox
spec:
  fetchConfig:
    oci: {{ .Values.registry }}/capi/proxmox
`)
	rendered := `kind: ControlPlaneProvider
metadata:
  name: kamaji
spec:
  fetchConfig:
    oci: registry.example.com/capi/kamaji
---
kind: InfrastructureProvider
metadata:
  name: proxmox
spec:
  fetchConfig:
    oci: registry.example.com/capi/proxmox
`
	lm := render.RenderedLineMap(src, rendered)
	tests := []struct {
		start, line, want int
	}{
		{3, 6, 6},    // kamaji's oci
		{10, 13, 13}, // proxmox's oci
		{3, 3, 3},    // a line that reads the same is lm's
		{0, 6, 0},    // two "    oci:" lines and no object to choose by
		{3, 13, 6},   // the first below the object's name
		{10, 6, 13},  // ... not above it
	}
	for _, tc := range tests {
		if got := keyedLineMap(src, rendered, lm, tc.start)(tc.line); got != tc.want {
			t.Errorf("start %d, rendered line %d: line %d, want %d", tc.start, tc.line, got, tc.want)
		}
	}
	one := []byte("spec:\n  version: {{ .Values.v }}\n")
	if got := keyedLineMap(one, "spec:\n  version: v1\n", render.RenderedLineMap(one, "spec:\n  version: v1\n"), 0)(2); got != 2 {
		t.Errorf("the only line with the key: %d, want 2", got)
	}
	if got := keyedLineMap(one, "spec:\n  {{ x }}: v1\n", render.RenderedLineMap(one, "spec:\n  {{ x }}: v1\n"), 0)(2); got != 0 {
		t.Errorf("a templated key: %d, want 0", got)
	}
}
