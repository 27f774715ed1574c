package load

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWalkMarksSubcharts: the walk tells the charts with a charts/
// directory (they render in a child) from those without, and childFirst
// loads them first, each group in walk order.
func TestWalkMarksSubcharts(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"a-plain/cm.yaml",
		"b-chart/Chart.yaml",
		"c-umbrella/Chart.yaml", "c-umbrella/charts/lib/Chart.yaml",
		"d-chart/Chart.yaml", "d-chart/charts", // a file named charts: no subcharts
		"e-umbrella/Chart.yaml", "e-umbrella/charts/lib-1.0.0.tgz",
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("name: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cands, _, probs := walk(context.Background(), root, nil, &skips{})
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	var got []string
	for _, c := range cands {
		if c.subcharts {
			got = append(got, c.rel)
		}
	}
	if want := []string{"c-umbrella", "e-umbrella"}; !slices.Equal(got, want) {
		t.Fatalf("charts with subcharts: %q, want %q", got, want)
	}
	got = nil
	for _, i := range childFirst(cands) {
		got = append(got, cands[i].rel)
	}
	if want := []string{"c-umbrella", "e-umbrella", "a-plain", "b-chart", "d-chart"}; !slices.Equal(got, want) {
		t.Fatalf("load order %q, want %q", got, want)
	}
}

// TestAwayInChild: a package waiting for its render child gives its turn
// at the CPU up (another package can take it) and has it back after.
func TestAwayInChild(t *testing.T) {
	spares := 0
	l := &scanner{turns: make(chan struct{}, 1), spare: func() { spares++ }}
	l.turns <- struct{}{} // this package's turn
	freed := false
	l.awayInChild(func() {
		select {
		case l.turns <- struct{}{}: // another package takes the turn
			freed = true
			<-l.turns
		default:
		}
	})
	if !freed {
		t.Fatal("the turn was not given up while waiting for the child")
	}
	if spares != 1 {
		t.Fatalf("%d spare workers asked for, want 1 to take the turn", spares)
	}
	if len(l.turns) != 1 {
		t.Fatalf("%d turns held after the wait, want this package's one", len(l.turns))
	}
	// A load of one package (Package) has no turns to give.
	ran := false
	(&scanner{}).awayInChild(func() { ran = true })
	if !ran {
		t.Fatal("fn did not run")
	}
}
