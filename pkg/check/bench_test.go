package check

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/manifest"
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

// BenchmarkJudgeCRD judges the CRDs of the examples' core components (as
// JSON, as the loader hands them over), most of a cold check's CPU on
// real provider packages: decode, defaulting, conversion, validation.
func BenchmarkJudgeCRD(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "packages", "capi-providers-core", "files", "core-components.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	var crds [][]byte
	for _, d := range manifest.SplitDocs(data) {
		if o, _ := manifest.ParseDoc(d, "core-components.yaml"); o != nil && o.Kind == "CustomResourceDefinition" {
			crds = append(crds, manifest.JSON(o.Root))
		}
	}
	if len(crds) == 0 {
		b.Fatal("no CRD in the examples' core components")
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range crds {
			if v := judgeCRD(c, true); v.Refusal != "" {
				b.Fatal(v.Refusal)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(crds)), "ns/crd")
}
