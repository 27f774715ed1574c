package manifest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
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
