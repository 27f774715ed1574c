package patch

import (
	"fmt"
	"slices"
	"strings"
)

// HunkResult says where a hunk applied.
type HunkResult struct {
	Hunk   int // 1-based
	Line   int // 1-based line of the original file where the hunk's old lines start
	Offset int // lines away from where the header said (0: exactly there)
}

// ApplyError is a hunk that does not apply. Its message names the patch, the
// target file, the hunk with its @@ header and the first line that differs
// where the hunk was expected.
type ApplyError struct {
	Patch  string // patch name
	Target string // target file (as named by the diff)
	Hunk   int    // 1-based hunk number
	Header string // the hunk's @@ line
	// Line is the 1-based line of the target file holding the first
	// mismatch at the hunk's expected position; 0 if the file is too short.
	Line  int
	Want  string // the line the patch expects there (without newline)
	Got   string // the line the file has (without newline); "" at end of file
	EOF   bool   // the file ends before the hunk does
	Hint  string // e.g. the change seems already applied
	Cause string // set for errors that are not a mismatch
}

func (e *ApplyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "patch %s: %s: hunk #%d %s does not apply", e.Patch, e.Target, e.Hunk, e.Header)
	switch {
	case e.Cause != "":
		fmt.Fprintf(&b, ": %s", e.Cause)
	case e.EOF:
		fmt.Fprintf(&b, ": expected %q at line %d but the file ends at line %d", e.Want, e.Line, e.Line-1)
	default:
		fmt.Fprintf(&b, ": line %d is %q, the patch expects %q", e.Line, e.Got, e.Want)
	}
	b.WriteString(" (no offset matched either)")
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Apply applies the file diff to src and returns the new content. Every
// hunk must match exactly; a hunk may sit at an offset from its header's
// line (nearest first, never before the previous hunk's end). Nothing is
// partially applied: on error src is returned untouched along with an
// *ApplyError.
func (fd *FileDiff) Apply(src []byte) ([]byte, []HunkResult, error) {
	lines := splitLines(src)
	ix := newLineIndex(lines)
	var out []string
	var results []HunkResult
	pos := 0    // next unconsumed line of lines
	offset := 0 // cumulative offset found so far, applied to later hunks
	for i, h := range fd.Hunks {
		old, neu := h.sides()
		// The header's old start is 1-based; for a pure insertion (count 0)
		// it names the line after which the new lines go.
		want := h.OldStart - 1
		if h.OldLines == 0 {
			want = h.OldStart
		}
		want += offset
		at, ok := ix.find(old, want, pos)
		if !ok {
			return src, results, fd.mismatch(i, h, ix, old, neu, max(want, pos))
		}
		out = append(out, lines[pos:at]...)
		out = append(out, neu...)
		pos = at + len(old)
		offset = at - (want - offset)
		results = append(results, HunkResult{Hunk: i + 1, Line: at + 1, Offset: offset})
	}
	out = append(out, lines[pos:]...)
	// A line that lost its newline must be the last one.
	for i, l := range out[:max(len(out)-1, 0)] {
		if !strings.HasSuffix(l, "\n") {
			return src, results, &ApplyError{Patch: fd.Patch, Target: fd.Target(), Hunk: len(fd.Hunks), Header: fd.Hunks[len(fd.Hunks)-1].Header,
				Cause: fmt.Sprintf("the result would have line %d without a newline in the middle of the file (misplaced \"\\ No newline at end of file\")", i+1)}
		}
	}
	return []byte(strings.Join(out, "")), results, nil
}

// sides returns the hunk's old lines (context and removed) and new lines
// (context and added).
func (h *Hunk) sides() (old, neu []string) {
	for _, l := range h.Lines {
		if l.Op != '+' {
			old = append(old, l.Text)
		}
		if l.Op != '-' {
			neu = append(neu, l.Text)
		}
	}
	return old, neu
}

func matchAt(lines, old []string, at int) bool {
	if at < 0 || at+len(old) > len(lines) {
		return false
	}
	for i, l := range old {
		if lines[at+i] != l {
			return false
		}
	}
	return true
}

// mismatch describes the first differing line at the expected position.
func (fd *FileDiff) mismatch(i int, h *Hunk, ix *lineIndex, old, neu []string, at int) *ApplyError {
	e := &ApplyError{Patch: fd.Patch, Target: fd.Target(), Hunk: i + 1, Header: h.Header}
	if ix.spent {
		e.Cause = fmt.Sprintf("it was searched for at %d positions of the %d-line file without being found, and searching stopped there (are the hunks' @@ lines far from where they apply?)",
			searchSteps*len(ix.lines)+searchSlack, len(ix.lines))
		return e
	}
	lines := ix.lines
	for k, l := range old {
		n := at + k
		if n >= len(lines) {
			e.Line, e.Want, e.EOF = n+1, describe(l), true
			break
		}
		if lines[n] != l {
			e.Line, e.Want, e.Got = n+1, describe(l), describe(lines[n])
			break
		}
	}
	if e.Line == 0 {
		// The lines match but not at a permitted position (overlap with
		// the previous hunk).
		e.Cause = "its lines only match before the end of the previous hunk (overlapping or out-of-order hunks)"
	}
	if len(neu) > 0 {
		if _, ok := ix.find(neu, at, 0); ok && !slices.Equal(old, neu) {
			e.Hint = "the change seems to be applied already (is the upstream file already patched, or the patch listed twice?)"
		}
	}
	return e
}

func describe(l string) string {
	if strings.HasSuffix(l, "\n") {
		return strings.TrimSuffix(l, "\n")
	}
	return l + ` [no newline at end of file]`
}
