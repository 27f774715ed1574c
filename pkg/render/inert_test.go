package render

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

func TestInert(t *testing.T) {
	markers := []string{"operator.cluster.x-k8s.io", "Provider", "components"}
	helpers := `{{- define "x.name" -}}{{ default .Chart.Name .Values.name | trunc 63 | trimSuffix "-" }}{{- end }}`
	for _, tc := range []struct {
		name, tpl string
		ok        bool
		why       string
	}{
		{"plain text", "kind: ConfigMap\n", true, ""},
		{"fields and YAML", "name: {{ include \"x.name\" . }}\nlabels: {{- toYaml .Values.labels | nindent 4 }}\nreplicas: {{ .Values.n | default 1 }}\n", true, ""},
		{"control", "{{- if .Values.on }}\na: {{ .Values.a | quote }}\n{{- else }}\nb: x\n{{- end }}\n{{- range .Values.l }}\n- {{ . }}\n{{- end }}\n", true, ""},
		{"files copied", "{{- range $p, $_ := .Files.Glob \"x/*\" }}\n---\n{{ $.Files.Get $p }}\n{{- end }}\n", true, ""},
		{"marker in text", "kind: CoreProvider\n", false, "holds a marker"},
		{"marker in a string", "kind: {{ \"CoreProvider\" }}\n", false, "holds a marker"},
		{"marker in a name", "", false, "holds a marker"},
		{"printf", "kind: {{ printf \"%sider\" \"CoreProv\" }}\n", false, "calls printf"},
		{"b64dec", "kind: {{ \"Q29yZVByb3ZpZGVy\" | b64dec }}\n", false, "calls b64dec"},
		{"title", "kind: {{ title \"coreprovider\" }}\n", false, "calls title"},
		{"tpl", "{{ tpl .Values.t . }}\n", false, "calls tpl"},
		{"lookup", "{{ lookup \"v1\" \"Secret\" \"a\" \"b\" }}\n", false, "calls lookup"},
		{"values method", "{{ .Values.AsMap }}\n", false, "may build text"},
		{"AsSecrets", "{{ .Files.AsSecrets }}\n", false, "may build text"},
		{"computed include", "{{ include .Values.n . }}\n", false, "computed name"},
		{"undefined include", "{{ include \"nope\" . }}\n", false, "does not define"},
		{"does not parse", "{{ if }}\n", false, "does not parse"},
		{"literal pieces", "kind: Core{{ \"Pro\" }}vider\n", false, "starts with the end"},
		{"literal then value", "kind: CorePro{{ .Values.v }}\n", false, "ends with the start"},
		{"two values", "kind: {{ .Values.a }}{{ .Values.b }}\n", false, "two values"},
		{"value, part, value", "api: {{ .Values.a }}-{{ .Values.b }}\n", false, "two values"},
		{"skipped branch", "kind: CorePro{{ if .Values.x }}z{{ end }}vider\n", false, "meet in a marker"},
		{"skipped branch between values", "{{ .Values.a }}{{ if .Values.x }} {{ end }}{{ .Values.b }}\n", false, "two values"},
		{"loop wraps round", "{{ range .Values.l }}{{ . }}{{ end }}\n", false, "two values"},
		{"in a define", `{{ define "y" }}CorePro{{ .Values.v }}{{ end }}{{ include "y" . }}`, false, "ends with the start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []*loader.BufferedFile{{Name: "templates/_helpers.tpl", Data: []byte(helpers)}, {Name: "templates/t.yaml", Data: []byte(tc.tpl)}}
			if tc.name == "marker in a name" {
				files[1].Name = "templates/Provider.yaml"
			}
			ok, why := Inert(files, markers)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("Inert = %v, %q; want %v, %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}
