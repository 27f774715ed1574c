package releasesize

import (
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
)

// BenchmarkSize sizes a provider package's release (1 MiB of YAML, its
// blob and the ConfigMap holding it) with the raw YAML shipped beside the
// blob, as in Cozystack's packages: the bounds, and the twin stage where
// they straddle a line.
func BenchmarkSize(b *testing.B) {
	yml := manifestgen.Generate(manifestgen.Spec{Size: 1 << 20})
	in := providerRelease(b, yml, 0, true)
	b.SetBytes(int64(len(yml)))
	b.ReportAllocs()
	for b.Loop() {
		if in.Size() == nil {
			b.Fatal("no size")
		}
	}
}
