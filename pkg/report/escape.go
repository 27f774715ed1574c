package report

import (
	"strconv"
	"strings"
)

// Terminal escapes. The names, messages and details of a report come from
// the files checked (a chart's provider names, a values key, a file name
// in an uploaded tree): written raw to a terminal, an ESC or CSI byte
// sequence repaints the screen, a CR overwrites the verdict line, and
// Unicode's bidirectional controls reorder what is read. The human writer
// shows every such character escaped, Go-style (\x1b, \r, \u202e), and
// keeps only tabs and, in multi-line texts, newlines.

// isTerminalControl reports whether r changes how a terminal shows text
// rather than being shown: C0 and C1 controls, DEL, and the bidirectional
// embedding, override and isolate controls.
func isTerminalControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) ||
		r == 0x200e || r == 0x200f || r == 0x061c
}

// TermSafe escapes the terminal controls of a one-line text (a newline
// too), Go-style: what any human output of a value read from a file
// prints.
func TermSafe(s string) string { return termSafe(s) }

// termSafe escapes the terminal controls of a one-line text (a newline too).
func termSafe(s string) string { return escapeControls(s, false) }

// termSafeLines escapes the terminal controls of a text whose newlines
// are meant (a message, a diff).
func termSafeLines(s string) string { return escapeControls(s, true) }

func escapeControls(s string, keepNewlines bool) string {
	escaped := func(r rune) bool {
		return r != '\t' && !(keepNewlines && r == '\n') && isTerminalControl(r)
	}
	i := strings.IndexFunc(s, escaped)
	if i < 0 {
		return s // the common case: nothing to escape, no copy
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if !escaped(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // '\x1b', '\r', '\u202e'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
