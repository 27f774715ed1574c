package manifest

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/pkg/model"
)

// maxScanLine bounds the bytes of one line the object scanner keeps; the
// rest of a longer line is skipped (a long line is content either way).
const maxScanLine = 4 << 10

// objectScanner reads a manifest stream as it is written (an io.Writer,
// so it can sit beside the hash while a blob inflates) and tells whether
// it is a stream of Kubernetes objects: documents with apiVersion, kind
// and metadata.name. It looks at lines, not at YAML syntax, so it costs
// about a memchr per line; YAML errors inside an object are not its
// business (the operator's apply reports those).
type Scanner struct {
	line    []byte
	long    bool // the current line overflowed maxScanLine
	doc     int  // documents seen (1-based index of the current one)
	content bool // the current document has content
	// Fields of the current document.
	apiVersion, kind, metadata, name bool
	inMeta                           bool
	metaIndent                       int
	first                            string // first content line of the document
	count                            int
	problem                          string
}

func (s *Scanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(s.line) == 0 && !s.long && s.content && !s.inMeta {
			if p = quietRun(p); len(p) == 0 {
				break
			}
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.add(p)
			break
		}
		if len(s.line) == 0 && !s.long {
			s.scanBytes(p[:i]) // the whole line is here: no copy
		} else {
			s.add(p[:i])
			s.endLine()
		}
		p = p[i+1:]
	}
	return n, nil
}

// quiet tells the first bytes of a line that, once a document has content
// and outside metadata, cannot change what scanLine knows: a line that is
// not a marker ('-', '.'), a top-level apiVersion, kind or metadata key
// (plain or quoted), a JSON object, nor a line TrimSpace could shorten to
// one of those (ASCII control bytes, multi-byte spaces).
var quiet = func() (t [256]bool) {
	for c := ' '; c < 0x7f; c++ {
		t[c] = true
	}
	for _, c := range "-.akm\"'{" {
		t[c] = false
	}
	return t
}()

// quietRun skips the whole quiet lines at p's start (the last line of p
// when it is not whole is left to be read): an IndexByte call and a look
// at the first byte per line, most lines of a components file.
func quietRun(p []byte) []byte {
	for len(p) > 0 && quiet[p[0]] {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		p = p[i+1:]
	}
	return p
}

func (s *Scanner) add(b []byte) {
	if room := maxScanLine - len(s.line); room < len(b) {
		b = b[:max(room, 0)]
		s.long = true
	}
	s.line = append(s.line, b...)
}

func (s *Scanner) endLine() {
	s.scanBytes(s.line)
	s.line = s.line[:0]
	s.long = false
}

// scanBytes reads one line. Fast path: an indented line inside a
// document, outside metadata, tells nothing (most lines of a manifest).
func (s *Scanner) scanBytes(l []byte) {
	if s.content && !s.inMeta && len(l) > 0 && l[0] == ' ' {
		return
	}
	s.scanLine(string(bytes.TrimRight(l, "\r")))
}

func (s *Scanner) scanLine(l string) {
	t := strings.TrimSpace(l)
	if strings.HasPrefix(l, "---") || l == "..." {
		s.endDoc()
		if rest := strings.TrimSpace(strings.TrimPrefix(l, "---")); rest != "" && !strings.HasPrefix(rest, "#") && strings.HasPrefix(l, "---") {
			s.scanLine(rest) // "--- text" starts the document's content
		}
		return
	}
	if t == "" || strings.HasPrefix(t, "#") || (!s.content && strings.HasPrefix(l, "%")) {
		return
	}
	if !s.content {
		s.content = true
		s.first = t
	}
	indent := len(l) - len(strings.TrimLeft(l, " "))
	if indent == 0 {
		s.inMeta = false
		key, val, ok := topKey(l)
		if !ok {
			if strings.HasPrefix(t, "{") { // a JSON object on one line
				s.apiVersion = s.apiVersion || strings.Contains(t, `"apiVersion"`)
				s.kind = s.kind || strings.Contains(t, `"kind"`)
				s.metadata = s.metadata || strings.Contains(t, `"metadata"`)
				s.name = s.name || strings.Contains(t, `"name"`)
			}
			return
		}
		switch key {
		case "apiVersion":
			s.apiVersion = val != ""
		case "kind":
			s.kind = val != ""
		case "metadata":
			s.metadata = true
			s.inMeta = val == ""
			s.metaIndent = 0
			if strings.HasPrefix(val, "{") && strings.Contains(val, "name:") {
				s.name = true
			}
		}
		return
	}
	if s.inMeta {
		if s.metaIndent == 0 {
			s.metaIndent = indent
		}
		if indent == s.metaIndent {
			if key, val, ok := topKey(strings.TrimLeft(l, " ")); ok && key == "name" && val != "" {
				s.name = true
			}
		}
	}
}

// topKey splits "key: value" (value without a trailing comment); ok is
// false for anything that is not a plain or quoted mapping key.
func topKey(l string) (key, val string, ok bool) {
	k, v, found := strings.Cut(l, ":")
	if !found || k == "" || strings.ContainsAny(k, " \t{[<>") && !(strings.HasPrefix(k, `"`) || strings.HasPrefix(k, `'`)) {
		return "", "", false
	}
	if v != "" && v[0] != ' ' && v[0] != '\t' {
		return "", "", false // "http://…", "a:b": not a key
	}
	k = strings.Trim(k, `"'`)
	v = strings.TrimSpace(v)
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	v = strings.Trim(v, `"'`)
	return k, v, true
}

func (s *Scanner) endDoc() {
	if s.content {
		s.doc++
		if s.apiVersion && s.kind && s.metadata && s.name {
			s.count++
		} else if s.problem == "" {
			s.problem = s.describe()
		}
	}
	s.content, s.apiVersion, s.kind, s.metadata, s.name, s.inMeta, s.first = false, false, false, false, false, false, ""
}

// describe says what the current document is instead of an object.
func (s *Scanner) describe() string {
	first := s.first
	if len(first) > 60 {
		first = first[:60] + "…"
	}
	lower := strings.ToLower(s.first)
	if _, _, ok := topKey(s.first); !ok && !strings.HasPrefix(s.first, "{") {
		switch {
		case strings.HasPrefix(lower, "<!doctype") || strings.HasPrefix(lower, "<html") || strings.HasPrefix(lower, "<?xml") || strings.HasPrefix(lower, "<"):
			return fmt.Sprintf("document %d is an HTML/XML page (%q), not YAML: an error page saved instead of the manifest?", s.doc, first)
		case strings.HasPrefix(s.first, "- "):
			return fmt.Sprintf("document %d is a YAML list (%q), not an object", s.doc, first)
		default:
			return fmt.Sprintf("document %d is the text %q, not an object (a 404 body saved by curl without -f?)", s.doc, first)
		}
	}
	var missing []string
	if !s.apiVersion {
		missing = append(missing, "apiVersion")
	}
	if !s.kind {
		missing = append(missing, "kind")
	}
	if !s.metadata || !s.name {
		missing = append(missing, "metadata.name")
	}
	return fmt.Sprintf("document %d (starting %q) has no %s", s.doc, first, strings.Join(missing, ", "))
}

// result finishes the stream: truncated tells that the stream was cut
// short (the last document is then judged as it is).
func (s *Scanner) Result() *model.Objects {
	if len(s.line) > 0 || s.long {
		s.endLine()
	}
	s.endDoc()
	o := &model.Objects{Count: s.count, Problem: s.problem}
	if o.Problem == "" && o.Count == 0 {
		o.Problem = "the stream holds no Kubernetes object (it is empty or only comments)"
	}
	return o
}

// scanObjects scans a whole manifest held in memory.
func Scan(b []byte) *model.Objects {
	s := &Scanner{}
	_, _ = s.Write(b)
	return s.Result()
}
