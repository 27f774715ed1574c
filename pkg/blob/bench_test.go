package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
)

// benchBlob is a ~1 MB provider manifest and its gzip -9 blob, shaped like
// the real thing (CRD schemas with long descriptions, deep indentation).
func benchBlob(b *testing.B) (yaml, gz []byte) {
	b.Helper()
	yaml = manifestgen.Generate(manifestgen.Spec{
		Provider: "infrastructure-bench", Prefix: "capbn", Group: "infrastructure.cluster.x-k8s.io",
		Kinds: []string{"BenchCluster", "BenchMachine"}, Image: "example.com/capbn:v1", Size: 1 << 20, Seed: 7,
	})
	gz, err := CompressBytes(yaml)
	if err != nil {
		b.Fatal(err)
	}
	return yaml, gz
}

// BenchmarkInspectExpect inspects a blob whose inflated bytes are known
// (the verifier's usual case: the blob of a vendored YAML); bytes/s are
// of the inflated manifest.
func BenchmarkInspectExpect(b *testing.B) {
	yaml, gz := benchBlob(b)
	exp := &Expect{Data: yaml, SHA256: sha256.Sum256(yaml)}
	run := func(name string, inspect func(w io.Writer, exp *Expect) Info) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(yaml)))
			b.ReportAllocs()
			for b.Loop() {
				if info := inspect(io.Discard, exp); info.Err != nil || info.RawSHA256 != exp.SHA256 {
					b.Fatalf("%v", info.Err)
				}
			}
		})
	}
	run("stream", func(w io.Writer, exp *Expect) Info { return InspectExpect(bytes.NewReader(gz), 0, w, exp) })
	run("bytes", func(w io.Writer, exp *Expect) Info { return InspectBytes(context.Background(), gz, 0, w, exp) })
	run("stream-noexpect", func(w io.Writer, _ *Expect) Info { return InspectExpect(bytes.NewReader(gz), 0, w, nil) })
}
