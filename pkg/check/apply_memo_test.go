package check_test

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// mapMemo is a check.CRDMemo in memory that counts its answers.
type mapMemo struct {
	mu       sync.Mutex
	m        map[[32]byte]check.CRDFacts
	recalled int
}

func (m *mapMemo) Recall(sum [32]byte) (check.CRDFacts, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.m[sum]
	if ok {
		m.recalled++
	}
	return f, ok
}

func (m *mapMemo) Remember(sum [32]byte, f check.CRDFacts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[sum] = f
}

func applyFindings(tree *model.Tree) []report.Finding {
	in := check.NewInput(tree)
	for _, c := range check.Builtin(nil, nil) {
		if c.ID == check.ComponentsApply {
			return c.Run(in)
		}
	}
	return nil
}

// applied lists every package's Applied objects.
func applied(tree *model.Tree) [][]model.AppliedObject {
	var out [][]model.AppliedObject
	for _, p := range tree.Packages {
		out = append(out, p.Applied)
	}
	return out
}

// TestComponentsApplyMemo: a memo filled by one load answers the next for
// every CRD, which is then not parsed, with the same objects and
// verdicts; what the memo holds is believed (a refusal it holds is
// reported).
func TestComponentsApplyMemo(t *testing.T) {
	memo := &mapMemo{m: map[[32]byte]check.CRDFacts{}}
	first := loadExamplesWith(t, check.NewCRDJudge(memo))
	var crds int
	for _, objs := range applied(first) {
		for _, o := range objs {
			if o.Kind == "CustomResourceDefinition" {
				crds++
			}
		}
	}
	if crds == 0 || len(memo.m) != crds {
		t.Fatalf("the first load remembered %d facts for %d CRDs", len(memo.m), crds)
	}
	if fs := applyFindings(first); len(fs) != 0 {
		t.Fatalf("components-apply red on the examples: %v", fs)
	}
	second := loadExamplesWith(t, check.NewCRDJudge(memo))
	if memo.recalled != crds {
		t.Fatalf("the second load recalled %d facts for %d CRDs", memo.recalled, crds)
	}
	if !reflect.DeepEqual(applied(second), applied(first)) {
		t.Fatal("the objects recalled are not the objects parsed")
	}

	var held [32]byte
	for sum, f := range memo.m {
		if f.Name == "clusters.cluster.x-k8s.io" {
			held = sum
			f.Refusal = "[held]"
			memo.m[sum] = f
		}
	}
	if held == ([32]byte{}) {
		t.Fatal("no facts of clusters.cluster.x-k8s.io remembered")
	}
	got := applyFindings(loadExamplesWith(t, check.NewCRDJudge(memo)))
	if len(got) != 1 || !strings.Contains(got[0].Message, "[held]") || !strings.Contains(got[0].Message, "clusters.cluster.x-k8s.io") {
		t.Fatalf("findings %v, want one quoting the memo's refusal", got)
	}
}

// TestComponentsApplyUnjudged: a tree loaded with no judge does not pass
// components-apply on CRDs nobody judged.
func TestComponentsApplyUnjudged(t *testing.T) {
	got := applyFindings(loadExamplesWith(t, nil))
	if len(got) == 0 || !strings.Contains(got[0].Message, "was not judged") {
		t.Fatalf("findings %v, want the CRDs named as not judged", got)
	}
}
