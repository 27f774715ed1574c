package load

import "github.com/pinseal/pinseal/pkg/render"

import "testing"

func TestSourceLine(t *testing.T) {
	src := []byte(`{{- if .Values.on }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: first
---
kind: ConfigMap
metadata:
  name: "second"
{{- end }}
---
kind: Secret
metadata:
  name: {{ .Release.Name }}
`)
	for _, tc := range []struct {
		kind, name string
		want       int
	}{
		{"ConfigMap", "first", 6}, {"ConfigMap", "second", 10}, {"Secret", "rel", 13}, {"ConfigMap", "third", 0}, {"Deployment", "x", 0},
	} {
		if got := sourceLine(src, tc.kind, tc.name); got != tc.want {
			t.Errorf("%s/%s: line %d, want %d", tc.kind, tc.name, got, tc.want)
		}
	}
}

func TestRenderedLineMap(t *testing.T) {
	src := []byte("{{- if .Values.a }}\nkind: A\nx: {{ .Values.x }}\n{{- end }}\nunique: line\n")
	rendered := "\nkind: A\nx: 1\nunique: line\n"
	lm := render.RenderedLineMap(src, rendered)
	for _, tc := range [][2]int{{2, 2}, {3, 0}, {4, 5}, {1, 0}, {99, 0}, {0, 0}} {
		if got := lm(tc[0]); got != tc[1] {
			t.Errorf("rendered line %d -> %d, want %d", tc[0], got, tc[1])
		}
	}
}
