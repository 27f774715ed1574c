package check

import (
	"fmt"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

// synthetic builds a tree of n packages in one namespace, each with one
// pinned provider and its own selector labels.
func synthetic(n int) *model.Tree {
	tree := &model.Tree{Root: "/tree"}
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		kind := "InfrastructureProvider"
		if i == 0 {
			kind, name = "CoreProvider", "cluster-api"
		}
		pkg := newPkg("packages/"+name, "pin.yaml", provSpec{
			kind: kind, name: name, version: "v1.10.1", release: "v1.10.1-" + name,
			labels: map[string]string{"components": "cozy", "provider": name},
			yaml:   "files/components.yaml", blobFile: "files/components.gz", meta: "files/metadata.yaml",
			series: []model.ReleaseSeries{{Major: 1, Minor: 10, Contract: "v1beta1"}},
		})
		if i == 0 {
			tree.Core = pkg
		}
		tree.Packages = append(tree.Packages, pkg)
	}
	return tree
}

// BenchmarkBuiltin runs every built-in check over synthetic trees; time per
// package should stay flat as the tree grows (the checks are linear).
func BenchmarkBuiltin(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		tree := synthetic(n)
		if fs := runAll(tree); len(fs) != 0 {
			b.Fatalf("synthetic tree has findings: %v", fs[0])
		}
		b.Run(fmt.Sprintf("packages=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				runAll(tree)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/package")
		})
	}
}
