// Package patch parses unified diffs and applies them strictly.
//
// It parses unified diffs and applies them strictly: every
// context and removed line must match exactly (no fuzz). Like GNU patch, a
// hunk may be found at an offset from the line its @@ header names, nearest
// position first; each hunk is searched after the end of the previous one.
//
// Both git-style headers (--- a/x, +++ b/x) and plain ones (--- x.orig,
// +++ x, with or without a tab and a timestamp) are read, several files per
// diff, with "\ No newline at end of file" markers.
package patch

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// DevNull is the name diff uses for a missing side (file created or deleted).
const DevNull = "/dev/null"

// Patch is a parsed unified diff.
type Patch struct {
	Name  string // where it came from (used in errors), e.g. patches/startup-probe.diff
	Files []*FileDiff
}

// FileDiff is the part of a patch that changes one file.
type FileDiff struct {
	Patch   string // name of the patch it belongs to
	OldName string // path from the --- header, a/ prefix stripped (git style)
	NewName string // path from the +++ header, b/ prefix stripped (git style)
	Line    int    // 1-based line of the --- header in the patch
	Hunks   []*Hunk
}

// Target is the path the file diff changes: NewName, or OldName when the
// file is deleted.
func (fd *FileDiff) Target() string {
	if fd.NewName == DevNull {
		return fd.OldName
	}
	return fd.NewName
}

// Hunk is one @@ section.
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Header             string // the @@ line as written
	Line               int    // 1-based line of the @@ header in the patch
	Lines              []Line
}

// Line is one line of a hunk body.
type Line struct {
	Op   byte   // ' ' context, '-' removed, '+' added
	Text string // the line including its "\n", without it when marked "\ No newline at end of file"
}

// ParseError is a malformed diff.
type ParseError struct {
	Patch string
	Line  int // 1-based
	Msg   string
}

func (e *ParseError) Error() string {
	name := e.Patch
	if name == "" {
		name = "patch"
	}
	return fmt.Sprintf("%s:%d: %s", name, e.Line, e.Msg)
}

// Parse reads a unified diff. name is used in errors. Text outside file
// diffs (commit messages, "diff --git" and "index" lines) is ignored; a
// diff with no file diff at all is an error.
func Parse(name string, data []byte) (*Patch, error) {
	p := &parser{name: name, lines: splitLines(data)}
	out := &Patch{Name: name}
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if strings.HasPrefix(l, "--- ") && p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i+1], "+++ ") {
			fd, err := p.fileDiff()
			if err != nil {
				return nil, err
			}
			out.Files = append(out.Files, fd)
			continue
		}
		if strings.HasPrefix(l, "@@ ") {
			return nil, p.errf("hunk header %q before any ---/+++ file header", trimNL(l))
		}
		p.i++
	}
	if len(out.Files) == 0 {
		return nil, &ParseError{Patch: name, Line: 1, Msg: "no file diff found (expected \"--- old\" and \"+++ new\" header lines followed by @@ hunks)"}
	}
	return out, nil
}

type parser struct {
	name  string
	lines []string // each with its "\n", the last possibly without
	i     int
}

func (p *parser) errf(format string, args ...any) error {
	return &ParseError{Patch: p.name, Line: p.i + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) fileDiff() (*FileDiff, error) {
	fd := &FileDiff{Patch: p.name, Line: p.i + 1}
	oldName := headerName(p.lines[p.i][4:])
	newName := headerName(p.lines[p.i+1][4:])
	if oldName == "" || newName == "" {
		return nil, p.errf("file header without a file name")
	}
	// git style: a/ and b/ prefixes (or /dev/null on one side).
	if (strings.HasPrefix(oldName, "a/") || oldName == DevNull) &&
		(strings.HasPrefix(newName, "b/") || newName == DevNull) {
		if oldName != DevNull {
			oldName = oldName[2:]
		}
		if newName != DevNull {
			newName = newName[2:]
		}
	}
	if oldName == DevNull && newName == DevNull {
		return nil, p.errf("both sides of the file header are %s", DevNull)
	}
	fd.OldName, fd.NewName = oldName, newName
	p.i += 2
	for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "@@ ") {
		h, err := p.hunk()
		if err != nil {
			return nil, err
		}
		fd.Hunks = append(fd.Hunks, h)
		if p.i < len(p.lines) && p.strayHunkLine(p.lines[p.i]) {
			return nil, p.errf("hunk %s has more lines than its header counts (line %q follows it)", h.Header, trimNL(p.lines[p.i]))
		}
	}
	if len(fd.Hunks) == 0 {
		return nil, &ParseError{Patch: p.name, Line: fd.Line, Msg: fmt.Sprintf("file diff for %s has no @@ hunk", fd.Target())}
	}
	return fd, nil
}

// strayHunkLine reports whether l, right after a hunk's counted lines,
// looks like one more hunk line: a miscounted hunk that would otherwise be
// silently cut short. A file header pair and git's "-- " signature
// separator are not.
func (p *parser) strayHunkLine(l string) bool {
	if l == "" || (l[0] != ' ' && l[0] != '-' && l[0] != '+') {
		return false
	}
	if trimNL(l) == "--" || trimNL(l) == "-- " {
		return false
	}
	if strings.HasPrefix(l, "--- ") && p.i+1 < len(p.lines) && strings.HasPrefix(p.lines[p.i+1], "+++ ") {
		return false
	}
	return true
}

// headerName extracts the path from the text after "--- " / "+++ ":
// anything after a tab (a timestamp) is dropped; a quoted git path is
// unquoted.
func headerName(s string) string {
	s = trimNL(s)
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	// diff -u without a tab separates the timestamp with spaces only when
	// the name has none; keep the name as written otherwise.
	return strings.TrimRight(s, " ")
}

func (p *parser) hunk() (*Hunk, error) {
	h := &Hunk{Header: trimNL(p.lines[p.i]), Line: p.i + 1}
	if err := parseRange(h); err != nil {
		return nil, p.errf("bad hunk header %q: %v", h.Header, err)
	}
	p.i++
	oldLeft, newLeft := h.OldLines, h.NewLines
	for oldLeft > 0 || newLeft > 0 {
		if p.i >= len(p.lines) {
			return nil, p.errf("hunk %s ends early: %d old and %d new lines missing", h.Header, oldLeft, newLeft)
		}
		l := p.lines[p.i]
		op := byte(' ')
		text := ""
		switch {
		case l == "\n" || l == "\r\n" || l == "":
			// An empty line inside a hunk: a context line whose leading
			// space an editor stripped. GNU patch accepts it too.
			op, text = ' ', l
		case l[0] == ' ' || l[0] == '-' || l[0] == '+':
			op, text = l[0], l[1:]
		case l[0] == '\\':
			return nil, p.errf("%q does not follow a hunk line", trimNL(l))
		default:
			return nil, p.errf("hunk %s ends early: line %q is not a context, - or + line (%d old and %d new lines missing)", h.Header, trimNL(l), oldLeft, newLeft)
		}
		switch op {
		case ' ':
			oldLeft--
			newLeft--
		case '-':
			oldLeft--
		case '+':
			newLeft--
		}
		if oldLeft < 0 || newLeft < 0 {
			return nil, p.errf("hunk %s has more lines than its header counts", h.Header)
		}
		p.i++
		if !strings.HasSuffix(text, "\n") {
			// The patch file itself lacks its final newline; the target's
			// missing newline is only ever said by a "\ No newline" marker.
			text += "\n"
		}
		if p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], `\`) {
			// "\ No newline at end of file" (localised text varies).
			text = strings.TrimSuffix(text, "\n")
			if text == "" {
				return nil, p.errf("an empty line is marked %q: a line without a newline must have text", trimNL(p.lines[p.i]))
			}
			p.i++
		}
		h.Lines = append(h.Lines, Line{Op: op, Text: text})
	}
	// A "\ No newline" marker may also follow the last line when the
	// counts are exhausted; the loop above already consumed it.
	return h, nil
}

// parseRange reads "@@ -a[,b] +c[,d] @@[ section]".
func parseRange(h *Hunk) error {
	s := strings.TrimPrefix(h.Header, "@@ ")
	end := strings.Index(s, " @@")
	if end < 0 {
		return fmt.Errorf("missing closing @@")
	}
	fields := strings.Fields(s[:end])
	if len(fields) != 2 || !strings.HasPrefix(fields[0], "-") || !strings.HasPrefix(fields[1], "+") {
		return fmt.Errorf("want -start,count +start,count")
	}
	var err error
	if h.OldStart, h.OldLines, err = parseStartCount(fields[0][1:]); err != nil {
		return fmt.Errorf("old range: %v", err)
	}
	if h.NewStart, h.NewLines, err = parseStartCount(fields[1][1:]); err != nil {
		return fmt.Errorf("new range: %v", err)
	}
	if h.OldLines == 0 && h.NewLines == 0 {
		return fmt.Errorf("empty hunk")
	}
	return nil
}

const maxLineNumber = 1 << 30

func parseStartCount(s string) (start, count int, err error) {
	count = 1
	if a, b, ok := strings.Cut(s, ","); ok {
		s = a
		if count, err = strconv.Atoi(b); err != nil || count < 0 || count > maxLineNumber {
			return 0, 0, fmt.Errorf("bad count %q", b)
		}
	}
	if start, err = strconv.Atoi(s); err != nil || start < 0 || start > maxLineNumber {
		return 0, 0, fmt.Errorf("bad start %q", s)
	}
	return start, count, nil
}

// splitLines splits after each "\n"; the last element lacks it when the data
// does not end in a newline. Empty data gives no lines.
func splitLines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}

func trimNL(s string) string {
	return strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
}
