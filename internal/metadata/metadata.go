// Package metadata parses clusterctl's metadata.yaml: release series and
// their Cluster API contracts.
//
// It parses clusterctl's metadata.yaml (kind Metadata,
// apiVersion clusterctl.cluster.x-k8s.io/*): the release series of a
// provider and the Cluster API contract each one implements. It is the one
// parser of that file: the loader (vendored metadata in a tree), the
// registry inspector (the metadata.yaml layer) and the release builder (the
// contract a pushed artifact declares) all use it, so what one accepts the
// others accept too.
package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/yamlbound"
	"github.com/pinseal/pinseal/pkg/model"
)

// Bounds of what Parse reads. Metadata comes from untrusted places (a
// ConfigMap's data.metadata, which a chart can render at tens of
// megabytes; a registry layer) and is parsed in the verifier's own
// process: parsed YAML takes up to a hundred times the bytes of its text,
// and an alias decodes to a full copy of what it names. Real metadata.yaml
// files have a few dozen release series in a few kilobytes.
const (
	// MaxBytes bounds the text.
	MaxBytes = 64 << 10
	// MaxNodes bounds its YAML nodes, aliases expanded.
	MaxNodes = 10000
)

// Parse parses clusterctl's Metadata strictly: a mapping with no key
// repeated in any mapping, apiVersion clusterctl.cluster.x-k8s.io/* (or
// none), kind Metadata (or none: real trees omit it), and a releaseSeries
// list whose every entry has non-negative integer major and minor and a
// contract, within MaxBytes and MaxNodes. It never returns nil; every
// problem is in Metadata.Err, which says where.
func Parse(raw []byte) *model.Metadata {
	md := &model.Metadata{}
	fail := func(format string, a ...any) *model.Metadata {
		md.Err = fmt.Errorf(format, a...)
		md.ReleaseSeries = nil
		return md
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fail("metadata is empty")
	}
	if len(raw) > MaxBytes {
		return fail("metadata is %d bytes, more than the %d read (a clusterctl metadata.yaml has a few kilobytes); not parsed", len(raw), MaxBytes)
	}
	n, err := parseMeasured(raw)
	if err != nil {
		var be *yamlbound.Error
		if errors.As(err, &be) {
			return fail("metadata has %v; not parsed", be)
		}
		return fail("metadata does not parse: %v", err)
	}
	if n == nil || len(n.Content) == 0 {
		return fail("metadata is empty")
	}
	root := deref(n.Content[0])
	if root == nil || root.Kind != yaml.MappingNode {
		return fail("metadata is a %s, not a mapping", kindOf(root))
	}
	if key, first := repeatedKey(root); key != nil {
		return fail("metadata has duplicate key %q (lines %d and %d)", key.Value, first, key.Line)
	}
	var doc struct {
		APIVersion    yaml.Node `yaml:"apiVersion"`
		Kind          yaml.Node `yaml:"kind"`
		ReleaseSeries yaml.Node `yaml:"releaseSeries"`
	}
	if err := root.Decode(&doc); err != nil {
		return fail("metadata does not parse: %v", err)
	}
	if av, ok := text(&doc.APIVersion); ok && !strings.HasPrefix(av, "clusterctl.cluster.x-k8s.io/") {
		return fail("metadata apiVersion is %q, want clusterctl.cluster.x-k8s.io/v1alpha3", av)
	}
	if doc.Kind.Kind != 0 {
		md.Kind, _ = text(&doc.Kind)
		if md.Kind != "Metadata" {
			return fail("metadata kind is %q, want Metadata (or no kind)", md.Kind)
		}
	}
	rs := deref(&doc.ReleaseSeries)
	switch {
	case rs == nil || rs.Kind == 0 || rs.Tag == "!!null":
		return fail("metadata has no releaseSeries")
	case rs.Kind != yaml.SequenceNode:
		return fail("metadata releaseSeries is a %s, not a list", kindOf(rs))
	}
	for i, e := range rs.Content {
		s, err := entry(e)
		if err != nil {
			return fail("releaseSeries[%d]: %v", i, err)
		}
		md.ReleaseSeries = append(md.ReleaseSeries, s)
	}
	return md
}

// entry reads one releaseSeries item.
func entry(e *yaml.Node) (model.ReleaseSeries, error) {
	var s model.ReleaseSeries
	e = deref(e)
	if e == nil || e.Kind != yaml.MappingNode {
		return s, fmt.Errorf("is a %s, not a mapping of major, minor and contract", kindOf(e))
	}
	var f struct {
		Major    yaml.Node `yaml:"major"`
		Minor    yaml.Node `yaml:"minor"`
		Contract yaml.Node `yaml:"contract"`
	}
	if err := e.Decode(&f); err != nil {
		return s, err
	}
	var err error
	if s.Major, err = number("major", &f.Major); err != nil {
		return s, err
	}
	if s.Minor, err = number("minor", &f.Minor); err != nil {
		return s, err
	}
	c, ok := text(&f.Contract)
	if !ok || c == "" {
		return s, fmt.Errorf("(line %d): contract missing", e.Line)
	}
	s.Contract = c
	return s, nil
}

// number reads a non-negative YAML integer that fits an int32.
func number(name string, n *yaml.Node) (int, error) {
	n = deref(n)
	s, ok := text(n)
	switch {
	case !ok:
		return 0, fmt.Errorf("%s missing", name)
	case n.Tag != "!!int":
		return 0, fmt.Errorf("%s is %q (line %d), not an integer", name, s, n.Line)
	}
	v, err := strconv.ParseInt(s, 0, 32)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s is %q (line %d), not a non-negative integer", name, s, n.Line)
	}
	return int(v), nil
}

// Contract returns the API contract that metadata declares for the release
// series (major.minor) of ver. The metadata must parse as a whole (Parse):
// a file the verifier would flag is not one a release may be built from.
func Contract(raw []byte, ver string) (string, error) {
	v, err := version.ParseGeneric(ver)
	if err != nil {
		return "", fmt.Errorf("version %q: %w", ver, err)
	}
	md := Parse(raw)
	if md.Err != nil {
		return "", fmt.Errorf("not clusterctl metadata: %w", md.Err)
	}
	have := make([]string, 0, len(md.ReleaseSeries))
	for _, s := range md.ReleaseSeries {
		if uint(s.Major) == v.Major() && uint(s.Minor) == v.Minor() {
			return s.Contract, nil
		}
		have = append(have, fmt.Sprintf("%d.%d", s.Major, s.Minor))
	}
	return "", fmt.Errorf("no releaseSeries entry for %d.%d (has: %s): add one with its contract", v.Major(), v.Minor(), strings.Join(have, ", "))
}

// deref follows an alias to its anchor (a bounded number of hops).
func deref(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops == 8 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// text is a scalar's value; ok is false for a missing node (nil, or the
// zero Node of an absent field), a null or anything but a scalar.
func text(n *yaml.Node) (string, bool) {
	if n = deref(n); n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return n.Value, true
	}
	return "", false
}

func kindOf(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	return map[yaml.Kind]string{
		yaml.MappingNode:  "mapping",
		yaml.SequenceNode: "list",
		yaml.ScalarNode:   "scalar",
		yaml.AliasNode:    "alias",
		yaml.DocumentNode: "document",
	}[n.Kind]
}

// repeatedKey returns the first scalar key that appears twice in one
// mapping at or below n, and the line of its first appearance. Aliases are
// not followed (their anchors are walked where they stand); the depth is
// bounded by the YAML parser's own nesting limit.
func repeatedKey(n *yaml.Node) (*yaml.Node, int) {
	if n == nil || n.Kind == yaml.AliasNode {
		return nil, 0
	}
	if n.Kind == yaml.MappingNode {
		lines := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			if first, dup := lines[k.Value]; dup {
				return k, first
			}
			lines[k.Value] = k.Line
		}
	}
	for _, c := range n.Content {
		if k, first := repeatedKey(c); k != nil {
			return k, first
		}
	}
	return nil, 0
}

// parseMeasured parses every document of raw once, measuring each against
// MaxNodes and MaxBytes with its aliases expanded before anything decodes
// it, and returns the first (nil: none).
func parseMeasured(raw []byte) (*yaml.Node, error) {
	b := yamlbound.Budget{Limits: yamlbound.Limits{MaxNodes: MaxNodes, MaxScalarBytes: MaxBytes}}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var first *yaml.Node
	for {
		doc := &yaml.Node{}
		if err := dec.Decode(doc); err != nil {
			if errors.Is(err, io.EOF) {
				return first, nil
			}
			return nil, err
		}
		if err := b.MeasureNode(doc); err != nil {
			return nil, err
		}
		if first == nil {
			first = doc
		}
	}
}
