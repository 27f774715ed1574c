package images

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

const deploy = "kind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: example.com/d:v1\n"

// scanCases are the streams whose shape the scanner must read as the
// line-by-line oracle does: document markers with trailing text, document
// ends, CRLF, kinds that are not top-level, JSON, block scalars, a BOM,
// quoted kinds, comments, long lines, oversize and broken documents.
var scanCases = map[string]string{
	"plain":              deploy,
	"no final newline":   strings.TrimSuffix(deploy, "\n"),
	"marker comment":     "--- # Source: chart/templates/crd.yaml\nkind: CustomResourceDefinition\nspec:\n  x: y\n--- # Source: chart/templates/deploy.yaml\n" + deploy,
	"marker text":        "kind: ConfigMap\n--- !!map\n" + deploy + "---\tx\n" + deploy,
	"not markers":        "kind: ConfigMap\ndata:\n----\n---x\n..x\n" + "---\n" + deploy + "----\n---x\n",
	"document end":       deploy + "...\n" + deploy + "... # end\n---\n" + deploy,
	"crlf":               strings.ReplaceAll("kind: CustomResourceDefinition\n---\n"+deploy+"---\r\n"+deploy, "\n", "\r\n"),
	"lone cr":            "kind: ConfigMap\r---\r" + deploy,
	"indented kind":      "  kind: Deployment\n  spec:\n    template: {}\n---\n- kind: Pod\n  spec:\n    containers: [{name: a, image: x}]\n---\n" + deploy,
	"kind not first":     "apiVersion: apps/v1\nmetadata:\n  name: late\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: example.com/late:v1\nkind: Deployment\n",
	"json":               `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"example.com/p:v1"}]}}` + "\n---\n" + deploy,
	"json multiline":     "# generated\n\n{\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"p\"},\n  \"spec\": {\"containers\": [{\"name\": \"c\", \"image\": \"x:v1\"}]}\n}\n---\n{\"kind\": \"ConfigMap\"}\n",
	"kind then json":     "kind: ConfigMap\n{\"kind\": \"Pod\", \"spec\": {\"containers\": [{\"image\": \"x:v1\"}]}}\n---\n" + deploy,
	"block scalar":       "kind: ConfigMap\ndata:\n  script: |\n    kind: Deployment\n    ---\n    kind: Pod\n---\n" + deploy + "  script: |\n    ---\n    kind: Secret\n",
	"top block scalar":   "--- |\nkind: Deployment\n---\n" + deploy,
	"bom":                "\ufeff" + deploy + "---\n\ufeffkind: Pod\nspec:\n  containers: [{name: a, image: b:v1}]\n---\n" + deploy,
	"bom crd":            "\ufeffkind: CustomResourceDefinition\nspec: {}\n---\n" + deploy,
	"quoted kinds":       "kind: \"Deployment\"\nspec: {template: {spec: {containers: [{name: a, image: q:v1}]}}}\n---\nkind: 'Pod'\nspec: {containers: [{name: a, image: p:v1}]}\n---\n\"kind\": \"Deployment\"\nspec: {template: {spec: {containers: [{name: a, image: k:v1}]}}}\n",
	"comments":           "# kind: Deployment\n#---\nkind: ConfigMap # kind: Deployment\n---\n" + strings.Replace(deploy, "kind: Deployment", "kind: Deployment # the manager", 1),
	"empty kind":         "kind:\n  Deployment\nspec: {}\n---\nkind: \nx: y\n",
	"two kinds":          "kind: ConfigMap\ndata:\n  a: b\n" + deploy + "---\n" + deploy + "kind: Secret\n",
	"k and dash lines":   "kind: CustomResourceDefinition\nkey: v\n- item\n.dot\nkinds: x\nkind : y\n---\n" + deploy,
	"tabs":               "kind: ConfigMap\n\tkind: Deployment\n---\t# c\n" + deploy,
	"empty documents":    "---\n---\n\n---\n# only a comment\n...\n" + deploy + "---\n",
	"leading blank":      "\n\n   \n" + deploy,
	"comment then kind":  "# a comment\n   # another\n" + deploy,
	"broken workload":    "kind: Pod\nmetadata: {name: a}\nspec:\n  containers: [\n---\n" + deploy,
	"no image":           "kind: Pod\nspec:\n  containers:\n  - name: a\n  - name: b\n    image: {x: y}\n",
	"cronjob":            "kind: CronJob\nmetadata: {name: cj}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: a, image: cj:v1}]\n",
	"long line crd":      "kind: CustomResourceDefinition\nspec:\n  x: " + strings.Repeat("A", 200<<10) + "\n---\n" + deploy,
	"long line workload": deploy + "  annotations: {a: " + strings.Repeat("B", 100<<10) + "}\n",
	"long line at start": strings.Repeat("C", 150<<10) + "\nkind: Pod\nspec: {containers: [{name: a, image: x:v1}]}\n",
	"oversize":           deploy + "---\nkind: DaemonSet\nspec:\n  x: [" + strings.Repeat("1,", maxDoc/2) + "1]\n---\n" + deploy,
	"oversize then kind": "kind: StatefulSet\nspec:\n  x: [" + strings.Repeat("1,", maxDoc/2) + "1]\nkind: ConfigMap\n---\n" + deploy,
	"oversize lines":     "kind: Job\nspec:\n" + strings.Repeat("  # "+strings.Repeat("z", 1000)+"\n", 300) + "  template: {spec: {containers: [{name: a, image: j:v1}]}}\n",
	"just under bound":   "kind: Job\nspec:\n  template: {spec: {containers: [{name: a, image: j:v1}]}}\n" + strings.Repeat("# "+strings.Repeat("z", 1021)+"\n", 255),
	"oversize json":      "{\"kind\": \"Pod\", \"x\": [" + strings.Repeat("1,", maxDoc/2) + "1]}\n---\n" + deploy,
}

// scanResult is what a scan returns, its errors as text.
type scanResult struct {
	Found     []Found
	Err       string
	Oversized []OversizeError
}

func result(found []Found, err error) scanResult {
	r := scanResult{Found: found}
	if err != nil {
		r.Err = err.Error()
	}
	for _, o := range Oversized(err) {
		r.Oversized = append(r.Oversized, *o)
	}
	return r
}

// chunkReader returns at most n bytes a read, to cut lines across reads.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// scanWays are the ways a stream is scanned, which must all agree with
// the line-by-line oracle.
var scanWays = map[string]func([]byte) ([]Found, error){
	"bytes":    ScanBytes,
	"reader":   func(b []byte) ([]Found, error) { return Scan(bytes.NewReader(b)) },
	"one byte": func(b []byte) ([]Found, error) { return Scan(iotest.OneByteReader(bytes.NewReader(b))) },
	"chunks":   func(b []byte) ([]Found, error) { return Scan(chunkReader{bytes.NewReader(b), 7}) },
	"data+eof": func(b []byte) ([]Found, error) { return Scan(iotest.DataErrReader(bytes.NewReader(b))) },
}

func TestScanAgreesWithLineScanner(t *testing.T) {
	for name, in := range scanCases {
		want := result(scanLines(strings.NewReader(in)))
		for way, scan := range scanWays {
			if got := result(scan([]byte(in))); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s:\n got %.600v\nwant %.600v", name, way, got, want)
			}
		}
	}
}

// The cases do what they say: each finds what the line scanner finds,
// which is pinned here for the ones a fast path could get wrong.
func TestScanCases(t *testing.T) {
	refs := func(name string) string {
		found, err := ScanBytes([]byte(scanCases[name]))
		var s []string
		for _, f := range found {
			s = append(s, fmt.Sprintf("%d:%s", f.Line, f.Ref))
		}
		if err != nil {
			s = append(s, "err")
		}
		return strings.Join(s, " ")
	}
	for name, want := range map[string]string{
		"marker comment":     "14:example.com/d:v1",
		"marker text":        "11:example.com/d:v1 err", // "---\tx" starts a document no YAML reader reads
		"not markers":        "err",                     // "----" and "---x" continue the Deployment, which then does not parse
		"document end":       "9:example.com/d:v1 19:example.com/d:v1 30:example.com/d:v1",
		"crlf":               "11:example.com/d:v1 21:example.com/d:v1",
		"lone cr":            "", // one line: '\r' ends no line
		"indented kind":      "17:example.com/d:v1",
		"json":               "1:example.com/p:v1 11:example.com/d:v1",
		"json multiline":     "6:x:v1",
		"block scalar":       "16:example.com/d:v1",
		"bom":                "9:example.com/d:v1 13:b:v1 23:example.com/d:v1", // a BOM may start a stream or a document
		"quoted kinds":       "2:q:v1 5:p:v1 8:k:v1",
		"comments":           "13:example.com/d:v1",
		"k and dash lines":   "16:example.com/d:v1 err", // two kind lines: parsed, and it does not parse
		"tabs":               "12:example.com/d:v1 err", // a tab at column 0: parsed, and it does not parse
		"broken workload":    "14:example.com/d:v1 err",
		"long line crd":      "13:example.com/d:v1",
		"long line workload": "9:example.com/d:v1",
		"oversize":           "9:example.com/d:v1 23:example.com/d:v1 err",
		"oversize lines":     "err",
		"just under bound":   "3:j:v1",
	} {
		if got := refs(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

// A read error ends the scan as it ended the line scanner's: what was read
// is scanned, the last document included, and the error is returned.
func TestScanReadError(t *testing.T) {
	boom := errors.New("boom")
	in := deploy + "---\n" + deploy
	for name, r := range map[string]func() io.Reader{
		"timeout": func() io.Reader { return iotest.TimeoutReader(chunkReader{strings.NewReader(in), 100}) },
		"error":   func() io.Reader { return io.MultiReader(strings.NewReader(in[:150]), iotest.ErrReader(boom)) },
		"no progress": func() io.Reader {
			return io.MultiReader(strings.NewReader(in[:150]), stuckReader{})
		},
	} {
		want := result(scanLines(r()))
		got := result(Scan(r()))
		if !reflect.DeepEqual(got, want) || got.Err == "" {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// stuckReader returns nothing, and no error, forever.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

// FuzzScan: ScanBytes, Scan through readers that cut lines anywhere, and
// the line-by-line oracle find the same images, lines and errors.
func FuzzScan(f *testing.F) {
	for _, in := range scanCases {
		if len(in) < 4<<10 {
			f.Add([]byte(in))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := result(scanLines(bytes.NewReader(in)))
		for way, scan := range scanWays {
			if got := result(scan(in)); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s:\n got %+v\nwant %+v", way, got, want)
			}
		}
	})
}

// BenchmarkScan scans a real-shaped components file (about 1 MB, mostly
// CRDs, one Deployment).
func BenchmarkScan(b *testing.B) {
	res, err := gentree.Generate(filepath.Join(b.TempDir(), "t"), gentree.Options{Packages: 1, Shape: gentree.Real, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(res.Root, res.Packages[0].Dir, res.Packages[0].YAML))
	if err != nil {
		b.Fatal(err)
	}
	for name, scan := range map[string]func([]byte) ([]Found, error){
		"bytes":  ScanBytes,
		"reader": func(d []byte) ([]Found, error) { return Scan(bytes.NewReader(d)) },
		"lines":  func(d []byte) ([]Found, error) { return scanLines(bytes.NewReader(d)) },
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if found, err := scan(data); err != nil || len(found) == 0 {
					b.Fatalf("%d images, %v", len(found), err)
				}
			}
		})
	}
}

// TestFastPath: the documents of upstream components files that run no
// container are read by the line scan alone; only their workloads are
// parsed. A CRD's descriptions are block scalars and quoted keys indented
// under their keys, which hold no top-level key.
func TestFastPath(t *testing.T) {
	res, err := gentree.Generate(filepath.Join(t.TempDir(), "t"), gentree.Options{Packages: 1, Shape: gentree.Real, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(filepath.Join(res.Root, res.Packages[0].Dir, res.Packages[0].YAML))
	if err != nil {
		t.Fatal(err)
	}
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  annotations:\n    controller-gen.kubebuilder.io/version: v0.16.5\n  name: machines.cluster.x-k8s.io\nspec:\n  versions:\n  - schema:\n      openAPIV3Schema:\n        description: |-\n          Machine is the Schema for the machines API.\n          kind: Pod\n        properties:\n          \"x-kubernetes-preserve-unknown-fields\":\n            type: object\n          data:\n            description: >\n              folded\n              kind: Deployment\n            type: string\n"
	for _, tc := range []struct {
		name   string
		in     []byte
		parsed int
	}{
		{"gentree real shape", real, bytes.Count(real, []byte("\nkind: Deployment\n"))},
		{"controller-gen CRDs", []byte(crd + "---\n" + crd), 0},
		{"CRDs and a workload", []byte("# Source: components\n---\n" + crd + "---\n" + deploy + "---\nkind: ClusterRole\nrules:\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: ['get']\n"), 1},
		// Control: a column-0 line the scan does not read exactly sends
		// the CRD to the parser.
		{"column-0 complex key", []byte(crd + "? x\n: |\n  y\n"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s stream
			s.feed(tc.in)
			if _, err := s.end(io.EOF); err != nil {
				t.Fatal(err)
			}
			if tc.parsed == 0 && tc.name == "gentree real shape" {
				t.Fatal("the real-shaped file has no Deployment")
			}
			if s.parsed != tc.parsed {
				t.Errorf("%d documents parsed, want %d", s.parsed, tc.parsed)
			}
		})
	}
}
