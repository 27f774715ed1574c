package manifest

import (
	"encoding/base64"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

// BenchmarkParseConfigMap parses a rendered components ConfigMap with a
// blob of the size real packages carry (~170 KB of base64) as pkg/load
// gets it, a string: copied to bytes and parsed (Parse), or parsed as the
// string (ParseString).
func BenchmarkParseConfigMap(b *testing.B) {
	raw := make([]byte, 128<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v0.17.5-addon-synth0005\n  labels:\n    provider-components: addon-synth0005\n" +
		"binaryData:\n  components: H4sI" + base64.StdEncoding.EncodeToString(raw) + "\ndata:\n  metadata: |\n    apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n    kind: Metadata\n"
	for _, tc := range []struct {
		name  string
		parse func() ([]*Object, int)
	}{
		{"bytes", func() ([]*Object, int) { o, p := Parse([]byte(text), "cm.yaml"); return o, len(p) }},
		{"string", func() ([]*Object, int) { o, p := ParseString(text, "cm.yaml"); return o, len(p) }},
		{"docs-bytes", func() ([]*Object, int) { // as the render fast path parsed before ParseStringDocs
			var objs []*Object
			for _, d := range SplitDocs([]byte(text)) {
				o, _ := ParseDoc(d, "cm.yaml")
				objs = append(objs, o)
			}
			return objs, 0
		}},
		{"docs-string", func() ([]*Object, int) {
			var objs []*Object
			for _, d := range ParseStringDocs(text, "cm.yaml") {
				objs = append(objs, d.Object)
			}
			return objs, 0
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if objs, np := tc.parse(); len(objs) != 1 || np != 0 || !strings.HasPrefix(LookupPath(objs[0].Root, "binaryData", "components").Value, "H4sI") {
					b.Fatal("parse failed")
				}
			}
		})
	}
}

// BenchmarkScanner scans a components file as a blob inflates into it
// (32 KiB writes): PINSEAL_BENCH_MANIFEST names a real one, else a
// synthetic stream of CRD-shaped documents.
func BenchmarkScanner(b *testing.B) {
	data := []byte(strings.Repeat("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a\nspec:\n"+
		strings.Repeat("    description: a field of the spec that does something\n      type: string\n", 200)+"---\n", 60))
	if f := os.Getenv("PINSEAL_BENCH_MANIFEST"); f != "" {
		var err error
		if data, err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		s := &Scanner{}
		for p := data; len(p) > 0; p = p[min(len(p), 32<<10):] {
			_, _ = s.Write(p[:min(len(p), 32<<10)])
		}
		if o := s.Result(); o.Problem != "" {
			b.Fatal(o.Problem)
		}
	}
}

// BenchmarkCRDJSON writes the JSON of a cozystack-shaped bench tree's
// CRDs the way pkg/load hands them to the CRD judge: from the bytes
// (AppendDocJSON), or parsed into a tree first (ParseDoc, AppendJSON).
func BenchmarkCRDJSON(b *testing.B) {
	dir := b.TempDir()
	if _, err := gentree.Generate(dir, gentree.Options{Packages: 1, Shape: gentree.Cozystack, Size: 256 << 10, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	var docs []Doc
	var size int64
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, "-components.yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		for _, d := range SplitDocs(data) {
			if d.MayBeKind("CustomResourceDefinition") {
				docs, size = append(docs, d), size+int64(len(d.Bytes()))
			}
		}
		return err
	})
	if err != nil || len(docs) == 0 {
		b.Fatalf("%d CRDs: %v", len(docs), err)
	}
	var buf []byte
	b.Run("bytes", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, d := range docs {
				var ok bool
				if _, buf, ok = AppendDocJSON(buf[:0], d); !ok {
					b.Fatal("declined")
				}
			}
		}
	})
	b.Run("tree", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			for _, d := range docs {
				o, _ := ParseDoc(d, "c.yaml")
				buf = AppendJSON(buf[:0], o.Root)
			}
		}
	})
}
