package images

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/yamlbound"
)

// What a document's aliases may expand to before it is decoded as the
// cluster reads it. The API server refuses a request over 3 MiB, so an
// object bigger than this once expanded is never run; the bounds keep the
// decode of one document within tens of MiB.
const (
	maxNodes       = 1 << 20
	maxScalarBytes = 8 << 20
)

// maxListDepth bounds Lists inside Lists (kubectl flattens nested Lists).
const maxListDepth = 4

// readDoc reads the images of one document that starts at line start (kind
// is what its kind line says, for errors). The node API of
// go.yaml.in/yaml/v3 gives each image its line. A document written with
// aliases, anchors, merge keys, tags or duplicate keys is also decoded as
// kubectl and the cluster-api-operator decode it (sigs.k8s.io/yaml, once
// yamlbound measured what its aliases expand to): the images of both
// readings are listed, and duplicate keys are an AmbiguousError, since
// decoders resolve them differently.
func readDoc(b []byte, start int, kind string) ([]Found, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return refused(b, start, kind, err)
	}
	if len(n.Content) == 0 {
		return nil, nil
	}
	root := n.Content[0]
	var sh shape
	sh.walk(root, 0)
	found := nodeObject(root, start, 0)
	var errs []error
	if sh.alias || sh.anchor || sh.merge || sh.tag || sh.dup != nil {
		if sh.alias {
			b := yamlbound.Budget{Limits: yamlbound.Limits{MaxNodes: maxNodes, MaxScalarBytes: maxScalarBytes}}
			if err := b.MeasureNode(&n); err != nil {
				return nil, &OversizeError{Line: start, Kind: kind, Why: "it holds " + err.Error()}
			}
		}
		var obj any
		if err := sigsyaml.Unmarshal(b, &obj); err == nil {
			found = union(found, lineOf(root, start, mapObject(obj, 0)))
		}
	}
	if d := sh.dup; d != nil {
		errs = append(errs, &AmbiguousError{Line: start, Kind: kind,
			Why: fmt.Sprintf("the key %q is written twice in one mapping (lines %d and %d), and YAML decoders differ on which one counts", d[0].Value, start+d[0].Line-1, start+d[1].Line-1)})
	}
	found, bad := valid(found)
	return found, errors.Join(append(errs, bad...)...)
}

// refused reads a document go.yaml.in/yaml/v3 does not parse: one that
// sigs.k8s.io/yaml reads is the cluster's, and its images are listed
// with an AmbiguousError. One holding a '*' (an alias, maybe) is not
// decoded: without the node API nothing measures what its aliases expand
// to.
func refused(b []byte, start int, kind string, perr error) ([]Found, error) {
	plain := fmt.Errorf("document at line %d: %w", start, perr)
	if bytes.IndexByte(b, '*') >= 0 {
		if kind == "" {
			return nil, plain
		}
		return nil, &AmbiguousError{Line: start, Kind: kind,
			Why: fmt.Sprintf("go.yaml.in/yaml/v3 does not parse it (%v), and it holds a '*' (an alias?), so it is not decoded another way unmeasured", perr)}
	}
	var obj any
	if err := sigsyaml.Unmarshal(b, &obj); err != nil {
		return nil, plain
	}
	found := mapObject(obj, 0)
	if len(found) == 0 {
		return nil, plain
	}
	for i := range found {
		found[i].Line = start
	}
	found, bad := valid(found)
	return found, errors.Join(append([]error{&AmbiguousError{Line: start, Kind: kind,
		Why: fmt.Sprintf("go.yaml.in/yaml/v3 does not parse it (%v) but sigs.k8s.io/yaml, which kubectl and the cluster-api-operator use, reads it", perr)}}, bad...)...)
}

// shape is what makes a document's node tree read differently by other
// decoders than by a walk of its nodes.
type shape struct {
	alias, anchor, merge, tag bool
	dup                       []*yaml.Node // two keys of one mapping the image walk reads
}

// readKeys are the keys the image walk reads: a duplicate of one of them
// changes what a decoder finds.
var readKeys = map[string]bool{"kind": true, "spec": true, "template": true, "jobTemplate": true, "items": true,
	"containers": true, "initContainers": true, "ephemeralContainers": true, "image": true}

func (s *shape) walk(n *yaml.Node, depth int) {
	if n == nil || depth > 10000 {
		return
	}
	if n.Kind == yaml.AliasNode {
		s.alias = true
		return
	}
	if n.Anchor != "" {
		s.anchor = true
	}
	if n.Style&yaml.TaggedStyle != 0 {
		s.tag = true
	}
	if n.Kind == yaml.MappingNode {
		var seen map[string]*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
				s.merge = true
			}
			if k.Kind == yaml.ScalarNode && readKeys[k.Value] && s.dup == nil {
				if seen == nil {
					seen = map[string]*yaml.Node{}
				}
				if first, ok := seen[k.Value]; ok {
					s.dup = []*yaml.Node{first, k}
				}
				seen[k.Value] = k
			}
		}
	}
	for _, c := range n.Content {
		s.walk(c, depth+1)
	}
}

// nodeObject lists the images of an object node (and of a List's items),
// as its nodes say: the first of duplicate keys, no alias or merge key
// followed.
func nodeObject(root *yaml.Node, start, depth int) []Found {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	kind := scalar(get(root, "kind"))
	name := scalar(get(get(root, "metadata"), "name"))
	var out []Found
	if items := get(root, "items"); items != nil && items.Kind == yaml.SequenceNode && depth < maxListDepth {
		for _, it := range items.Content {
			out = append(out, nodeObject(it, start, depth+1)...)
		}
	}
	path, ok := podSpecPath[kind]
	if !ok {
		return out
	}
	spec := root
	for _, k := range path {
		spec = get(spec, k)
	}
	if spec == nil {
		return out
	}
	for _, field := range containerFields {
		list := get(spec, field)
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range list.Content {
			img := get(c, "image")
			if img == nil || img.Kind != yaml.ScalarNode || img.ShortTag() == "!!null" || strings.TrimSpace(img.Value) == "" {
				continue
			}
			if img.Style&yaml.TaggedStyle != 0 && img.ShortTag() != "!!str" {
				continue // what a tag makes of it is the decoder's reading
			}
			out = append(out, Found{Ref: strings.TrimSpace(img.Value), Line: start + img.Line - 1, Column: img.Column,
				Kind: kind, Name: name, Container: scalar(get(c, "name")), Field: field})
		}
	}
	return out
}

// mapObject lists the images of an object as sigs.k8s.io/yaml decodes it
// (and of a List's items). Lines are unknown (0).
func mapObject(obj any, depth int) []Found {
	m, ok := obj.(map[string]any)
	if !ok {
		return nil
	}
	str := func(v any) string { s, _ := v.(string); return s }
	kind := str(m["kind"])
	meta, _ := m["metadata"].(map[string]any)
	name := str(meta["name"])
	var out []Found
	if items, ok := m["items"].([]any); ok && depth < maxListDepth {
		for _, it := range items {
			out = append(out, mapObject(it, depth+1)...)
		}
	}
	path, ok := podSpecPath[kind]
	if !ok {
		return out
	}
	var spec any = m
	for _, k := range path {
		sm, _ := spec.(map[string]any)
		spec = sm[k]
	}
	sm, _ := spec.(map[string]any)
	for _, field := range containerFields {
		list, _ := sm[field].([]any)
		for _, c := range list {
			cm, _ := c.(map[string]any)
			ref := strings.TrimSpace(str(cm["image"]))
			if ref == "" {
				continue
			}
			out = append(out, Found{Ref: ref, Kind: kind, Name: name, Container: str(cm["name"]), Field: field})
		}
	}
	return out
}

// lineOf places images a decoder found: on the line of the first scalar
// of the document written with their value, else on its first line.
// Column stays 0, so builder relocate refuses to move them (their text
// is not where a rewrite could be sure of it).
func lineOf(root *yaml.Node, start int, found []Found) []Found {
	for i := range found {
		found[i].Line = start
		if n := findScalar(root, found[i].Ref, 0); n != nil {
			found[i].Line = start + n.Line - 1
		}
	}
	return found
}

func findScalar(n *yaml.Node, v string, depth int) *yaml.Node {
	if n == nil || depth > 10000 {
		return nil
	}
	if n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) == v {
		return n
	}
	for _, c := range n.Content {
		if f := findScalar(c, v, depth+1); f != nil {
			return f
		}
	}
	return nil
}

// union adds to a the images of b that a does not list (the same
// reference in the same container of the same workload).
func union(a, b []Found) []Found {
	type key struct{ ref, kind, name, container, field string }
	seen := map[key]bool{}
	for _, f := range a {
		seen[key{f.Ref, f.Kind, f.Name, f.Container, f.Field}] = true
	}
	for _, f := range b {
		if k := (key{f.Ref, f.Kind, f.Name, f.Container, f.Field}); !seen[k] {
			seen[k] = true
			a = append(a, f)
		}
	}
	return a
}

// valid splits found into valid image references and a BadRefError for
// each value that is none: such a value is never listed as an image.
func valid(found []Found) ([]Found, []error) {
	var bad []error
	out := found[:0]
	for _, f := range found {
		if err := ValidRef(f.Ref); err != nil {
			bad = append(bad, &BadRefError{Found: f, Err: err})
			continue
		}
		out = append(out, f)
	}
	return out, bad
}

// ValidRef reports whether ref is an image reference a container runtime
// can pull (go-containerregistry's parser: lowercase repository, tag and
// digest syntax, a registry that is a URI authority; printable ASCII
// only, so no newline or terminal control can ride in one).
func ValidRef(ref string) error {
	if strings.IndexFunc(ref, func(r rune) bool { return r <= ' ' || r >= 0x7f }) >= 0 {
		return errors.New("it holds whitespace, a control character or a character that is not ASCII")
	}
	_, err := name.ParseReference(ref)
	return err
}
