package load

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/fixture"
)

// BenchmarkTree loads synthetic trees (N packages × manifest size). The
// bytes/op figure is the manifests' total size; memory per op shows the
// loader does not hold every blob.
func BenchmarkTree(b *testing.B) {
	for _, tc := range []struct{ n, size int }{{20, 1 << 20}, {100, 100 << 10}} {
		b.Run(fmt.Sprintf("%dx%dKiB", tc.n, tc.size>>10), func(b *testing.B) {
			root, err := fixture.Synthetic(filepath.Join(b.TempDir(), "tree"), tc.n, tc.size)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(tc.n+1) * int64(tc.size))
			b.ResetTimer()
			for b.Loop() {
				tr, err := Tree(context.Background(), root, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if len(tr.Packages) != tc.n+1 {
					b.Fatalf("%d packages", len(tr.Packages))
				}
				for _, p := range tr.Packages {
					if len(p.Problems) > 0 || p.ConfigMaps[0].Components.Diff != nil || p.ConfigMaps[0].Components.MatchedBy != MatchedByPin {
						b.Fatalf("%s: %+v", p.Path, p.Problems)
					}
				}
			}
		})
	}
}
