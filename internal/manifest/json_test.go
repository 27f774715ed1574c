package manifest

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

// oddDocs are documents whose JSON the direct way must write as Decode and
// Marshal do, or leave to them.
var oddDocs = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: \"y\"}\ndata: {a: '1', b: [1, 2.5, true, null]}\n",
	"\"apiVersion\": v1\n'kind': ConfigMap\nmetadata:\n  \"name\": x # comment\n",
	"kind: A\nbase: &b {x: 1, y: [a, b]}\ncopy: *b\nmerged:\n  <<: *b\n  z: 2\n",
	"kind: A\ndesc: |\n  line one\n  ---\n  <b>&amp;</b> \"quoted\" \\ back\n  \u2028 sep\nfolded: >-\n  a\n  b\n",
	"kind: A\nints: [0, -1, 007, +5, 1_000, 0x1F, 0o17, 0b101, -0, 123456789012345678, 1234567890123456789, 99999999999999999999]\n",
	"kind: A\nfloats: [1.5, -0.0, 1e3, .inf, -.Inf, .nan, 6.02e+23]\n",
	"kind: A\nbools: [true, false, True, FALSE, yes, no, on, off, y, n]\nnulls: [~, null, Null, NULL, ]\nempty:\n",
	"kind: A\ntagged: [!!str 123, !!int '7', !!float '2', !!bool 'true', !!null '', !custom x, !!binary aGVsbG8=, !!binary 4pyTIMOgIGxh]\n",
	"kind: A\ntimes: [2001-12-14, 2001-12-14t21:59:43.10-05:00, 1999-99-99]\n",
	"kind: A\nkeys:\n  1: a\n  true: b\n",
	"kind: A\nkeys: {? [a, b] : c}\n",
	"kind: A\nmap: !!map {a: 1}\nseq: !!seq [1]\nset: !!set {a, b}\nomap: !!omap [a: 1]\n",
	"kind: A\nctl: \"\\x01\\b\\f\\t\\r\\n\\x7f\\u00e9\\U0001F600\"\nbad: \"\\xff\"\n",
	"kind: A\nZ: 1\na: 2\nB: 3\n\"\": 4\nä: 5\n",
	"kind: A\nnested: [[], {}, [{a: [b]}], '']\n",
	"kind: A\nbig: !!int 99999999999999999999999\nhuge: 1e400\n",
	"- a\n- b\n",
	"kind: A\nself: &s [*s]\n",
}

// TestJSONIsDecodeMarshal: JSON writes every document of the fixture
// trees, the examples, a cozystack-shaped bench tree and the odd
// documents above byte for byte as Decode into an any and json.Marshal do
// (nil where they fail), and writes the bench tree's components
// directly.
func TestJSONIsDecodeMarshal(t *testing.T) {
	for _, d := range oddDocs {
		sameJSON(t, "odd", []byte(d))
	}
	for _, root := range []string{filepath.Join("..", "..", "testdata"), filepath.Join("..", "..", "examples")} {
		eachYAML(t, root, func(path string, data []byte) { sameJSON(t, path, data) })
	}
	bench := filepath.Join(t.TempDir(), "bench")
	if _, err := gentree.Generate(bench, gentree.Options{Packages: 4, Shape: gentree.Cozystack, Size: 256 << 10, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var docs int
	eachYAML(t, bench, func(path string, data []byte) {
		docs += sameJSON(t, path, data)
		if !strings.Contains(filepath.ToSlash(path), "/files/") {
			return // templates, not what the API server gets
		}
		for _, d := range SplitDocs(data) {
			if o, _ := ParseDoc(d, path); o != nil {
				var w jsonWriter
				if r := w.node(o.Root); r != jsonDone {
					t.Errorf("%s:%d: the bench tree's %s %s was not written directly (%d)", path, o.Line, o.Kind, o.Name, r)
				}
			}
		}
	})
	if docs < 40 {
		t.Fatalf("%d documents in the bench tree", docs)
	}
}

// sameJSON compares JSON with Decode and Marshal on every object of data
// and returns how many it compared.
func sameJSON(t *testing.T, name string, data []byte) int {
	t.Helper()
	n := 0
	for _, d := range SplitDocs(data) {
		o, _ := ParseDoc(d, name)
		if o == nil {
			continue
		}
		n++
		if got, want := JSON(o.Root), jsonByDecode(o.Root); !bytes.Equal(got, want) {
			t.Errorf("%s:%d: JSON\n%s\nwant (Decode, Marshal)\n%s", name, o.Line, got, want)
		}
	}
	return n
}

func eachYAML(t *testing.T, root string, f func(path string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f(path, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzJSON holds JSON to Decode and Marshal on any text, and the string
// quoting to json.Marshal's.
func FuzzJSON(f *testing.F) {
	for _, d := range oddDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		sameJSON(t, "fuzz", data)
		want, _ := json.Marshal(string(data))
		if got := appendJSONString(nil, string(data)); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", data, got, want)
		}
	})
}
