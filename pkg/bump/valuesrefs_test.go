package bump

import (
	"slices"
	"testing"
)

func TestValuesRefs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{`version: {{ .Values.core.version }}`, []string{"core.version"}},
		{`version: {{ index .Values "cluster-api-operator" "cluster-api" "core" "version" }}`, []string{"cluster-api-operator.cluster-api.core.version"}},
		{`{{- if index .Values.providers "bootstrapRKE2" "version" }}`, []string{"providers.bootstrapRKE2.version"}},
		{`{{ index .Values "a" }} and {{ .Values.b }}`, []string{"b", "a"}},
		{`{{ index .Files "x" }}`, nil},
	} {
		if got := valuesRefs(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("valuesRefs(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
