package render

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/pinseal/pinseal/internal/testkit/chartbomb"
)

// Real-shaped provider templates (as the packages of a Cozystack-style
// tree hold them, and gentree's real shape writes).
const (
	realConfigMaps = `apiVersion: v1
kind: ConfigMap
metadata:
  name: v0.17.5-addon
  labels:
    addon-components: cozy
  annotations:
    provider.cluster.x-k8s.io/compressed: "true"
binaryData:
  components: {{ .Files.Get "files/components.gz" | b64enc }}
data:
  metadata: |
    {{- .Files.Get "files/metadata.yaml" | nindent 4 }}
`
	realProviders = `apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: AddonProvider
metadata:
  name: addon
  namespace: {{ .Release.Namespace }}
spec:
  version: v0.17.5-addon
{{- if .Values.providers.kubevirt }}
  fetchConfig:
    selector:
      matchLabels:
        addon-components: cozy
{{- end }}
`
	realMetadata = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 17\n  contract: v1beta1\n"
)

// fastChart loads the chart of files (names to contents) as the loader
// does and computes its values for release "rel" in namespace "ns".
func fastChart(t testing.TB, files map[string]string) (*chart.Chart, chartutil.Values, []*loader.BufferedFile) {
	t.Helper()
	var bf []*loader.BufferedFile
	if _, ok := files["Chart.yaml"]; !ok {
		bf = append(bf, &loader.BufferedFile{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: prov\nversion: 0.1.0\n")})
	}
	for n, c := range files {
		bf = append(bf, &loader.BufferedFile{Name: n, Data: []byte(c)})
	}
	chrt, err := loader.LoadFiles(bf)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	vals, prob := Values(chrt, nil, chartutil.ReleaseOptions{Name: "rel", Namespace: "ns", Revision: 1, IsInstall: true}, true, bf)
	if prob != nil {
		t.Fatalf("values: %s", prob.Message)
	}
	return chrt, vals, bf
}

func TestBounded(t *testing.T) {
	gz := string(bytes.Repeat([]byte{0x1f, 0x8b, ':', '\n'}, 1000))
	real := map[string]string{
		"templates/configmaps.yaml": realConfigMaps, "templates/providers.yaml": realProviders,
		"files/components.gz": gz, "files/metadata.yaml": realMetadata,
		"values.yaml": "providers:\n  kubevirt: true\n",
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range real {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	bomb := func(tmpl string) map[string]string { return with(map[string]string{"templates/zz.yaml": tmpl}) }
	lim := Limits{MaxOutput: 1 << 20}
	tests := []struct {
		name  string
		files map[string]string
		why   string // "" when proven
	}{
		{"real shape", real, ""},
		{"real shape, indent", with(map[string]string{"templates/configmaps.yaml": strings.Replace(realConfigMaps, `{{- .Files.Get "files/metadata.yaml" | nindent 4 }}`, `{{ .Files.Get "files/metadata.yaml" | indent 4 }}`, 1)}), ""},
		{"names and simple functions", bomb(`name: {{ .Release.Name | trunc 63 | trimSuffix "-" | quote }}
chart: {{ .Chart.Name | upper }}-{{ .Chart.Version }}
{{- with .Values.providers }}
kv: {{ .kubevirt | default false }}
{{- end }}
x: {{ default "a" .Values.missing | replace "a" "bb" | trimAll "b" | squote }}
{{- if contains "ns" .Release.Namespace }}
z: z
{{- end }}
{{- if and (eq .Release.Namespace "ns") (not .Values.off) }}
y: {{ $.Files.Get "files/metadata.yaml" | b64enc }}
{{- end }}
`), ""},
		{"range until", bomb(`{{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}`), "range"},
		{"printf width", bomb(`{{ printf "%999999999d" 1 }}`), "calls printf"},
		{"repeat", bomb(`{{ repeat 1000000000000 "a" }}`), "calls repeat"},
		{"tpl", bomb(`{{ tpl "{{ .Values }}" . }}`), "calls tpl"},
		{"include recursion", bomb(`{{ define "x" }}{{ include "x" . }}{{ end }}{{ include "x" . }}`), "defines templates"},
		{"include", bomb(`{{ include "x" . }}`), "calls include"},
		{"template", bomb(`{{ template "x" . }}`), "template or block"},
		{"indent 100000000", bomb(`{{ .Files.Get "files/metadata.yaml" | indent 100000000 }}`), "width"},
		{"indent computed", bomb(`{{ .Files.Get "files/metadata.yaml" | indent (len .Values) }}`), "width"},
		{"file over the output bound", with(map[string]string{"files/big": strings.Repeat("a", 1<<20), "templates/zz.yaml": `{{ .Files.Get "files/big" | b64enc }}`}), "output may reach"},
		{"file of a million tiny YAML nodes", with(map[string]string{"files/bomb.yaml": strings.Repeat("[a,", 300000), "templates/zz.yaml": `{{ .Files.Get "files/bomb.yaml" }}`}), "YAML nodes"},
		{"schema", with(map[string]string{"values.schema.json": `{"type": "object"}`}), "values schema"},
		{"subchart", with(map[string]string{"charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n"}), "subcharts"},
		{"dependencies", with(map[string]string{"Chart.yaml": "apiVersion: v2\nname: prov\nversion: 0.1.0\ndependencies:\n- name: sub\n  version: 0.1.0\n"}), "dependencies"},
		{"oversize template", bomb("# " + strings.Repeat("a", FastMaxTemplate)), "fast-path size"},
		{"unknown function", bomb(`{{ sha256sum "a" }}`), "calls sha256sum"},
		{"lookup", bomb(`{{ if lookup "v1" "Secret" "ns" "x" }}a{{ end }}`), "calls lookup"},
		{"toYaml", bomb(`{{ toYaml .Values }}`), "calls toYaml"},
		{"variables", bomb(`{{ $x := .Values }}{{ $x }}`), "declares variables"},
		{"values method", bomb(`{{ .Values.YAML }}`), "method YAML"},
		{"files glob", bomb(`{{ .Files.Glob "files/*" }}`), "method"},
		{"computed file name", bomb(`{{ .Files.Get (print "files/" "big") }}`), "method"},
		{"capabilities", bomb(`{{ .Capabilities.KubeVersion }}`), "reads .Capabilities"},
		{"whole data", bomb(`{{ . }}`), "whole template data"},
		{"quotes doubling past int64", bomb(`{{ "a"` + strings.Repeat(" | quote", 40) + ` }}`), "output may reach"},
		{"b64enc chain", bomb(`{{ .Files.Get "files/metadata.yaml"` + strings.Repeat(" | b64enc", 60) + ` }}`), "output may reach"},
		{"trimAll cutset of a file", bomb(`{{ .Files.Get "files/metadata.yaml" | trimAll (.Files.Get "files/components.gz") }}`), "not a literal"},
		{"contains a long needle", bomb(`{{ if contains "` + strings.Repeat("a", 65) + `" .Release.Name }}x{{ end }}`), "not a literal"},
		{"replace a long literal", bomb(`{{ .Release.Name | replace "` + strings.Repeat("a", 65) + `" "b" }}`), "over 64 bytes"},
		{"whole data to a function", bomb(`{{ $ | quote }}`), "whole template data"},
		{"whole data through and", bomb(`{{ and true . }}`), "whole template data"},
		{"parse error", bomb(`{{ if }}`), "does not parse"},
		// What is built and not printed: a condition or a function of small
		// output (len, eq, contains) still runs the pipeline under it.
		{"quotes under eq", bomb(`{{ if eq (.Files.Get "files/metadata.yaml"` + strings.Repeat(" | quote", 30) + `) "x" }}x{{ end }}`), "may build"},
		{"len of quotes", bomb(`{{ len ("a"` + strings.Repeat(" | quote", 40) + `) }}`), "may build"},
		{"replace under with", bomb(`{{ with .Files.Get "files/components.gz" | replace ":" "` + strings.Repeat("b", 8000) + `" }}{{ end }}`), "may build"},
		{"file read in many conditions", bomb(strings.Repeat(`{{ if .Files.Get "files/components.gz" }}{{ end }}`, 1200)), "may build"},
		{"values stringified in many conditions", with(map[string]string{"values.yaml": "providers: {kubevirt: true}\ns: " + strings.Repeat("a", 64<<10) + "\n",
			"templates/zz.yaml": strings.Repeat(`{{ if contains "b" (toString .Values) }}x{{ end }}`, 100)}), "may build"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chrt, vals, _ := fastChart(t, tc.files)
			p := Bounded(chrt, vals, lim)
			if tc.why == "" {
				if !p.OK {
					t.Fatalf("not proven: %s", p.Why)
				}
				if p.Output <= 0 || p.Nodes <= 0 {
					t.Fatalf("proven with bounds %+v", p)
				}
				return
			}
			if p.OK {
				t.Fatalf("proven (%+v); want refused for %q", p, tc.why)
			}
			if !strings.Contains(p.Why, tc.why) {
				t.Fatalf("refused for %q; want %q", p.Why, tc.why)
			}
		})
	}
}

// TestFastCandidate: the files rule out subcharts, packed files, schemas
// and large templates before the chart is loaded.
func TestFastCandidate(t *testing.T) {
	base := []*loader.BufferedFile{{Name: "Chart.yaml"}, {Name: "templates/a.yaml", Data: []byte(realProviders)}}
	if ok, why := FastCandidate(base); !ok {
		t.Fatalf("real shape ruled out: %s", why)
	}
	for _, tc := range []struct {
		file *loader.BufferedFile
		why  string
	}{
		{&loader.BufferedFile{Name: "charts/sub/Chart.yaml"}, "subcharts"},
		{&loader.BufferedFile{Name: "charts/sub.tgz"}, "subcharts"},
		{&loader.BufferedFile{Name: "files/x.tgz"}, "packed"},
		{&loader.BufferedFile{Name: "values.schema.json"}, "schema"},
		{&loader.BufferedFile{Name: "templates/big.yaml", Data: make([]byte, FastMaxTemplate+1)}, "over"},
	} {
		ok, why := FastCandidate(append(base[:2:2], tc.file))
		if ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: ok %v, why %q; want ruled out for %q", tc.file.Name, ok, why, tc.why)
		}
	}
}

// fuzzEngineAlloc is what Helm's engine allocates to render any small
// chart (its function map, the templates parsed), over what the chart's
// functions build.
const fuzzEngineAlloc = 8 << 20

// FuzzBounded: whatever the template, when Bounded proves a chart, Helm's
// engine renders it in process within the proven output and YAML-node
// bounds, and allocates within a multiple of the proven work.
func FuzzBounded(f *testing.F) {
	for _, s := range []string{realConfigMaps, realProviders,
		`{{ .Files.Get "files/a.yaml" | nindent 8 | quote }}`,
		`{{ with .Values }}{{ . }}{{ end }}`,
		`{{ .Values.list | toString | replace " " ":\n- " }}`,
		`{{ .Files.Get "files/b.bin" | lower | indent 3 }}`,
		`{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}{{ end }}`,
		`{{ define "x" }}{{ include "x" . }}{{ end }}{{ include "x" . }}`,
		// Builds tens of MiB under len, which prints a few bytes.
		`{{ len ("a"` + strings.Repeat(" | quote", 24) + `) }}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		files := []*loader.BufferedFile{
			{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: prov\nversion: 0.1.0\nappVersion: \"1.0\"\n")},
			{Name: "values.yaml", Data: []byte("providers: {kubevirt: true}\nname: \"a: b, [c]\\n- d\"\nlist: [1, 2.5e300, -3, x, {k: v}]\n")},
			{Name: "files/a.yaml", Data: []byte(realMetadata)},
			{Name: "files/b.bin", Data: []byte("\xff\xfe\x00:\n-,[{?\xc8\xbf")},
			{Name: "templates/t.yaml", Data: []byte(tmpl)},
		}
		chrt, err := loader.LoadFiles(files)
		if err != nil {
			return
		}
		vals, prob := Values(chrt, nil, chartutil.ReleaseOptions{Name: "rel", Namespace: "ns", Revision: 1, IsInstall: true}, true, files)
		if prob != nil {
			return
		}
		p := Bounded(chrt, vals, Limits{MaxOutput: 1 << 20})
		if !p.OK {
			return
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rendered, err := engine.Render(chrt, vals)
		runtime.ReadMemStats(&after)
		// Helm's own allocations (its function map, the parsed templates)
		// are a few MiB whatever the chart.
		if built := int64(after.TotalAlloc - before.TotalAlloc); built > 2*(p.Work+p.Output)+fuzzEngineAlloc {
			t.Fatalf("the render allocated %d bytes, over twice the proven work %d and output %d (and %d for Helm)", built, p.Work, p.Output, fuzzEngineAlloc)
		}
		if err != nil {
			return
		}
		total, _ := outputSize(rendered)
		if total > p.Output {
			t.Fatalf("rendered %d bytes, over the proven %d", total, p.Output)
		}
		var nodes int64
		for _, text := range rendered {
			dec := yaml.NewDecoder(strings.NewReader(text))
			for {
				var n yaml.Node
				if err := dec.Decode(&n); err != nil {
					break // the end, or a parse error: nothing more is built
				}
				nodes += int64(countNodes(&n, 1<<30))
			}
		}
		if nodes > p.Nodes {
			t.Fatalf("rendered %d YAML nodes, over the proven %d", nodes, p.Nodes)
		}
	})
}

// TestCheckLoaderFiles: values that decode to more than the parse bounds
// (aliases) or do not parse keep the chart out of this process before
// anything decodes them; real ones pass.
func TestCheckLoaderFiles(t *testing.T) {
	chartYAML := &loader.BufferedFile{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: prov\nversion: 0.1.0\n")}
	hundred := func(alias string) string { return strings.TrimSuffix(strings.Repeat("*"+alias+",", 100), ",") }
	for _, tc := range []struct {
		name, values, why string
	}{
		{"real", "providers:\n  kubevirt: true\n", ""},
		{"alias bomb", chartbomb.AliasBomb("v", 5, 7), "nodes"},
		{"long string aliased", "s: &s " + strings.Repeat("y", 64<<10) + "\nl1: &l1 [" + hundred("s") + "]\nl2: [" + hundred("l1") + "]\n", "bytes"},
		{"too large", "a: " + strings.Repeat("b", fastMaxLoaderFile), "over"},
		{"not YAML", "a: [\n", "yaml"},
	} {
		ok, why := CheckLoaderFiles([]*loader.BufferedFile{chartYAML, {Name: "values.yaml", Data: []byte(tc.values)}})
		if tc.why == "" {
			if !ok {
				t.Errorf("%s: refused: %s", tc.name, why)
			}
			continue
		}
		if ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: ok %v, why %q; want refused for %q", tc.name, ok, why, tc.why)
		}
	}
}

// TestFastFuncsBounded: every function the fast path lets through has a
// bound (call answers for it).
func TestFastFuncsBounded(t *testing.T) {
	a := &analysis{}
	for fn := range fastFuncs {
		_, err := a.call(fn, nil, nil)
		if err != nil && strings.Contains(err.Error(), "does not bound") {
			t.Errorf("%s is let through but has no bound", fn)
		}
	}
}

// TestWithinProof: a proven chart's output is measured again before it is
// parsed in process; past the output or YAML-node bounds any proof allows
// it goes to the child whatever the proof said.
func TestWithinProof(t *testing.T) {
	lim := Limits{MaxOutput: 1 << 20}
	for _, tc := range []struct {
		name     string
		rendered map[string]string
		ok       bool
	}{
		{"real", map[string]string{"prov/templates/p.yaml": realProviders, "prov/templates/m.yaml": realMetadata}, true},
		{"tiny nodes", map[string]string{"prov/templates/p.yaml": strings.Repeat("[a,", FastMaxNodes/4)}, false},
		{"nodes over templates", map[string]string{"prov/templates/a.yaml": strings.Repeat("-\n", FastMaxNodes/8), "prov/templates/b.yaml": strings.Repeat("-\n", FastMaxNodes/8)}, false},
		{"over the output bound", map[string]string{"prov/templates/p.yaml": strings.Repeat("a", 1<<20+1)}, false},
	} {
		if ok := withinProof(tc.rendered, lim); ok != tc.ok {
			t.Errorf("%s: within %v, want %v", tc.name, ok, tc.ok)
		}
	}
}

// TestBoundedReadsEachFileOnce: the proof counts a file's YAML indicators
// once however often the templates read it (6,000 reads of a 4 MiB file
// would scan 24 GiB before the chart is refused).
func TestBoundedReadsEachFileOnce(t *testing.T) {
	files := map[string]string{"files/big": strings.Repeat("a", 4<<20), "templates/a.yaml": realProviders}
	for _, n := range []string{"x", "y", "z"} {
		files["templates/"+n+".yaml"] = strings.Repeat(`{{ .Files.Get "files/big" }}`, 2000) + strings.Repeat(`{{ .Chart.Description }}`, 300)
	}
	files["Chart.yaml"] = "apiVersion: v2\nname: prov\nversion: 0.1.0\ndescription: " + strings.Repeat("d", 200<<10) + "\n"
	chrt, vals, _ := fastChart(t, files)
	// A bound of the work, in CPU time (a busy machine stretches
	// wall-clock time, not this).
	var p Proof
	used := timebound.Work(func() { p = Bounded(chrt, vals, Limits{}) })
	if p.OK || !strings.Contains(p.Why, "output may reach") {
		t.Fatalf("proven or refused for another reason: %+v", p)
	}
	if used > 3*time.Second {
		t.Fatalf("the proof took %v of CPU", used)
	}
}

// TestBoundedFileOfTwoNames: a chart that holds two files of a name reads
// the last (Helm's Files is a map), and the proof bounds that one.
func TestBoundedFileOfTwoNames(t *testing.T) {
	chrt, vals, _ := fastChart(t, map[string]string{"templates/a.yaml": `{{ .Files.Get "files/x" }}`, "files/x": "small"})
	chrt.Files = append(chrt.Files, &chart.File{Name: "files/x", Data: bytes.Repeat([]byte("a"), 2<<20)})
	if p := Bounded(chrt, vals, Limits{MaxOutput: 1 << 20}); p.OK || !strings.Contains(p.Why, "output may reach") {
		t.Fatalf("proven or refused for another reason: %+v", p)
	}
}

// TestBoundedTimeBound: the proven output shrinks with the render time
// bound, which a child would be held to.
func TestBoundedTimeBound(t *testing.T) {
	chrt, vals, _ := fastChart(t, map[string]string{"templates/a.yaml": `{{ .Files.Get "files/x" }}`, "files/x": strings.Repeat("x y ", 256<<10)})
	if p := Bounded(chrt, vals, Limits{Timeout: 10 * time.Second}); !p.OK {
		t.Fatalf("refused with the default time bound: %s", p.Why)
	}
	if p := Bounded(chrt, vals, Limits{Timeout: 100 * time.Millisecond}); p.OK || !strings.Contains(p.Why, "output may reach") {
		t.Fatalf("proven or refused for another reason with a time bound of 100ms: %+v", p)
	}
}

// TestRenderProvenTakesASlot: a proven render waits for one of the
// sandbox's render slots (shared by every load of a service), so no more
// render in process at once than children would.
func TestRenderProvenTakesASlot(t *testing.T) {
	chrt, vals, files := fastChart(t, map[string]string{"templates/p.yaml": realProviders, "values.yaml": "providers:\n  kubevirt: true\n"})
	s := New(nil)
	defer s.Close()
	for range cap(s.slots) {
		s.slots <- struct{}{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, ok := s.RenderProven(ctx, chrt, vals, files, "rel", "ns", Limits{}); ok {
		t.Fatal("rendered with every slot taken")
	}
	<-s.slots
	out, ok := s.RenderProven(context.Background(), chrt, vals, files, "rel", "ns", Limits{})
	if !ok || !strings.Contains(out.Rendered["prov/templates/p.yaml"], "namespace: ns") {
		t.Fatalf("did not render with a slot free: %v %+v", ok, out)
	}
	if len(s.slots) != cap(s.slots)-1 {
		t.Fatalf("%d slots taken after the render, want %d", len(s.slots), cap(s.slots)-1)
	}
}
