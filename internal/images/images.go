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
	if _, ok := podSpecPath[k]; ok {
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
	// cur is the current document's text kept to be parsed: from its
	// start, or from its last line that named a kind running containers.
	cur          []byte
	before, line int // lines before the document; lines read
	// workload: the document is parsed at its end; tooLong: it is over
	// maxDoc; other: its kind runs no container; started: its first
	// content line was seen.
	workload, tooLong, other, started bool
	// sawKind: a line of the document named its top-level kind.
	sawKind bool
	// kind is the document's top-level kind, for OversizeError.
	kind string
}

// feed reads b, whole lines but for the stream's last one. Once a
// document's first content line is seen, only a line that may be a
// document marker or a top-level kind changes what is known of it: the
// lines between two such are kept or dropped as one run, found with one
// IndexByte per line and a look at its first byte, so a CRD's lines cost
// no more than that.
func (s *stream) feed(b []byte) {
	for len(b) > 0 {
		if s.started {
			n, lines := plainRun(b)
			s.line += lines
			s.keep(b[:n])
			if b = b[n:]; len(b) == 0 {
				return
			}
		}
		n := len(b)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			n = i + 1
		}
		s.next(b[:n])
		b = b[n:]
	}
}

// plainRun measures the lines at b's start that are neither a document
// marker nor a top-level kind: none of them starts with '-', '.', 'k', a
// quote or a byte-order mark.
func plainRun(b []byte) (n, lines int) {
	for n < len(b) {
		switch b[n] {
		case '-', '.', 'k', '"', '\'', bom[0]:
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
		return
	}
	if k, ok := topKind(l); ok {
		s.kind, s.sawKind = k, true
		s.workload = mayRunContainers(k)
		// A document has one top-level kind: the rest of one that runs
		// no container (a CRD, most of a components file) need not be
		// kept.
		s.other = !s.workload
	} else if !s.started {
		if t := bytes.TrimLeft(l, " \t\r\n"); len(t) > 0 && t[0] != '#' {
			s.started = true
			// A JSON document (kubectl -o json, some generators): parsed,
			// and scanDoc reads its kind.
			s.workload = s.workload || t[0] == '{'
		}
	}
	s.keep(l)
}

// keep adds lines of the current document to its kept text, or drops the
// text kept when its kind runs no container. Lines added as one run fit
// within maxDoc exactly when each of them would.
func (s *stream) keep(b []byte) {
	switch {
	case s.other:
		s.cur = s.cur[:0]
	case s.tooLong:
	case len(s.cur)+len(b) <= maxDoc:
		s.cur = append(s.cur, b...)
	default:
		s.tooLong = true
	}
}

// flush ends the current document: parsed if it is a workload.
func (s *stream) flush() {
	// A document with content but no kind line the scan reads (its key
	// escaped, "\x6bind", or written as a complex key) may still be a
	// workload to the API server: parsed, so YAML decides its kind. One
	// that does not parse is no workload (the API server refuses it).
	kindless := s.started && !s.sawKind && !s.workload
	if (s.workload || kindless) && !s.tooLong {
		f, err := scanDoc(s.cur, s.before+1)
		s.out = append(s.out, f...)
		if err != nil && !kindless {
			s.errs = append(s.errs, err)
		}
	} else if (s.workload || kindless) && s.tooLong {
		s.errs = append(s.errs, &OversizeError{Line: s.before + 1, Kind: s.kind, Limit: maxDoc})
	}
	s.cur = s.cur[:0]
	s.workload, s.tooLong, s.other, s.started, s.sawKind = false, false, false, false, false
	s.kind = ""
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
}

func (e *OversizeError) Error() string {
	what := "a workload document"
	if e.Kind != "" {
		what = "a " + e.Kind + " document"
	}
	return fmt.Sprintf("line %d: %s over %d KiB was not read for images", e.Line, what, e.Limit>>10)
}

// Oversized lists the OversizeErrors among the errors Scan returned.
func Oversized(err error) []*OversizeError {
	var out []*OversizeError
	var walk func(error)
	walk = func(err error) {
		var oe *OversizeError
		switch x := err.(type) {
		case nil:
		case interface{ Unwrap() []error }:
			for _, e := range x.Unwrap() {
				walk(e)
			}
		default:
			if errors.As(err, &oe) {
				out = append(out, oe)
			}
		}
	}
	walk(err)
	return out
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

// scanDoc parses one workload document that starts at line start.
func scanDoc(b []byte, start int) ([]Found, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("document at line %d: %w", start, err)
	}
	if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	root := n.Content[0]
	kind := scalar(get(root, "kind"))
	name := scalar(get(get(root, "metadata"), "name"))
	spec := root
	for _, k := range podSpecPath[kind] {
		spec = get(spec, k)
	}
	if spec == nil {
		return nil, nil
	}
	var out []Found
	for _, field := range containerFields {
		list := get(spec, field)
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range list.Content {
			img := get(c, "image")
			if img == nil || img.Kind != yaml.ScalarNode || strings.TrimSpace(img.Value) == "" {
				continue
			}
			out = append(out, Found{Ref: strings.TrimSpace(img.Value), Line: start + img.Line - 1, Column: img.Column,
				Kind: kind, Name: name, Container: scalar(get(c, "name")), Field: field})
		}
	}
	return out, nil
}

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
