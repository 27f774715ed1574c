package pin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	yamlv3 "go.yaml.in/yaml/v3"
)

// MaxFileSize bounds the size of a pin file Parse accepts. A pin file is
// parsed in the verifier's own process, and YAML's parsed nodes take about
// a hundred times the bytes of a text of tiny ones (a megabyte of "0,"
// takes 100 MB): 64 KiB keeps that to a few megabytes, ten times the
// largest real pin file.
const MaxFileSize = 64 << 10

var (
	fileFields     = []string{"providers"}
	providerFields = []string{"kind", "name", "version", "release", "sources", "patches", "blob", "components", "metadata", "checksums", "relocate"}
	sourceFields   = []string{"url", "sha256", "to"}
	relocateFields = []string{"from", "to"}
)

// Parse reads a pin file strictly and validates it. file names the file in
// errors (e.g. "packages/system/capi-providers-proxmox/pin.yaml").
//
// Parsing is yaml.v3's node API alone (see the package doc).
//
// Rejected: more than one YAML document, anchors and aliases, unknown or
// repeated fields, values of the wrong type (version: 1.10 is a number; quote
// it), scalars that YAML 1.1 and 1.2 read differently (name: no), and
// everything Validate rejects. All problems are returned at once, joined;
// each is a *FieldError (see FieldErrors) naming the file, the line, the
// field path and the fix.
func Parse(data []byte, file string) (*File, error) {
	if len(data) > MaxFileSize {
		return nil, &FieldError{File: file, Problem: fmt.Sprintf("is %d bytes, more than the %d a pin file may have", len(data), MaxFileSize),
			Fix: "keep only the providers[] entries in it"}
	}
	root, err := parseNode(data, file)
	if err != nil {
		return nil, err
	}
	w := &walker{file: file, lines: map[string]int{"": root.Line}}
	w.walkFile(root)
	errs := w.errs
	if w.fatal {
		return nil, errors.Join(errs...)
	}
	// Unknown and repeated fields are already reported; decode the rest
	// to report its problems too.
	var f File
	if err := knownFields(root).Decode(&f); err != nil {
		errs = append(errs, &FieldError{File: file, Problem: "does not decode: " + err.Error(),
			Fix: "write it as api/pin.md describes"})
		return nil, errors.Join(errs...)
	}
	errs = append(errs, f.validate(file, w.lines)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &f, nil
}

// knownFields is a copy of the pin file's root node holding only the
// fields the walker accepts: known names (matched case-sensitively: Kind is
// not kind), first occurrences.
func knownFields(root *yamlv3.Node) *yamlv3.Node {
	top := pruneMapping(root, fileFields)
	for i := 1; i < len(top.Content); i += 2 {
		if top.Content[i-1].Value != "providers" {
			continue
		}
		ps := pruneSequence(top.Content[i], func(p *yamlv3.Node) *yamlv3.Node {
			pc := pruneMapping(p, providerFields)
			for j := 1; j < len(pc.Content); j += 2 {
				switch pc.Content[j-1].Value {
				case "sources":
					pc.Content[j] = pruneSequence(pc.Content[j], func(s *yamlv3.Node) *yamlv3.Node { return pruneMapping(s, sourceFields) })
				case "relocate":
					pc.Content[j] = pruneSequence(pc.Content[j], func(s *yamlv3.Node) *yamlv3.Node { return pruneMapping(s, relocateFields) })
				}
			}
			return pc
		})
		top.Content[i] = ps
	}
	return top
}

// pruneMapping is a copy of mapping node n with only the first occurrence
// of each of fields; any other node is returned as it is.
func pruneMapping(n *yamlv3.Node, fields []string) *yamlv3.Node {
	if n.Kind != yamlv3.MappingNode {
		return n
	}
	c := *n
	c.Content = nil
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] || !slices.Contains(fields, k.Value) {
			continue
		}
		seen[k.Value] = true
		c.Content = append(c.Content, k, n.Content[i+1])
	}
	return &c
}

// pruneSequence is a copy of sequence node n with each item passed through
// item; any other node is returned as it is.
func pruneSequence(n *yamlv3.Node, item func(*yamlv3.Node) *yamlv3.Node) *yamlv3.Node {
	if n.Kind != yamlv3.SequenceNode {
		return n
	}
	c := *n
	c.Content = make([]*yamlv3.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = item(x)
	}
	return &c
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line ([0-9]+): `) })

// YAMLErrorLine splits the message of a yaml.v3 error, "yaml: line N:
// problem", into N and the problem. When the message names no line, line
// is 0 and msg is the whole message. Every reader of yaml.v3 errors (this
// package, pkg/load) uses it.
func YAMLErrorLine(err error) (line int, msg string) {
	msg = err.Error()
	if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	return line, msg
}

// yaml11Bools are the plain scalars YAML 1.1 reads as booleans though
// YAML 1.2 reads them as strings, with the boolean YAML 1.1 reads.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// YAML11Bool reports whether n is a scalar that YAML 1.2 (yaml.v3) reads
// as a string but YAML 1.1 (yaml.v2, and so sigs.k8s.io/yaml: Kubernetes,
// Helm, clusterctl) reads as a boolean, and which boolean: the plain
// (unquoted, untagged) y, yes, on, n, no, off in their three spellings.
// Every reader that must flag such a value (pin files here, manifests in
// pkg/load) asks it.
func YAML11Bool(n *yamlv3.Node) (value, ok bool) {
	const quoted = yamlv3.TaggedStyle | yamlv3.DoubleQuotedStyle | yamlv3.SingleQuotedStyle | yamlv3.LiteralStyle | yamlv3.FoldedStyle
	if n == nil || n.Kind != yamlv3.ScalarNode || n.Style&quoted != 0 {
		return false, false
	}
	value, ok = yaml11Bools[n.Value]
	return value, ok
}

// parseNode parses the single YAML document of data and returns its root.
func parseNode(data []byte, file string) (*yamlv3.Node, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc yamlv3.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, emptyError(file)
		}
		return nil, syntaxError(file, err)
	}
	var next yamlv3.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(file, err)
	case !isEmptyDoc(&next):
		return nil, &FieldError{File: file, Line: next.Line, Problem: "holds more than one YAML document",
			Fix: "keep a single document: list every provider under one providers: key"}
	}
	if len(doc.Content) == 0 || isEmptyDoc(&doc) {
		return nil, emptyError(file)
	}
	return doc.Content[0], nil
}

func isEmptyDoc(d *yamlv3.Node) bool {
	if d.Kind == yamlv3.DocumentNode {
		if len(d.Content) == 0 {
			return true
		}
		d = d.Content[0]
	}
	return d.Kind == yamlv3.ScalarNode && d.ShortTag() == "!!null"
}

func emptyError(file string) error {
	return &FieldError{File: file, Problem: "is empty", Fix: "list the package's providers under providers: (see api/pin.md)"}
}

func syntaxError(file string, err error) error {
	line, msg := YAMLErrorLine(err)
	msg = strings.TrimPrefix(msg, "yaml: ")
	return &FieldError{File: file, Line: line, Problem: "is not valid YAML: " + msg,
		Fix: "fix the syntax (indentation, a missing ':' or an unclosed quote)"}
}

// walker checks the shape of a pin file's node tree: field names, types,
// duplicates, and strings YAML 1.1 reads as booleans. It records the line
// of each field.
type walker struct {
	file  string
	lines map[string]int
	errs  []error
	fatal bool // a value has the wrong type: the file cannot be decoded
}

func (w *walker) add(line int, field, problem, fix string, fatal bool) {
	w.errs = append(w.errs, &FieldError{File: w.file, Line: line, Field: field, Problem: problem, Fix: fix})
	w.fatal = w.fatal || fatal
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func isNull(n *yamlv3.Node) bool {
	return n.Kind == yamlv3.ScalarNode && n.ShortTag() == "!!null" && n.Anchor == ""
}

// usable reports whether n can be looked at (no alias, no anchor).
func (w *walker) usable(n *yamlv3.Node, path string) bool {
	switch {
	case n.Kind == yamlv3.AliasNode:
		w.add(n.Line, path, "is an alias (*"+n.Value+")", "write the value out; pin files take no anchors or aliases", true)
		return false
	case n.Anchor != "":
		w.add(n.Line, path, "carries an anchor (&"+n.Anchor+")", "remove it; pin files take no anchors or aliases", false)
	}
	return true
}

// mapping returns the known fields of mapping node n by name, reporting
// unknown and repeated ones.
func (w *walker) mapping(n *yamlv3.Node, path, what string, fields []string) map[string]*yamlv3.Node {
	if !w.usable(n, path) {
		return nil
	}
	if n.Kind != yamlv3.MappingNode {
		w.add(n.Line, path, fmt.Sprintf("is %s, not a mapping", describeNode(n)),
			fmt.Sprintf("write %s as key: value lines (%s)", what, strings.Join(fields, ", ")), true)
		return nil
	}
	out := map[string]*yamlv3.Node{}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yamlv3.ScalarNode || k.Anchor != "" {
			w.add(k.Line, path, "has a key that is not a plain name", "use plain field names: "+strings.Join(fields, ", "), true)
			continue
		}
		name := k.Value
		fp := join(path, name)
		if prev, ok := seen[name]; ok {
			w.add(k.Line, fp, fmt.Sprintf("is given twice (first on line %d)", prev), "keep one", false)
			continue
		}
		seen[name] = k.Line
		known := false
		for _, f := range fields {
			if f == name {
				known = true
			}
		}
		if !known {
			fix := fmt.Sprintf("%s has the fields %s", what, strings.Join(fields, ", "))
			if s := suggest(name, fields); s != "" {
				fix = fmt.Sprintf("did you mean %q? %s", s, fix)
			}
			w.add(k.Line, fp, "is not a known field", fix, false)
			continue
		}
		w.lines[fp] = k.Line
		if isNull(v) {
			continue
		}
		out[name] = v
	}
	return out
}

func (w *walker) sequence(n *yamlv3.Node, path, fix string) []*yamlv3.Node {
	if !w.usable(n, path) {
		return nil
	}
	if n.Kind != yamlv3.SequenceNode {
		w.add(n.Line, path, fmt.Sprintf("is %s, not a list", describeNode(n)), fix, true)
		return nil
	}
	return n.Content
}

func (w *walker) str(n *yamlv3.Node, path string) {
	if !w.usable(n, path) {
		return
	}
	if n.Kind != yamlv3.ScalarNode || n.ShortTag() != "!!str" {
		fix := "write a string"
		if n.Kind == yamlv3.ScalarNode {
			fix = fmt.Sprintf("quote it: %q", n.Value)
		}
		w.add(n.Line, path, fmt.Sprintf("is %s, not a string", describeNode(n)), fix, true)
		return
	}
	w.lines[path] = n.Line
	if b, ok := YAML11Bool(n); ok {
		w.add(n.Line, path, fmt.Sprintf("%q reads as %q to YAML 1.1 parsers", n.Value, strconv.FormatBool(b)),
			fmt.Sprintf("quote it: %q", n.Value), false)
	}
}

func (w *walker) walkFile(root *yamlv3.Node) {
	if root.Kind != yamlv3.MappingNode {
		if !w.usable(root, "") {
			return
		}
		w.add(root.Line, "", fmt.Sprintf("is %s, not a mapping", describeNode(root)),
			"start the file with providers: and list the providers under it", true)
		return
	}
	top := w.mapping(root, "", "a pin file", fileFields)
	pv, ok := top["providers"]
	if !ok {
		return // Validate reports the missing providers.
	}
	for i, p := range w.sequence(pv, "providers", "list the providers as - kind: … entries") {
		pp := fmt.Sprintf("providers[%d]", i)
		w.lines[pp] = p.Line
		fields := w.mapping(p, pp, "a provider", providerFields)
		for _, name := range []string{"kind", "name", "version", "release", "blob", "components", "metadata"} {
			if v, ok := fields[name]; ok {
				w.str(v, pp+"."+name)
			}
		}
		w.optional(p, pp, "blob", "name the gzip blob file, e.g. files/components.gz, or remove the line")
		w.optional(p, pp, "patches", "list the patch files, or remove the line")
		w.optional(p, pp, "components", "name the source that is the components YAML (its `to`), or remove the line")
		w.optional(p, pp, "metadata", "name the source that is the metadata.yaml (its `to`), or remove the line")
		w.optional(p, pp, "relocate", "list the relocations as - from: … to: … entries, or remove the line")
		if sv, ok := fields["sources"]; ok {
			w.stringMappings(sv, pp+".sources", "list the sources as - url: … entries", "a source", sourceFields)
		}
		if pt, ok := fields["patches"]; ok {
			for j, x := range w.sequence(pt, pp+".patches", "list the patch files as - patches/0001-….diff entries") {
				w.str(x, fmt.Sprintf("%s.patches[%d]", pp, j))
			}
		}
		if rv, ok := fields["relocate"]; ok {
			w.stringMappings(rv, pp+".relocate", "list the relocations as - from: registry.k8s.io/cluster-api entries with their to:", "a relocation", relocateFields)
		}
	}
}

// stringMappings walks the list n at path of mappings whose fields are
// all strings (sources, relocations).
func (w *walker) stringMappings(n *yamlv3.Node, path, fix, what string, fields []string) {
	for j, item := range w.sequence(n, path, fix) {
		ip := fmt.Sprintf("%s[%d]", path, j)
		w.lines[ip] = item.Line
		f := w.mapping(item, ip, what, fields)
		for _, name := range fields {
			if v, ok := f[name]; ok {
				w.str(v, ip+"."+name)
			}
		}
	}
}

// optional reports an optional field of mapping n given as null or "":
// a pin file says what it means.
func (w *walker) optional(n *yamlv3.Node, path, name, fix string) {
	if n.Kind != yamlv3.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != name || k.Kind != yamlv3.ScalarNode {
			continue
		}
		if isNull(v) || v.Kind == yamlv3.ScalarNode && v.ShortTag() == "!!str" && v.Value == "" {
			w.add(k.Line, join(path, name), "has no value", fix, false)
		}
		return
	}
}

func describeNode(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "a mapping"
	case yamlv3.SequenceNode:
		return "a list"
	case yamlv3.AliasNode:
		return "an alias"
	case yamlv3.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return fmt.Sprintf("the string %q", n.Value)
		case "!!int", "!!float":
			return fmt.Sprintf("the number %s", n.Value)
		case "!!bool":
			return fmt.Sprintf("the boolean %s", n.Value)
		case "!!null":
			return "null"
		default:
			return fmt.Sprintf("a %s value", n.ShortTag())
		}
	}
	return "not a value"
}
