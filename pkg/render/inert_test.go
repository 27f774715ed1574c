package render

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

func TestInert(t *testing.T) {
	markers := []string{"operator.cluster.x-k8s.io", "Provider", "components", "<no value>"}
	helpers := `{{- define "x.name" -}}{{ default .Chart.Name .Values.name | trunc 63 | trimSuffix "-" }}{{- end }}`
	for _, tc := range []struct {
		name, tpl string
		ok        bool
		why       string
		copied    string // what the render copies besides the templates; "-": anything
	}{
		{"plain text", "kind: ConfigMap\n", true, "", ""},
		{"fields and YAML", "name: {{ include \"x.name\" . }}\nlabels: {{- toYaml .Values.labels | nindent 4 }}\nreplicas: {{ .Values.n | default 1 }}\n", true, "", ""},
		{"control", "{{- if .Values.on }}\na: {{ .Values.a | quote }}\n{{- else }}\nb: x\n{{- end }}\n{{- range .Values.l }}\n- {{ . }}\n{{- end }}\n", true, "", ""},
		{"files copied", "{{- range $p, $_ := .Files.Glob \"x/*\" }}\n---\n{{ $.Files.Get $p }}\n{{- end }}\n", true, "", ""},
		{"marker in text", "kind: CoreProvider\n", false, "holds a marker", ""},
		{"marker in a string", "kind: {{ \"CoreProvider\" }}\n", false, "holds a marker", ""},
		{"marker in a name", "", false, "holds a marker", ""},
		{"printf", "kind: {{ printf \"%sider\" \"CoreProv\" }}\n", false, "printf: a text after an action starts with the end", ""},
		{"printf pieces", "kind: {{ printf \"%sPro%s\" \"Core\" \"vider\" }}\n", false, "printf: a text before an action ends with the start", ""},
		{"printf of values", "name: {{ printf \"%s-%s\" .Release.Name .Chart.Name | trunc 63 }}\nn: {{ .Values.n | printf \"%d%%\" }}\n", true, "", ""},
		{"printf of values, a part copied", "name: {{ printf \"%s-%s\" .Release.Name .Chart.Name }}\n", false, "printf: may print two values", "operator.cluster.x"},
		{"printf, computed format", "{{ printf .Values.f .Values.a }}\n", false, "computed format", ""},
		{"printf, other verb", "{{ printf \"%x\" .Values.a }}\n", false, "a format other than", ""},
		{"printf, a value missing", "{{ printf \"%s-%s\" .Values.a }}\n", false, "2 verbs for 1 values", ""},
		{"escaped literal", "{{ \"operator.cluster.\\x78\" }}-{{ .Values.w }}\n", false, "two values", ""},
		{"b64dec", "kind: {{ \"Q29yZVByb3ZpZGVy\" | b64dec }}\n", false, "calls b64dec", ""},
		{"title", "kind: {{ title \"coreprovider\" }}\n", false, "calls title", ""},
		{"tpl", "{{ tpl .Values.t . }}\n", false, "calls tpl", ""},
		{"lookup finds nothing", "{{ (lookup \"v1\" \"Secret\" \"a\" \"b\").data }}\n", true, "", ""},
		{"print of one value", "a: {{ print .Values.a }}\nb: {{ .Values.b | print }}\nc: {{ kindOf .Values.c }}\n{{ range until 3 }}- {{ . }}\n{{ end }}", true, "", ""},
		{"print of two values", "a: {{ print .Values.a .Values.b }}\n", false, "print with 2 values", ""},
		{"join of values", "a: {{ join \",\" .Values.l }}\nb: {{ .Values.l | join \"-\" }}\n", true, "", ""},
		{"join, a part copied", "a: {{ join \"-\" .Values.l }}\n", false, "join: may print two values", "l: [operator.cluster.x, k8s.io]"},
		{"join with nothing between", "a: {{ join \"\" .Values.l }}\n", false, "join: may print two values", ""},
		{"join, computed separator", "a: {{ join .Values.s .Values.l }}\n", false, "computed separator", ""},
		{"values method", "{{ .Values.AsMap }}\n", false, "may build text", ""},
		{"AsSecrets", "{{ .Files.AsSecrets }}\n", false, "may build text", ""},
		{"computed include", "{{ include .Values.n . }}\n", false, "computed name", ""},
		{"undefined include", "{{ include \"nope\" . }}\n", true, "", ""},
		{"undefined template prints nothing", "kind: CorePro{{ template \"nope\" . }}vider\n", false, "meet in a marker", ""},
		{"does not parse", "{{ if }}\n", false, "does not parse", ""},
		{"literal pieces", "kind: Core{{ \"Pro\" }}vider\n", false, "starts with the end", ""},
		{"literal then value", "kind: CorePro{{ .Values.v }}\n", false, "ends with the start", ""},
		{"two values", "kind: {{ .Values.a }}{{ .Values.b }}\n", false, "two values", ""},
		{"value, part, value", "api: {{ .Values.a }}-{{ .Values.b }}\n", false, "two values", "-"},
		{"value, part, value: the part before not copied", "api: {{ .Values.a }}-{{ .Values.b }}\n", true, "", "a: operator.cluster"},
		{"value, part, value: the part before copied", "api: {{ .Values.a }}-{{ .Values.b }}\n", false, "two values", "a: operator.cluster.xyz"},
		{"value, dot, value: the part before copied", "api: {{ .Values.a }}.{{ .Values.b }}\n", false, "two values", "name: cert-operator"},
		{"value, part, value: the part before in a text", "{{ define \"a\" }}operator.cluster.x{{ end }}api: {{ include \"a\" . }}-{{ .Values.b }}\n", false, "two values", ""},
		{"text, part, value", "api: operator.cluster{{ if .Values.x }}{{ end }}.{{ .Values.b }}\n", false, "ends with the start", ""},
		{"no value deleted from the text", "kind: CorePro<no value>vider\n", false, "holds a marker", ""},
		{"no value joined", "kind: {{ .Values.a }}<no {{ .Values.b }}\n", false, "ends with the start", ""},
		{"skipped branch", "kind: CorePro{{ if .Values.x }}z{{ end }}vider\n", false, "meet in a marker", ""},
		{"skipped branch between values", "{{ .Values.a }}{{ if .Values.x }} {{ end }}{{ .Values.b }}\n", false, "two values", ""},
		{"loop wraps round", "{{ range .Values.l }}{{ . }}{{ end }}\n", false, "two values", ""},
		{"in a define", `{{ define "y" }}CorePro{{ .Values.v }}{{ end }}{{ include "y" . }}`, false, "ends with the start", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []*loader.BufferedFile{{Name: "templates/_helpers.tpl", Data: []byte(helpers)}, {Name: "templates/t.yaml", Data: []byte(tc.tpl)}}
			if tc.name == "marker in a name" {
				files[1].Name = "templates/Provider.yaml"
			}
			var copied func(string) bool
			if tc.copied != "-" {
				copied = CopiedBy(append(files, &loader.BufferedFile{Name: "values.yaml", Data: []byte(tc.copied)}))
			}
			ok, why := Inert(files, markers, copied)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("Inert = %v, %q; want %v, %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}
