package check_test

import (
	"crypto/sha256"
	"slices"
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

func applyFindings(tree *model.Tree, memo check.CRDMemo) []report.Finding {
	in := check.NewInput(tree)
	in.CRDMemo = memo
	for _, c := range check.Builtin(nil, nil) {
		if c.ID == check.ComponentsApply {
			return c.Run(in)
		}
	}
	return nil
}

// TestComponentsApplyMemo: a memo filled by one run answers the next with
// the same findings; what the memo holds is believed (a refusal it holds
// is reported), except facts not judged for a CRD that must be judged.
func TestComponentsApplyMemo(t *testing.T) {
	tree := loadExamples(t)
	editCRD(t, tree, "capi-providers-infraprovider", func(v map[string]any) { version0(v)["storage"] = false })
	want := applyFindings(tree, nil)
	if len(want) != 1 {
		t.Fatalf("the mutated tree has %d components-apply findings, want 1: %v", len(want), want)
	}
	memo := &mapMemo{m: map[[32]byte]check.CRDFacts{}}
	for run := range 2 {
		if got := applyFindings(tree, memo); !slices.EqualFunc(got, want, func(a, b report.Finding) bool { return a.Message == b.Message && a.File == b.File }) {
			t.Fatalf("run %d with the memo: %v, want %v", run, got, want)
		}
	}
	if memo.recalled == 0 || len(memo.m) == 0 {
		t.Fatalf("the second run recalled %d facts of %d remembered", memo.recalled, len(memo.m))
	}

	clean := loadExamples(t)
	var sum [32]byte
	for _, o := range clean.Packages[0].Applied {
		if o.CRD != nil {
			sum = sha256.Sum256(o.CRD)
			break
		}
	}
	for _, tc := range []struct {
		name  string
		facts check.CRDFacts
		red   bool
	}{
		{"a refusal it holds is reported", check.CRDFacts{Refusal: "[held]", Judged: true}, true},
		{"facts never judged are judged again", check.CRDFacts{Refusal: "[held]"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			memo := &mapMemo{m: map[[32]byte]check.CRDFacts{sum: tc.facts}}
			got := applyFindings(clean, memo)
			if red := len(got) > 0; red != tc.red {
				t.Fatalf("findings %v, want red %v", got, tc.red)
			}
			if tc.red && (len(got) != 1 || !strings.Contains(got[0].Message, "[held]")) {
				t.Fatalf("findings %v, want one quoting the memo's refusal", got)
			}
		})
	}
}
