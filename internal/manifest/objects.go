package manifest

import (
	"bytes"
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/yamldoc"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// object is one parsed Kubernetes object of a rendered (or plain) YAML file.
type Object struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string // explicit metadata.namespace, "" if none
	// Line is the 1-based line of metadata.name (else kind, else the
	// document start) in the parsed text.
	Line int
	Root *yaml.Node // the document's top mapping
}

// maxNodeDepth bounds how deep the loader descends into a document.
const maxNodeDepth = 500

// loadObjects parses a multi-document YAML text (one rendered template or
// one plain manifest file) into objects. Every document that does not parse,
// has duplicate keys or is not a mapping becomes a Problem naming file and
// line; the other documents are still returned. It never panics.
func Parse(data []byte, file string) ([]*Object, []model.Problem) {
	return parseDocs(data, file, func(src []byte, n *yaml.Node) error { return parseYAML(src, n, LongScalarMin) })
}

// ParseString is Parse of a text held as a string (a rendered manifest).
// Its long base64 values (longscalar.go) are swapped out of the whole
// text at once and never copied: the nodes hold substrings of text, and
// the rest is copied to bytes once, with placeholders in their place.
func ParseString(text, file string) ([]*Object, []model.Problem) {
	return parseStringWith(text, file, LongScalarMin)
}

func parseStringWith(text, file string, swapMin int) ([]*Object, []model.Problem) {
	swapped, vals := swapLongScalars(text, swapMin)
	if vals == nil {
		return parseDocs([]byte(text), file, func(src []byte, n *yaml.Node) error { return parseYAML(src, n, swapMin) })
	}
	return parseDocs(swapped, file, func(src []byte, n *yaml.Node) error { return parseSwapped(src, vals, n) })
}

// parseDocs parses every document of data with parse.
func parseDocs(data []byte, file string, parse func(src []byte, n *yaml.Node) error) ([]*Object, []model.Problem) {
	var objs []*Object
	var probs []model.Problem
	for _, d := range SplitDocs(data) {
		o, p := parseDocUsing(d, file, parse)
		if o != nil {
			objs = append(objs, o)
		}
		probs = append(probs, p...)
	}
	return objs, probs
}

// doc is one YAML document of a multi-document text.
type Doc struct {
	Head []byte // content that followed the "--- " marker on its line
	Text []byte
	line int // 1-based line of the document's first line in the whole text
}

func (d Doc) bytes() []byte {
	if len(d.Head) == 0 {
		return d.Text
	}
	b := make([]byte, 0, len(d.Head)+1+len(d.Text))
	b = append(b, d.Head...)
	b = append(b, '\n')
	return append(b, d.Text...)
}

// splitDocs splits text at document markers ("---" or "..." at column 0).
// What follows "--- " on the marker line starts the next document, so line
// numbers stay exact.
func SplitDocs(text []byte) []Doc {
	var docs []Doc
	cur := Doc{line: 1}
	start := 0
	line := 1
	for i := 0; i < len(text); line++ {
		next := len(text)
		if end := bytes.IndexByte(text[i:], '\n'); end >= 0 {
			next = i + end + 1
		}
		l := text[i:next]
		if m := yamldoc.Marker(l); m != "" {
			cur.Text = text[start:i]
			docs = append(docs, cur)
			cur = Doc{line: line + 1}
			if m == "---" {
				if rest := bytes.TrimRight(l[3:], "\r\n"); len(bytes.TrimSpace(rest)) > 0 {
					// As Helm's manifest splitter does, the document starts
					// right after the marker.
					cur = Doc{line: line, Head: bytes.TrimLeft(rest, " \t")}
				}
			}
			start = next
		}
		i = next
	}
	cur.Text = text[start:]
	docs = append(docs, cur)
	out := docs[:0]
	for _, d := range docs {
		if !blank(d.Head) || !blank(d.Text) {
			out = append(out, d)
		}
	}
	return out
}

// blank reports whether b holds only whitespace and comment lines.
func blank(b []byte) bool {
	for len(b) > 0 {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

// parseDoc parses one document into an object. A document that is empty or
// null yields nothing.
func ParseDoc(d Doc, file string) (o *Object, probs []model.Problem) {
	return parseDocWith(d, file, LongScalarMin)
}

// parseDocWith is parseDoc with long base64 values of at least swapMin
// bytes kept out of the YAML scan (longscalar.go; 0: never).
func parseDocWith(d Doc, file string, swapMin int) (o *Object, probs []model.Problem) {
	return parseDocUsing(d, file, func(src []byte, n *yaml.Node) error { return parseYAML(src, n, swapMin) })
}

// parseDocUsing is parseDoc with the YAML of the document parsed by parse.
func parseDocUsing(d Doc, file string, parse func(src []byte, n *yaml.Node) error) (o *Object, probs []model.Problem) {
	defer func() {
		if r := recover(); r != nil {
			o = nil
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: d.line},
				Message: fmt.Sprintf("YAML document at line %d cannot be read: %v", d.line, r)})
		}
	}()
	var n yaml.Node
	if err := parse(d.bytes(), &n); err != nil {
		line := d.line
		k, msg := pin.YAMLErrorLine(err)
		if k > 0 {
			// yaml reports an unexpected end one line past the last.
			last := bytes.Count(bytes.TrimRight(d.bytes(), "\n"), []byte{'\n'}) + 1
			line = d.line + min(k, last) - 1
		}
		return nil, []model.Problem{{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: line},
			Message: fmt.Sprintf("YAML does not parse at line %d: %s", line, msg),
			Hint:    "fix the YAML (for a chart: run `helm template` and look at this line of the rendered output)"}}
	}
	if len(n.Content) == 0 {
		return nil, nil
	}
	root := n.Content[0]
	lineOf := func(k int) int { return d.line + k - 1 }
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, []model.Problem{{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: lineOf(root.Line)},
			Message: fmt.Sprintf("YAML document at line %d is a %s, not a Kubernetes object (a mapping)", lineOf(root.Line), NodeKind(root))}}
	}
	if dups := duplicateKeys(root); len(dups) > 0 {
		for _, dk := range dups {
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: lineOf(dk.line)},
				Message: fmt.Sprintf("duplicate key %q at line %d (first at line %d): Kubernetes keeps only one of them", dk.key, lineOf(dk.line), lineOf(dk.first)),
				Hint:    "remove one of the two keys"})
		}
		return nil, probs
	}
	o = &Object{Root: root, Line: lineOf(root.Line)}
	o.APIVersion, _ = Scalar(Lookup(root, "apiVersion"))
	o.Kind, _ = Scalar(Lookup(root, "kind"))
	if k := Lookup(root, "kind"); k != nil {
		o.Line = lineOf(k.Line)
	}
	meta := Lookup(root, "metadata")
	o.Name, _ = Scalar(Lookup(meta, "name"))
	o.Namespace, _ = Scalar(Lookup(meta, "namespace"))
	if nm := Lookup(meta, "name"); nm != nil {
		o.Line = lineOf(nm.Line)
	}
	// Rebase every node's line so later lookups report whole-text lines.
	rebase(root, d.line-1, 0)
	return o, probs
}

func NodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "mapping"
}

// rebase shifts the line of every node under n by off (aliases are not
// followed: their targets are rebased where they are defined).
func rebase(n *yaml.Node, off, depth int) {
	if n == nil || depth > maxNodeDepth {
		return
	}
	n.Line += off
	if n.Kind == yaml.AliasNode {
		return
	}
	for _, c := range n.Content {
		rebase(c, off, depth+1)
	}
}

type dupKey struct {
	key         string
	line, first int
}

// duplicateKeys finds keys repeated in any mapping of the document.
func duplicateKeys(root *yaml.Node) []dupKey {
	var out []dupKey
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || depth > maxNodeDepth || n.Kind == yaml.AliasNode {
			return
		}
		if n.Kind == yaml.MappingNode {
			seen := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Kind != yaml.ScalarNode {
					continue
				}
				if first, ok := seen[k.Value]; ok {
					out = append(out, dupKey{key: k.Value, line: k.Line, first: first})
				} else {
					seen[k.Value] = k.Line
				}
			}
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	return out
}

// resolve follows an alias to its anchor.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// lookup returns the value of key in mapping m, nil when m is not a mapping
// or has no such key.
func Lookup(m *yaml.Node, key string) *yaml.Node {
	m = Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return Resolve(m.Content[i+1])
		}
	}
	return nil
}

// lookupPath looks up a chain of keys.
func LookupPath(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = Lookup(m, k)
	}
	return m
}

// scalar returns a scalar node's value; ok is false for a missing node, a
// null or a non-scalar.
func Scalar(n *yaml.Node) (string, bool) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

// stringScalar returns a scalar that Kubernetes reads as a string. For a
// value it would read as a bool, number or null, ok is false and why says so.
func StringScalar(n *yaml.Node) (s string, ok bool, why string) {
	n = Resolve(n)
	if n == nil {
		return "", false, "missing"
	}
	if n.Kind != yaml.ScalarNode {
		return "", false, "a " + NodeKind(n) + ", not a string"
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return n.Value, true, ""
	}
	switch n.Tag {
	case "!!str", "":
		if _, yes := pin.YAML11Bool(n); yes {
			return n.Value, false, fmt.Sprintf("%s reads as a boolean in Kubernetes (YAML 1.1); quote it", n.Value)
		}
		return n.Value, true, ""
	case "!!binary":
		return n.Value, true, ""
	case "!!null":
		return "", false, "null"
	}
	return n.Value, false, fmt.Sprintf("%s is a %s, not a string; quote it", n.Value, n.ShortTag()[2:])
}

// stringMap reads a mapping of strings (labels, annotations, matchLabels).
// Entries Kubernetes would not read as strings are reported by bad.
func StringMap(n *yaml.Node, bad func(key, why string, line int)) map[string]string {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		if n != nil && !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			bad("", "is a "+NodeKind(n)+", not a mapping", n.Line)
		}
		return nil
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, ok, why := StringScalar(k)
		if !ok {
			bad(k.Value, "key "+why, k.Line)
			continue
		}
		val, ok, why := StringScalar(v)
		if !ok {
			bad(key, why, v.Line)
		}
		out[key] = val
	}
	return out
}
