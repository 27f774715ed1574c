package load

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/render"
)

// BenchmarkTree loads synthetic trees written by internal/testkit/gentree (the core
// package plus N packages × manifest size). The bytes/op figure is the
// manifests' total size; memory per op shows the loader does not hold every
// blob.
func BenchmarkTree(b *testing.B) {
	for _, tc := range []struct{ n, size int }{{20, 1 << 20}, {100, 100 << 10}} {
		b.Run(fmt.Sprintf("%dx%dKiB", tc.n, tc.size>>10), func(b *testing.B) {
			gen, err := gentree.Generate(filepath.Join(b.TempDir(), "tree"), gentree.Options{Packages: tc.n + 1, Size: int64(tc.size), Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			root := gen.Root
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
					_, by := p.Layout.ComponentsYAML(p.ConfigMaps[0])
					if len(p.Problems) > 0 || p.ConfigMaps[0].Components.Diff != nil || by != model.MatchedByPin {
						b.Fatalf("%s: %+v", p.Path, p.Problems)
					}
				}
			}
		})
	}
}

// BenchmarkRenderChart renders each example chart in process (Helm's
// engine, unbounded) and bounded (in a child process with the time, memory
// and output bounds): the difference is what the bound costs per chart.
// "bounded" reuses the idle child as a tree load does; "bounded-cold"
// starts a new child for every chart (the first chart of a load, or one
// after a bomb).
func BenchmarkRenderChart(b *testing.B) {
	for _, name := range []string{"capi-providers-core", "capi-providers-infraprovider"} {
		dir, err := filepath.Abs(filepath.Join("../../examples/packages", name))
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name string
			lim  render.Limits
			cold bool
		}{{"in-process", render.Limits{InProcess: true}, false}, {"bounded", render.Limits{}, false}, {"bounded-cold", render.Limits{}, true}} {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				sb := render.New(nil)
				defer sb.Close()
				l := &scanner{root: filepath.Dir(dir), opts: Options{Render: mode.lim}.withDefaults(), sandbox: sb}
				p := newPackage(candidate{dir: dir, rel: name, chart: true})
				files, _, probs, fatal, _ := l.collectChart(p)
				if fatal || len(probs) > 0 {
					b.Fatalf("%s: %+v", name, probs)
				}
				for b.Loop() {
					if mode.cold {
						b.StopTimer()
						sb.Close()
						b.StartTimer()
					}
					objs, probs := l.renderChart(context.Background(), files, "", "default", nil, nil, false)
					if len(objs) == 0 || len(probs) > 0 {
						b.Fatalf("%s: %d objects, %+v", name, len(objs), probs)
					}
				}
			})
		}
	}
}
