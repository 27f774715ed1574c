package check

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
)

// crdRecorder is a load.CRDJudge that keeps a copy of the JSON of every
// CRD document the loader hands it (each distinct document once) and
// judges nothing.
type crdRecorder struct {
	mu       sync.Mutex
	seen     map[[32]byte]bool
	crds     [][]byte
	n, calls int
}

func (r *crdRecorder) Recall([32]byte) (model.AppliedObject, bool) {
	return model.AppliedObject{}, false
}

func (r *crdRecorder) Judge(sum [32]byte, _ model.AppliedObject, crd []byte) *model.CRDVerdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if crd != nil && !r.seen[sum] {
		r.seen[sum] = true
		r.n++
		r.crds = append(r.crds, append([]byte(nil), crd...))
	}
	return &model.CRDVerdict{}
}

// treeCRDs is the JSON of every distinct CRD document of the tree at
// root, as the loader hands it to the judge.
func treeCRDs(tb testing.TB, root string) [][]byte {
	tb.Helper()
	rec := &crdRecorder{seen: map[[32]byte]bool{}}
	if _, err := load.Tree(context.Background(), root, load.Options{CRDs: rec}); err != nil {
		tb.Fatalf("loading %s: %v", root, err)
	}
	tb.Logf("judge calls %d, distinct docs %d", rec.calls, rec.n)
	return rec.crds
}

// benchTree is the tree BenchmarkJudgeCRDTree judges the CRDs of:
// $PINSEAL_BENCH_TREE (a bench tree: `gentree -shape cozystack -n 100`),
// else the fixture tree.
func benchTree() string {
	if t := os.Getenv("PINSEAL_BENCH_TREE"); t != "" {
		return t
	}
	return filepath.Join("..", "..", "testdata", "tree")
}

// BenchmarkJudgeCRDTree judges every distinct CRD of a tree (benchTree)
// as the loader hands them over: the CRD judge's share of a cold check.
func BenchmarkJudgeCRDTree(b *testing.B) {
	crds := treeCRDs(b, benchTree())
	if len(crds) == 0 {
		b.Skip("no CRD in the tree")
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range crds {
			judgeCRD(c, true)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(crds)), "ns/crd")
}
