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

// BenchmarkSizeNearWarning sizes the release of a core provider package
// 2.5–4.5 % under the warning line, as a quarter of Cozystack's provider
// packages lie: every stage runs but the exact encoding.
func BenchmarkSizeNearWarning(b *testing.B) {
	yml := manifestgen.Generate(manifestgen.Spec{Provider: "p", Prefix: "p", Group: "g.io", Kinds: []string{"PCluster", "PMachine"}, Size: 2 << 20, Seed: 3})
	// The exact size grows about linearly with the YAML: the secant
	// method finds a length in a few encodings.
	exactOf := func(n int) float64 { e, _ := providerRelease(b, yml[:n], 0, true).exact(); return float64(e) }
	lo, hi, want := 256<<10, len(yml), releaseWarnLine*0.965
	elo, ehi := exactOf(lo), exactOf(hi)
	var in *Input
	for range 12 {
		n := lo + int(float64(hi-lo)*(want-elo)/(ehi-elo))
		if e := exactOf(n); e < releaseWarnLine*0.955 {
			lo, elo = n, e
		} else if e > releaseWarnLine*0.975 {
			hi, ehi = n, e
		} else {
			in = providerRelease(b, yml[:n], 0, true)
			break
		}
	}
	if in == nil {
		b.Fatal("no YAML length puts the release 2.5–4.5 % under the warning line")
	}
	b.ReportAllocs()
	for b.Loop() {
		if got := in.Size(); got == nil || got.Exact {
			b.Fatalf("size %+v: want one decided by bounds", got)
		}
	}
}
