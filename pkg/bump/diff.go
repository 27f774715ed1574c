package bump

import (
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/internal/lcs"
)

// unifiedDiff returns a unified diff (3 lines of context) of two texts,
// "" when they are equal. It is meant for the small text files a bump edits
// (pin.yaml, Makefile, templates); the vendored files are listed, not
// diffed.
func unifiedDiff(name string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	xa, ya := splitLines(string(a)), splitLines(string(b))
	ops, ok := diffLines(xa, ya)
	if !ok {
		return fmt.Sprintf("--- a/%s\n+++ b/%s\n(too large to diff: %d -> %d lines)\n", name, name, len(xa), len(ya))
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		start, end := max(k-diffContext, 0), hunkEnd(ops, k)
		writeHunk(&out, ops[start:end])
		k = end
	}
	return out.String()
}

// diffContext is how many common lines a hunk shows around a change.
const diffContext = 3

// diffOp is one line of an edit script.
type diffOp struct {
	kind byte // ' ', '-', '+'
	text string
	ai   int // line in a (0-based) of ' ' and '-'
	bi   int
}

// diffLines is the edit script turning xa into ya. Common head and tail
// lines are context; the LCS runs on the middle, and not at all (ok false)
// when the middle is too large.
func diffLines(xa, ya []string) (ops []diffOp, ok bool) {
	pre := 0
	for pre < len(xa) && pre < len(ya) && xa[pre] == ya[pre] {
		pre++
	}
	suf := 0
	for suf < len(xa)-pre && suf < len(ya)-pre && xa[len(xa)-1-suf] == ya[len(ya)-1-suf] {
		suf++
	}
	x, y := xa[pre:len(xa)-suf], ya[pre:len(ya)-suf]
	if len(x)*len(y) > 4<<20 {
		return nil, false
	}
	for k := 0; k < pre; k++ {
		ops = append(ops, diffOp{' ', xa[k], k, k})
	}
	for _, e := range lcs.Edits(x, y) {
		var text string
		if e.Kind == '+' {
			text = y[e.B]
		} else {
			text = x[e.A] // a kept line is the same in both
		}
		ops = append(ops, diffOp{e.Kind, text, pre + e.A, pre + e.B})
	}
	for k := 0; k < suf; k++ {
		ops = append(ops, diffOp{' ', xa[len(xa)-suf+k], len(xa) - suf + k, len(ya) - suf + k})
	}
	return ops, true
}

// hunkEnd returns where the hunk holding the change at ops[k] ends: after
// the last change that is at most 2*diffContext common lines from the
// one before it, plus diffContext lines of context.
func hunkEnd(ops []diffOp, k int) int {
	end := k
	for end < len(ops) {
		if ops[end].kind != ' ' {
			end++
			continue
		}
		run := end
		for run < len(ops) && ops[run].kind == ' ' {
			run++
		}
		if run == len(ops) || run-end > 2*diffContext {
			return min(end+diffContext, len(ops))
		}
		end = run
	}
	return end
}

// writeHunk writes one hunk: its @@ header, then its lines.
func writeHunk(out *strings.Builder, hunk []diffOp) {
	aStart, bStart, aLen, bLen := hunk[0].ai, hunk[0].bi, 0, 0
	for _, o := range hunk {
		if o.kind != '+' {
			aLen++
		}
		if o.kind != '-' {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range hunk {
		out.WriteByte(o.kind)
		out.WriteString(o.text)
		if !strings.HasSuffix(o.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
