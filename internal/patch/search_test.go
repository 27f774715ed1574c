package patch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// hostilePatches are diffs against a 1 MiB file written to make a naive
// search take time quadratic in the file: a hunk of thousands of lines
// that match everywhere but at their end, and thousands of hunks whose @@
// lines each send the search half a file away from where they match.
func hostilePatches() (src string, diffs map[string]string) {
	const n = 1 << 19 // lines of "a\n": 1 MiB
	var file strings.Builder
	for i := range n {
		if i > 0 && i%64 == 0 && i < n/2 {
			fmt.Fprintf(&file, "y%d\n", i)
		} else {
			file.WriteString("a\n")
		}
	}
	var long strings.Builder
	long.WriteString("--- a/f\n+++ b/f\n@@ -1,4001 +1,4001 @@\n")
	for range 4000 {
		long.WriteString(" a\n")
	}
	long.WriteString("-y64\n+z\n")
	var far strings.Builder
	far.WriteString("--- a/f\n+++ b/f\n")
	for k := 1; k < 2000; k++ {
		i := k * 64
		fmt.Fprintf(&far, "@@ -%d,2 +%d,2 @@\n a\n-y%d\n+z%d\n", k*n/2, k*n/2, i, i)
	}
	return file.String(), map[string]string{"long hunk": long.String(), "hunks far from their headers": far.String()}
}

// TestApplyHostileBounded: the hostile patches end (applied or refused
// with an ApplyError) in well under a second each on a 1 MiB file, where
// a naive search took minutes; the file's hunks that do apply still apply.
func TestApplyHostileBounded(t *testing.T) {
	src, diffs := hostilePatches()
	for name, d := range diffs {
		t.Run(name, func(t *testing.T) {
			fd := mustParse(t, d)
			// Bounds of the work, in CPU time (a busy machine stretches
			// wall-clock time, not this).
			var err error
			took := timebound.Work(func() { _, _, err = fd.Apply([]byte(src)) })
			t.Logf("%s: %s of CPU (%v)", name, took, err)
			if took > 3*time.Second {
				t.Errorf("Apply took %s of CPU on a 1 MiB file", took)
			}
			if err == nil {
				t.Fatal("the hostile patch applied")
			}
			if _, ok := err.(*ApplyError); !ok {
				t.Fatalf("error %T %v, want *ApplyError", err, err)
			}
			if took := timebound.Work(func() { _, _, err = fd.Unapply([]byte(src)) }); took > 3*time.Second || err == nil {
				t.Errorf("Unapply: %s of CPU, %v", took, err)
			}
		})
	}
}

// TestApplySearchBudget: a hunk far from its header is still found (the
// search budget is per line of the file, not a fixed reach), and one past
// the budget is refused with an error saying why.
func TestApplySearchBudget(t *testing.T) {
	var file strings.Builder
	for range 10000 {
		file.WriteString("a\n")
	}
	file.WriteString("b\n")
	fd := mustParse(t, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
	out, res, err := fd.Apply([]byte(file.String()))
	if err != nil || !strings.HasSuffix(string(out), "a\nc\n") || res[0].Offset != 9999 {
		t.Fatalf("hunk 9999 lines from its header: %v %+v", err, res)
	}
	ix := newLineIndex(splitLines([]byte(file.String())))
	ix.budget = 100
	if _, ok := ix.find([]string{"a\n", "b\n"}, 0, 0); ok || !ix.spent {
		t.Fatalf("search past its budget: found %v, spent %v", ok, ix.spent)
	}
	e := fd.mismatch(0, fd.Hunks[0], ix, []string{"a\n", "b\n"}, nil, 0)
	if !strings.Contains(e.Error(), "searching stopped") {
		t.Fatalf("error %q does not say the search stopped", e)
	}
}

// naiveFind is the search the line index replaced: every position, nearest
// want first, compared line by line.
func naiveFind(lines, old []string, want, from int) (int, bool) {
	last := len(lines) - len(old)
	if last < from {
		return 0, false
	}
	want = max(min(want, last), from)
	for d := 0; ; d++ {
		lo, hi := want-d, want+d
		if lo < from && hi > last {
			return 0, false
		}
		if lo >= from && matchAt(lines, old, lo) {
			return lo, true
		}
		if d > 0 && hi <= last && matchAt(lines, old, hi) {
			return hi, true
		}
	}
}

// FuzzLineIndexFind: the hashed search finds exactly what comparing every
// position line by line finds, wherever its budget lasts.
func FuzzLineIndexFind(f *testing.F) {
	f.Add("a\nb\na\nb\nc\n", "a\nb\n", 3, 0)
	f.Add("x\nx\nx\nx\n", "x\nx\n", 0, 2)
	f.Add("a\nb\n", "c\n", 1, 0)
	f.Add("a\r\nb\na\n", "a\n", 0, 0)
	f.Fuzz(func(t *testing.T, file, hunk string, want, from int) {
		lines, old := splitLines([]byte(file)), splitLines([]byte(hunk))
		if from < 0 || from > len(lines) || want < -len(lines) || want > 2*len(lines) {
			return
		}
		ix := newLineIndex(lines)
		got, ok := ix.find(old, want, from)
		wantAt, wantOK := naiveFind(lines, old, want, from)
		if ix.spent {
			return
		}
		if ok != wantOK || (ok && got != wantAt) {
			t.Fatalf("find(%q in %q, want %d, from %d) = %d, %v; line by line: %d, %v", old, lines, want, from, got, ok, wantAt, wantOK)
		}
	})
}
