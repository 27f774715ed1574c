package blob

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/pinseal/pinseal/internal/lcs"
)

// Diff says where the YAML and the content of its blob first differ.
type Diff struct {
	Line    int    // first differing line (1-based) of the YAML
	Offset  int64  // first differing byte offset
	Excerpt string // a short unified-diff excerpt, "-" YAML, "+" blob
}

// Bounds of a diff excerpt.
const (
	diffContext  = 3    // common lines shown before the first difference
	diffWindow   = 16   // lines read from each side after it
	diffMaxLines = 20   // lines in the excerpt
	diffMaxBytes = 2048 // bytes in the excerpt
	diffMaxLine  = 160  // characters shown of one line
	tailKeep     = 4096 // bytes of common prefix kept for context
)

// Inflated reads the first gzip member of raw, at most limit bytes.
// Decompression errors end the stream early (Inspect says why); a diff
// then shows where the blob stops. What is not gzip reads as empty.
func Inflated(raw []byte, limit int64) io.Reader {
	return InflatedFrom(bytes.NewReader(raw), limit)
}

// InflatedFrom is Inflated over a stream (a vendored blob read from disk).
func InflatedFrom(r io.Reader, limit int64) io.Reader {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return bytes.NewReader(nil)
	}
	zr.Multistream(false)
	return eofOnError{io.LimitReader(zr, limit)}
}

type eofOnError struct{ r io.Reader }

func (e eofOnError) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		err = io.EOF
	}
	return n, err
}

// FirstDifference compares the YAML (a) with the blob's content (b, e.g.
// Inflated), streaming, and returns where they first differ with a short
// unified-diff-like excerpt ("-" YAML, "+" blob); nil when they are equal.
// The tree loader and the registry inspector both use it, so a blob-yaml
// finding reads the same wherever the blob was found.
func FirstDifference(a, b io.Reader) *Diff {
	ra := bufio.NewReaderSize(eofOnError{a}, 64<<10)
	rb := bufio.NewReaderSize(b, 64<<10)
	p := &commonPrefix{line: 1}
	if p.skip(ra, rb) {
		return nil
	}
	before, partial := p.context()
	la, endA := readLines(ra, partial, diffWindow)
	lb, endB := readLines(rb, partial, diffWindow)

	head := []string{fmt.Sprintf("@@ line %d, byte %d @@", p.line, p.off)}
	for _, l := range before {
		head = append(head, " "+show(l))
	}
	var trailer []string
	if endA && (len(la) == 0 || len(la) < len(lb)) {
		trailer = append(trailer, `\ the YAML ends here`)
	}
	if endB && (len(lb) == 0 || len(lb) < len(la)) {
		trailer = append(trailer, `\ the blob ends here`)
	}
	body := windowDiff(la, lb)
	if room := diffMaxLines - len(head) - len(trailer); len(body) > room {
		body = append(body[:room-1], "…")
	}
	return &Diff{Line: p.line, Offset: p.off, Excerpt: excerpt(append(append(head, body...), trailer...))}
}

// commonPrefix is what two streams have in common before they differ:
// its length, the line the difference is on and the last bytes before it.
type commonPrefix struct {
	off  int64
	line int
	tail []byte // last bytes of the common prefix
}

func (p *commonPrefix) keep(b []byte) {
	p.line += bytes.Count(b, []byte{'\n'})
	p.off += int64(len(b))
	if len(b) >= tailKeep {
		p.tail = append(p.tail[:0], b[len(b)-tailKeep:]...)
		return
	}
	p.tail = append(p.tail, b...)
	if len(p.tail) > 2*tailKeep {
		p.tail = append(p.tail[:0], p.tail[len(p.tail)-tailKeep:]...)
	}
}

// skip reads ra and rb while they agree, leaving both at the first
// difference; it reports whether they are equal to the end.
func (p *commonPrefix) skip(ra, rb *bufio.Reader) (equal bool) {
	for {
		pa, _ := ra.Peek(32 << 10)
		pb, _ := rb.Peek(32 << 10)
		n := min(len(pa), len(pb))
		i := 0
		for i < n && pa[i] == pb[i] {
			i++
		}
		if i < n || n == 0 {
			if len(pa) == 0 && len(pb) == 0 {
				return true
			}
			p.keep(pa[:i])
			_, _ = ra.Discard(i)
			_, _ = rb.Discard(i)
			return false
		}
		p.keep(pa[:n])
		_, _ = ra.Discard(n)
		_, _ = rb.Discard(n)
	}
}

// context returns the whole common lines before the differing one, and
// the common start of the differing line.
func (p *commonPrefix) context() (before []string, partial []byte) {
	tail := p.tail
	partial = tail
	if k := bytes.LastIndexByte(tail, '\n'); k >= 0 {
		partial = tail[k+1:]
		lines := strings.Split(string(tail[:k]), "\n")
		if len(lines) > diffContext {
			lines = lines[len(lines)-diffContext:]
		} else if int64(len(tail)) < p.off && len(lines) > 0 {
			lines = lines[1:] // the first may be cut
		}
		before = lines
	}
	if len(partial) > diffMaxLine/2 {
		// A long line: show the part around the difference.
		partial = append([]byte("…"), partial[len(partial)-diffMaxLine/2:]...)
	}
	return before, partial
}

// excerpt joins lines, cut at diffMaxBytes.
func excerpt(lines []string) string {
	var ex strings.Builder
	for _, l := range lines {
		if ex.Len()+len(l)+1 > diffMaxBytes-len("…\n") {
			ex.WriteString("…\n")
			break
		}
		ex.WriteString(l)
		ex.WriteByte('\n')
	}
	return ex.String()
}

// textLine is one line of a diff window; noEOL marks a last line without
// a newline.
type textLine struct {
	text  string
	noEOL bool
}

// readLines reads up to n lines from r, the first prefixed by head. Lines
// are cut at a few times diffMaxLine bytes (the rest of a long line is
// skipped). end reports that r ended within the window.
func readLines(r *bufio.Reader, head []byte, n int) (out []textLine, end bool) {
	cur := append([]byte(nil), head...)
	for len(out) < n {
		c, err := r.ReadByte()
		if err != nil {
			if len(cur) > 0 {
				out = append(out, textLine{text: string(cur), noEOL: true})
			}
			return out, true
		}
		if c == '\n' {
			out = append(out, textLine{text: string(cur)})
			cur = cur[:0]
			continue
		}
		if len(cur) < 4*diffMaxLine {
			cur = append(cur, c)
		}
	}
	return out, false
}

// windowDiff is a small LCS diff of two windows of lines: the first hunk
// and up to two common lines after it.
func windowDiff(a, b []textLine) []string {
	var out []string
	emit := func(prefix string, l textLine) {
		out = append(out, prefix+show(l.text))
		if l.noEOL {
			out = append(out, `\ no newline at end of file`)
		}
	}
	changed, common := false, 0
	for _, e := range lcs.Edits(a, b) {
		switch e.Kind {
		case ' ':
			emit(" ", a[e.A])
			if changed {
				if common++; common == 2 {
					return out // the first hunk and two lines of context
				}
			}
			continue
		case '-':
			emit("-", a[e.A])
		default:
			emit("+", b[e.B])
		}
		changed, common = true, 0
	}
	return out
}

// show makes a line printable: valid UTF-8, control characters escaped,
// cut at diffMaxLine characters.
func show(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == diffMaxLine {
			b.WriteString("…")
			break
		}
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}
