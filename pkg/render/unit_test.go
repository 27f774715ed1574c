package render

import (
	"bytes"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/testkit/chartbomb"
	"github.com/pinseal/pinseal/internal/yamlbound"
)

// FuzzCheckChartFiles: the bounded reading of a chart's packed subchart
// and its values never panics, and an archive it lets through is one
// Helm's loader inflates to no more than MaxArchiveBytes; values it lets
// through decode within the value bounds.
func FuzzCheckChartFiles(f *testing.F) {
	f.Add(chartbomb.Tgz(f, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML), "values.yaml": []byte("a: 1\n")}), []byte("a: &a [1]\nb: *a\n"))
	f.Add(chartbomb.Tgz(f, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML), "charts/in.tgz": chartbomb.Tgz(f, "in", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML)})}), []byte(chartbomb.AliasBomb("v", 5, 3)))
	f.Add(chartbomb.Tgz(f, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML), "files/z": make([]byte, 1<<20)}), []byte("{}"))
	f.Add([]byte("\x1f\x8b\x08\x00"), []byte("a: [\n"))
	f.Fuzz(func(t *testing.T, archive, values []byte) {
		files := []*loader.BufferedFile{{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: top\nversion: 0.1.0\n")},
			{Name: "values.yaml", Data: values}, {Name: "charts/sub.tgz", Data: archive}}
		if b := CheckChartFiles(files, func(string) {}); b != nil {
			if b.File == "" || b.Message == "" {
				t.Fatalf("bound %+v names no file", b)
			}
			return
		}
		if inner, err := loader.LoadArchiveFiles(bytes.NewReader(archive)); err == nil {
			var n int
			for _, f := range inner {
				n += len(f.Data)
			}
			if n > MaxArchiveBytes {
				t.Fatalf("let through an archive of %d inflated bytes", n)
			}
		}
		var v any
		if sigsyaml.Unmarshal(values, &v) == nil {
			b := &yamlbound.Budget{Limits: yamlbound.Limits{MaxNodes: MaxChartValueNodes, MaxScalarBytes: MaxChartValueBytes}}
			if err := measureValues(b, v); err != nil {
				t.Fatalf("let through values over a bound: %v", err)
			}
		}
	})
}

// FuzzUndecodedValues: a YAML text without '*' decodes (as Helm decodes
// values) to no more nodes and string bytes than withinUndecoded counts
// for it.
func FuzzUndecodedValues(f *testing.F) {
	for _, s := range []string{"a:\n", "{a, b, c}", "n: y\n~: 1\n1e5: x\ny: n\n", "-\n-\n-\n", "? a\n? b\n", "\"\\L\\P\\N\": 1\n",
		"[[[[]]]]", "{}", "a: {b: {c: }}\n", "<<: {a: 1, b: 2}\nc: 3\n", "a: !!binary aGVsbG8=\n", "2001-12-14t21:59:43.10-05:00: t\n", ".5: a\n.inf: b\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, values []byte) {
		if bytes.IndexByte(values, '*') >= 0 {
			return
		}
		var v any
		if sigsyaml.Unmarshal(values, &v) != nil {
			return
		}
		b := &yamlbound.Budget{}
		if err := measureValues(b, v); err != nil {
			t.Fatal(err)
		}
		if n := int64(len(values)); b.Used.Nodes > undecodedNodesPerByte*n+2 || b.Used.ScalarBytes > undecodedBytesPerByte*n {
			t.Fatalf("%q decodes to %+v, over what withinUndecoded counts", values, b.Used)
		}
	})
}

// FuzzValuesSchema: whatever a values.schema.json holds, validating
// values against it ends, without a panic, having loaded no document
// (refusingLoader is the only loader; a refused ref is reported as such).
func FuzzValuesSchema(f *testing.F) {
	for _, s := range []string{
		`{"$ref":"http://127.0.0.1:1/x.json"}`,
		`{"$schema":"file:///etc/passwd"}`,
		`{"$id":"http://x/","$ref":"y"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`,
		`{"properties":{"a":{"type":"integer"}},"additionalProperties":false}`,
		`{"$ref":"urn:x"}`,
		`true`, `[]`, `{"pattern":"(a*)*b"}`,
	} {
		f.Add([]byte(s))
	}
	values := map[string]any{"a": 1, "b": map[string]any{"c": "d"}}
	f.Fuzz(func(t *testing.T, schema []byte) {
		ref, err := validateSchema(schema, values)
		if ref != "" && err != nil {
			t.Fatalf("both a refused ref %q and an error %v", ref, err)
		}
		if ref != "" && strings.HasPrefix(ref, "urn:") {
			t.Fatalf("urn ref %q refused; Helm gives it the permissive schema", ref)
		}
	})
}

func TestUnreadFiles(t *testing.T) {
	big := strings.Repeat("x", omitMin)
	base := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "values.yaml": big,
		"files/big.yaml": big, "files/blob.gz": big, "files/small.yaml": "a: 1\n",
	}
	tests := []struct {
		name, tmpl string
		extra      map[string]string
		want       []string // nil: every file is sent
	}{
		{"literal reads", `{{ .Files.Get "files/blob.gz" | b64enc }}`, nil, []string{"files/big.yaml"}},
		{"no reads", `kind: X`, nil, []string{"files/big.yaml", "files/blob.gz"}},
		{"root and bytes", `{{ $.Files.GetBytes "files/big.yaml" }}{{ .Files.Lines ` + "`files/blob.gz`" + ` }}`, nil, []string{}},
		{"escaped literal", `{{ .Files.Get "files/big\u002eyaml" }}`, nil, nil},
		{"computed name", `{{ .Files.Get (printf "files/%s" "big.yaml") }}`, nil, nil},
		{"glob", `{{ (.Files.Glob "files/*").AsConfig }}`, nil, nil},
		{"files in a variable", `{{ $f := .Files }}{{ $f.Get "files/big.yaml" }}`, nil, nil},
		{"index", `{{ (index . "Files").Get "files/big.yaml" }}`, nil, nil},
		{"files reached by a value", `{{ with index . .Values.k }}{{ .Get "files/big.yaml" }}{{ end }}`, nil, nil},
		{"files reached by a value, in a variable", `{{ $f := index . .Values.k }}{{ $f.Lines "files/big.yaml" }}`, nil, nil},
		{"a literal read beside a hidden one", `{{ .Files.Get "files/small.yaml" }}{{ with index . .Values.k }}{{ .Glob "files/*" }}{{ end }}`, nil, nil},
		{"tpl", `{{ tpl .Values.t . }}`, nil, nil},
		{"tpl in a pipeline", `{{ .Values.t | tpl }}`, nil, nil},
		{"tpl file name is not tpl", `{{/* see _helpers.tpl */}}`, nil, []string{"files/big.yaml", "files/blob.gz"}},
		{"a word holding Files", `{{ .Values.extraFiles }}`, nil, nil},
		{"subchart", `kind: X`, map[string]string{"charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files []*loader.BufferedFile
			for n, c := range base {
				files = append(files, &loader.BufferedFile{Name: n, Data: []byte(c)})
			}
			for n, c := range tt.extra {
				files = append(files, &loader.BufferedFile{Name: n, Data: []byte(c)})
			}
			files = append(files, &loader.BufferedFile{Name: "templates/t.yaml", Data: []byte(tt.tmpl + big)})
			got := unreadFiles(files)
			if tt.want == nil {
				if got != nil {
					t.Fatalf("unreadFiles = %v, want nil (send every file)", got)
				}
				return
			}
			var names []string
			for n := range got {
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) == 0 {
				names = []string{}
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("unreadFiles = %v, want %v", names, tt.want)
			}
		})
	}
}
