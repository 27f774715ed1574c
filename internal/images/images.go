// Package images finds the container images a provider's components run:
// every image of the containers, initContainers and ephemeralContainers of
// the pod templates of Deployments, DaemonSets, StatefulSets, ReplicaSets,
// Jobs and CronJobs, and of bare Pods, with the line each is written on. It
// reads a manifest stream as it is written, document by document, and parses
// with the YAML node API only the documents whose kind runs containers, so
// a components file made mostly of CRDs costs a look at the first byte of
// each line.
package images

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/yamldoc"
)

// Found is one image reference in a manifest stream.
type Found struct {
	Ref       string // as written (trimmed)
	Line      int    // 1-based line of the image value in the stream
	Column    int    // 1-based column (in characters) where the value starts, its quote if quoted
	Kind      string // workload kind (Deployment, Pod, …)
	Name      string // workload metadata.name
	Container string // container name
	// Field is containers, initContainers or ephemeralContainers.
	Field string
}

// podSpecPath is where each workload kind holds its pod spec.
var podSpecPath = map[string][]string{
	"Pod":         {"spec"},
	"Deployment":  {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
}

var containerFields = []string{"initContainers", "containers", "ephemeralContainers"}

// mayRunContainers reports whether a document whose kind line reads k is
// parsed. A kind written as a plain name is taken at its word; any other
// (on the next line, tagged, anchored, escaped in quotes) is what the
// parse says it is: YAML resolves `kind:` over two lines, `!!str` or
// `\x6d` to the name a line scan would not see, and the apiserver runs
// the workload.
func mayRunContainers(k string) bool {
	if _, ok := podSpecPath[k]; ok || strings.HasSuffix(k, "List") {
		return true
	}
	for _, c := range []byte(k) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return true
		}
	}
	return k == ""
}

// maxDoc bounds the bytes of one document that is parsed; a workload
// document larger than this is reported as an error rather than parsed.
// The parse runs in the verifier's own process on untrusted text, and a
// document of one-character flow items costs about 120 times its size as
// nodes: 256 KiB costs about 30 MiB, where real workload documents are a
// few KiB.
const maxDoc = 256 << 10

// Scan reads a manifest stream and returns every image its workloads run,
// in stream order. A workload document that does not parse is an error
// naming its line; the images found elsewhere are still returned. The
// stream is read in chunks of whole lines: memory is a chunk, the longest
// line and one workload document, whatever the stream's size.
func Scan(r io.Reader) ([]Found, error) {
	var s stream
	buf := make([]byte, 0, 64<<10)
	for empty := 0; ; {
		if len(buf) == cap(buf) {
			// One line fills the buffer (a base64 blob in a Secret):
			// keep reading it.
			buf = slices.Grow(buf, len(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n > 0 {
			empty = 0
		} else if empty++; empty == 100 && err == nil {
			// A reader that returns nothing, again and again: give up,
			// as bufio does.
			err = io.ErrNoProgress
		}
		if err != nil {
			s.feed(buf)
			return s.end(err)
		}
		if i := bytes.LastIndexByte(buf[len(buf)-n:], '\n'); i >= 0 {
			cut := len(buf) - n + i + 1
			s.feed(buf[:cut])
			// buf is reused: the open document's text in it is kept.
			s.hold()
			buf = buf[:copy(buf, buf[cut:])]
		}
	}
}

// ScanBytes is Scan of a stream held in memory, without copying it.
func ScanBytes(b []byte) ([]Found, error) {
	var s stream
	s.feed(b)
	return s.end(io.EOF)
}

// stream is the state of a scan between two lines of its stream.
type stream struct {
	out  []Found
	errs []error
	// The current document's text is cur, then in[start:off]: in is the
	// text being fed, off how far it is read, and cur what hold kept (up
	// to maxDoc bytes) of the document's text in earlier input that Scan
	// has since reused. Text is copied only then: a document that starts
	// and ends in one input is parsed, if it has to be, where it lies.
	cur, in      []byte
	start, off   int
	before, line int // lines before the document; lines read
	tooLong      bool
	doc          docState
	parsed       int // documents parsed
}

// docState is what the lines of one document read so far say of it.
type docState struct {
	// workload: a kind line names a kind that may run containers (or
	// the document is JSON); other: the last kind line names one that
	// does not; started: the first content line was seen.
	workload, other, started bool
	// sawKind: a line of the document named its top-level kind; kinds
	// counts those lines.
	sawKind bool
	kinds   int
	// inexact: a line the scan cannot read for sure (a second kind line,
	// an escaped or complex key, an anchor, alias or tag at column 0, an
	// indented first line, content on the marker line): the document is
	// parsed, whatever its kind line says.
	inexact bool
	// list: a top-level items key; the document may be a List.
	list bool
	// kind is the document's top-level kind, for OversizeError.
	kind string
}

// mustParse reports whether the document is parsed at its end; kindless
// documents (no kind line the scan reads) are parsed too, but their parse
// errors are not the scan's.
func (d *docState) mustParse() bool { return d.workload || d.inexact || d.list }

func (d *docState) kindless() bool { return d.started && !d.sawKind && !d.mustParse() }

// feed reads b, whole lines but for the stream's last one. Once a
// document's first content line is seen, only a line whose first byte is
// significant (a document marker, a top-level kind or items key, a quote,
// YAML's indicators) changes what is known of it: the lines between two
// such are kept as one run, found with one IndexByte per line and a look
// at its first byte, so a CRD's lines cost no more than that.
func (s *stream) feed(b []byte) {
	s.in, s.start, s.off = b, 0, 0
	for s.off < len(b) {
		if s.doc.started {
			n, lines := plainRun(b[s.off:])
			s.line += lines
			if s.off += n; s.off == len(b) {
				return
			}
		}
		l := b[s.off:]
		if i := bytes.IndexByte(l, '\n'); i >= 0 {
			l = l[:i+1]
		}
		s.next(l)
		s.off += len(l)
	}
}

// significant are the first bytes of a line, once a document has
// content, after which docState.read may learn something: a marker
// ('-', '.'), a kind or items key ('k', 'i', quotes, a byte-order mark),
// YAML's indicators that make a key or value other than it looks at
// column 0 (complex key, tag, anchor, alias, block scalar, flow
// collections, directives, reserved), a tab.
var significant = func() (t [256]bool) {
	for _, c := range "-.ki\"'?!&*|>[{%@`\t" {
		t[c] = true
	}
	t[bom[0]] = true
	return t
}()

// plainRun measures the lines at b's start whose first byte is not
// significant.
func plainRun(b []byte) (n, lines int) {
	for n < len(b) {
		if significant[b[n]] {
			return n, lines
		}
		lines++
		i := bytes.IndexByte(b[n:], '\n')
		if i < 0 {
			return len(b), lines
		}
		n += i + 1
	}
	return n, lines
}

// next reads one line.
func (s *stream) next(l []byte) {
	s.line++
	if yamldoc.Marker(l) != "" {
		s.flush()
		if markerContent(l) {
			// "--- {kind: Pod, …}": the document starts on its marker
			// line, which a YAML parser reads with it.
			s.before = s.line - 1
			s.doc.started, s.doc.inexact = true, true
		} else {
			s.start = s.off + len(l)
		}
		return
	}
	s.doc.read(l)
}

// markerContent reports whether a "---" line carries more than a comment.
func markerContent(l []byte) bool {
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	t := bytes.TrimSpace(l[3:])
	return len(t) > 0 && t[0] != '#'
}

// read reads one line that is not a document marker.
func (d *docState) read(l []byte) {
	if k, ok := topKind(l); ok {
		d.kind, d.sawKind = k, true
		d.kinds++
		// YAML has one top-level kind per document: a second kind line is
		// a duplicate key, or a line inside a multi-line scalar.
		d.inexact = d.inexact || d.kinds > 1
		d.workload = mayRunContainers(k)
		d.other = !d.workload
		d.started = true
		return
	}
	t := bytes.TrimPrefix(l, bom)
	if len(t) > 0 && significant[t[0]] && t[0] != '-' && t[0] != '.' {
		switch key, ok := exactKey(t); {
		case ok && key == "items":
			d.list = true
		case !ok:
			d.inexact = true
		}
	}
	if !d.started {
		if c := bytes.TrimLeft(t, " \t\r\n"); len(c) > 0 && c[0] != '#' {
			d.started = true
			switch {
			case c[0] == '{':
				// A JSON document (kubectl -o json, some generators):
				// parsed, and scanDoc reads its kind.
				d.workload = true
			case len(c) != len(t):
				// An indented first line: the top-level keys are not at
				// column 0, where the scan looks for them.
				d.inexact = true
			}
		}
	}
}

// exactKey reads the key of a line at column 0 whose first byte is
// significant (not a marker): a plain "items:", or a quoted key the scan
// reads exactly (no escape, closed on its line, then a colon). ok is false
// for anything else: YAML may read such a line as a key the scan does not
// see.
func exactKey(l []byte) (key string, ok bool) {
	switch l[0] {
	case 'k', 'i':
		// A plain key (kind lines are topKind's); a plain scalar has no
		// escapes, so "items" is the only spelling.
		if r, ok := bytes.CutPrefix(l, []byte("items")); ok {
			if r = bytes.TrimLeft(r, " \t"); len(r) > 0 && r[0] == ':' {
				return "items", true
			}
		}
		return "", true
	case '"', '\'':
		q := l[0]
		end := bytes.IndexByte(l[1:], q)
		if end < 0 {
			return "", false
		}
		key := l[1 : 1+end]
		if bytes.IndexByte(key, '\\') >= 0 || q == '\'' && 1+end+1 < len(l) && l[1+end+1] == '\'' {
			return "", false
		}
		if r := bytes.TrimLeft(l[1+end+1:], " \t"); len(r) > 0 && r[0] == ':' {
			return string(key), true
		}
		return "", false
	}
	return "", false
}

// hold keeps, up to maxDoc bytes, the current document's text in the
// input fed so far, before that input is reused.
func (s *stream) hold() {
	switch b := s.in[s.start:s.off]; {
	case s.tooLong:
	case len(s.cur)+len(b) <= maxDoc:
		s.cur = append(s.cur, b...)
	default:
		s.tooLong = true
	}
	s.in, s.start, s.off = nil, 0, 0
}

// text is the current document's text; ok is false when it is over
// maxDoc bytes.
func (s *stream) text() (b []byte, ok bool) {
	b = s.in[s.start:s.off]
	if s.tooLong || len(s.cur)+len(b) > maxDoc {
		return nil, false
	}
	if len(s.cur) > 0 {
		b = append(s.cur, b...)
	}
	return b, true
}

// flush ends the current document: parsed if it is a workload, if the
// scan could not read it exactly, or if it has no kind line the scan
// reads (its key escaped, "\x6bind", or written as a complex key), since
// it may still be a workload to the API server, so YAML decides its kind.
// One of those that does not parse is no workload (the API server
// refuses it).
func (s *stream) flush() {
	d := &s.doc
	if d.mustParse() || d.kindless() {
		s.parsed++
		if b, ok := s.text(); !ok {
			s.errs = append(s.errs, &OversizeError{Line: s.before + 1, Kind: d.kind, Limit: maxDoc})
		} else {
			f, err := readDoc(b, s.before+1, d.kind)
			s.out = append(s.out, f...)
			if err != nil && (d.mustParse() || isProblem(err)) {
				s.errs = append(s.errs, err)
			}
		}
	}
	s.cur = s.cur[:0]
	s.start = s.off
	s.tooLong = false
	s.doc = docState{}
	s.before = s.line
}

// end ends the stream, which err (io.EOF when none) stopped.
func (s *stream) end(err error) ([]Found, error) {
	s.line++
	s.flush()
	if err != io.EOF {
		s.errs = append(s.errs, err)
	}
	return s.out, errors.Join(s.errs...)
}

// OversizeError is a workload document Scan did not parse because it is
// larger than the bound on one parsed document: its images are not listed.
type OversizeError struct {
	Line  int    // 1-based line where the document starts
	Kind  string // its top-level kind ("" for a JSON document)
	Limit int    // the bound, in bytes
	// Why replaces the size as the reason (a bound on what the
	// document's aliases expand to).
	Why string
}

func (e *OversizeError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("line %d: %s was not read for images: %s", e.Line, docName(e.Kind), e.Why)
	}
	return fmt.Sprintf("line %d: %s over %d KiB was not read for images", e.Line, docName(e.Kind), e.Limit>>10)
}

func (e *OversizeError) reason() string {
	if e.Why != "" {
		return e.Why
	}
	return fmt.Sprintf("it is over the %d KiB a workload document may have to be parsed", e.Limit>>10)
}

func docName(kind string) string {
	if kind == "" {
		return "a workload document"
	}
	return "a " + kind + " document"
}

// AmbiguousError is a document YAML readers read differently (a key
// written twice, a text one parser refuses and another reads): which
// images the cluster runs cannot be told for sure. The images of every
// reading Scan could make are listed.
type AmbiguousError struct {
	Line int    // 1-based line where the document starts
	Kind string // what its kind line says ("" for none)
	Why  string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("line %d: %s is ambiguous: %s", e.Line, docName(e.Kind), e.Why)
}

// BadRefError is a container's image value that is not an image
// reference (a newline, a control byte, an uppercase repository): it is
// not listed as an image.
type BadRefError struct {
	Found // Ref is the value as written
	Err   error
}

func (e *BadRefError) Error() string {
	return fmt.Sprintf("line %d: %s %s, container %s: image %q is not a valid image reference: %v", e.Line, e.Kind, e.Name, e.Container, e.Ref, e.Err)
}

// Problem is a document or value whose images Scan could not list for
// sure, as a finding reports it.
type Problem struct {
	Line int    // where the document (or the value) is
	Kind string // the document's kind, "" when unknown
	Why  string // what went wrong, a sentence part ("it is over 256 KiB")
	// Error: the input is ambiguous or not an image reference (an error);
	// else the document is too large to read (a warning).
	Error bool
	Hint  string
}

// Problems lists, in order, the documents and values among the errors
// Scan returned whose images are not listed for sure (OversizeError,
// AmbiguousError, BadRefError); a document that does not parse as YAML
// for anyone is none of them.
func Problems(err error) []Problem {
	var out []Problem
	walkErrs(err, func(e error) {
		var (
			oe *OversizeError
			ae *AmbiguousError
			be *BadRefError
		)
		switch {
		case errors.As(e, &oe):
			out = append(out, Problem{Line: oe.Line, Kind: oe.Kind, Why: oe.reason(),
				Hint: "look at that document: a workload's pod template is a few KiB, and a document this large usually carries data (a huge flow list, an embedded file, aliases) that does not belong in it"})
		case errors.As(e, &ae):
			out = append(out, Problem{Line: ae.Line, Kind: ae.Kind, Why: "it is ambiguous: " + ae.Why, Error: true,
				Hint: "write the document so every YAML reader reads it alike: each key once, no text one parser refuses"})
		case errors.As(e, &be):
			out = append(out, Problem{Line: be.Line, Kind: be.Kind, Error: true,
				Why:  fmt.Sprintf("the image of %s/%s, container %s, %q, is not a valid image reference (%v)", be.Kind, be.Name, be.Container, be.Ref, be.Err),
				Hint: "write a reference a container runtime pulls (registry/repository:tag or @sha256:digest, printable ASCII, one line)"})
		}
	})
	return out
}

func isProblem(err error) bool { return len(Problems(err)) > 0 }

// Oversized lists the OversizeErrors among the errors Scan returned.
func Oversized(err error) []*OversizeError {
	var out []*OversizeError
	walkErrs(err, func(e error) {
		var oe *OversizeError
		if errors.As(e, &oe) {
			out = append(out, oe)
		}
	})
	return out
}

// walkErrs calls f with each error joined in err.
func walkErrs(err error, f func(error)) {
	switch x := err.(type) {
	case nil:
	case interface{ Unwrap() []error }:
		for _, e := range x.Unwrap() {
			walkErrs(e, f)
		}
	default:
		f(err)
	}
}

// topKind returns the value of a "kind:" line at column 0.
func topKind(l []byte) (string, bool) {
	// A byte-order mark may start a stream or a document; the key may be
	// quoted and may have spaces before its colon.
	l = bytes.TrimPrefix(l, bom)
	if len(l) == 0 || (l[0] != 'k' && l[0] != '"' && l[0] != '\'') {
		return "", false
	}
	var rest []byte
	for _, key := range [][]byte{[]byte("kind"), []byte(`"kind"`), []byte("'kind'")} {
		if r, ok := bytes.CutPrefix(l, key); ok {
			if r = bytes.TrimLeft(r, " \t"); len(r) > 0 && r[0] == ':' {
				rest = r[1:]
				break
			}
		}
	}
	if rest == nil {
		return "", false
	}
	v := strings.TrimSpace(string(rest))
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return strings.Trim(v, `"'`), true
}

// bom is the UTF-8 byte-order mark.
var bom = []byte("\ufeff")

// get returns the value of key in a mapping node, nil if absent.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// Ref is an image reference split as a container runtime reads it.
type Ref struct {
	Repository string // registry and path, without tag or digest
	Tag        string // "" when none
	Digest     string // "algo:hex", "" when none
}

// Parse splits an image reference into repository, tag and digest. The tag
// is what follows the last ':' after the last '/', so a registry port is
// never read as a tag.
func Parse(ref string) Ref {
	var r Ref
	name := ref
	if i := strings.Index(name, "@"); i >= 0 {
		name, r.Digest = name[:i], name[i+1:]
	}
	slash := strings.LastIndex(name, "/")
	if i := strings.LastIndex(name, ":"); i > slash {
		name, r.Tag = name[:i], name[i+1:]
	}
	r.Repository = name
	return r
}

// Distinct are the distinct references of found, sorted.
func Distinct(found []Found) []string {
	out := make([]string, 0, len(found))
	for _, f := range found {
		out = append(out, f.Ref)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
