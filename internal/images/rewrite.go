package images

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Moved is one image reference Rewrite changed.
type Moved struct {
	Found        // where it was, as Scan found it
	To    string // the reference written in its place
}

// Rewrite returns data with the image references move changes replaced,
// in place: only the values Scan finds (the images of workload
// containers), character for character within their line, so every other
// byte and every line number stays as it was. A reference move leaves as
// it is (ok false) is not touched. It fails, changing nothing, when data
// has a workload document Scan cannot read (it does not parse, or is over
// the size bound: its images would stay behind) or a reference that is not
// written on one line as plain or quoted text (a block scalar, an escape).
func Rewrite(data []byte, move func(ref string) (string, bool)) ([]byte, []Moved, error) {
	found, err := ScanBytes(data)
	if err != nil {
		return nil, nil, fmt.Errorf("the images of a workload cannot all be read, so they cannot all be moved: %w", err)
	}
	var moves []Moved
	for _, f := range found {
		if to, ok := move(f.Ref); ok && to != f.Ref {
			moves = append(moves, Moved{Found: f, To: to})
		}
	}
	if len(moves) == 0 {
		return data, nil, nil
	}
	// Right to left, so an earlier reference on the same line (a flow
	// mapping) keeps its column.
	order := slices.Clone(moves)
	slices.SortStableFunc(order, func(a, b Moved) int {
		if a.Line != b.Line {
			return b.Line - a.Line
		}
		return b.Column - a.Column
	})
	starts := lineStarts(data)
	out := slices.Clone(data)
	for _, m := range order {
		if m.Line < 1 || m.Line > len(starts) {
			return nil, nil, fmt.Errorf("line %d: image %s: no such line", m.Line, m.Ref)
		}
		ls := starts[m.Line-1]
		end := len(out)
		if i := bytes.IndexByte(out[ls:], '\n'); i >= 0 {
			end = ls + i
		}
		at, ok := valueOffset(out[ls:end], m.Column, m.Ref)
		if !ok {
			return nil, nil, fmt.Errorf("line %d: image %s (%s %s, container %s) is not written as plain or quoted text on its line; write it so (image: %s) to move it",
				m.Line, m.Ref, m.Kind, m.Name, m.Container, m.Ref)
		}
		at += ls
		out = slices.Concat(out[:at], []byte(m.To), out[at+len(m.Ref):])
	}
	return out, moves, nil
}

// lineStarts are the byte offsets where each line of data starts.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// valueOffset finds, in line, the byte offset of ref written as a scalar
// starting at the 1-based character column col: right there when plain,
// one byte later when quoted. The text must be ref itself, so a value
// with escapes or a folded block is refused rather than guessed.
func valueOffset(line []byte, col int, ref string) (int, bool) {
	off := 0
	for c := 1; c < col && off < len(line); c++ {
		_, size := utf8.DecodeRune(line[off:])
		off += size
	}
	if off < len(line) && (line[off] == '"' || line[off] == '\'') {
		q := line[off]
		off++
		if !bytes.HasPrefix(line[off:], []byte(ref)) || off+len(ref) >= len(line) || line[off+len(ref)] != q {
			return 0, false
		}
		return off, true
	}
	if !bytes.HasPrefix(line[off:], []byte(ref)) {
		return 0, false
	}
	return off, true
}
