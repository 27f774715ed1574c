// Package yamlbound measures what decoding an untrusted YAML text would
// build, before decoding it.
//
// It measures what decoding an untrusted YAML (or JSON)
// text into Go values would build, before anything decodes it that way.
//
// A YAML alias names a node written once and decodes to a full copy of
// it: ten levels of ten aliases each turn a 1 KB values.yaml into 10^10
// nodes, and an alias of a long string repeated a hundred thousand times
// turns it into gigabytes once Helm (sigs.k8s.io/yaml) re-encodes it as
// JSON. The node API of go.yaml.in/yaml/v3 keeps aliases as pointers, so
// the text is parsed once into nodes (linear in its size) and measured
// with every alias expanded, each anchored node measured once however
// often it is named; the measure stops at the first bound passed.
package yamlbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// Limits bound a text (or several, with a Budget) as decoding would expand
// it. A bound <= 0 is not checked.
type Limits struct {
	// MaxNodes bounds the nodes (mappings, sequences, scalars, keys
	// included) with every alias and merge key expanded.
	MaxNodes int64
	// MaxScalarBytes bounds the bytes of the scalars (keys included) with
	// every alias and merge key expanded.
	MaxScalarBytes int64
}

// Size is what a text expands to.
type Size struct {
	Nodes, ScalarBytes int64
}

// Error is a bound passed.
type Error struct {
	What  string // "nodes" or "scalar bytes"
	Limit int64
	Line  int // line of the node being expanded when the bound was passed (0: unknown)
}

func (e *Error) Error() string {
	at := ""
	if e.Line > 0 {
		at = fmt.Sprintf(" (passed at line %d)", e.Line)
	}
	if e.What == "nodes" {
		return fmt.Sprintf("more than %d YAML nodes once its aliases are expanded%s", e.Limit, at)
	}
	return fmt.Sprintf("more than %d bytes of YAML values once its aliases are expanded%s", e.Limit, at)
}

// Budget is Limits shared by several texts (the YAML files of one chart):
// each Measure spends from what the ones before left.
type Budget struct {
	Limits
	Used Size
}

// Measure parses data as a YAML stream (every document) and adds what it
// expands to to b.Used; it returns an *Error when that passes a bound (b
// is then spent), or the parser's error when data is not YAML.
func (b *Budget) Measure(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := b.MeasureNode(&doc); err != nil {
			return err
		}
	}
}

// MeasureNode adds what one parsed document (or any node) expands to to
// b.Used, as Measure does for each document of a text: for a caller that
// parses the text itself (the node API keeps aliases as pointers, so the
// parse alone stays within the text's size) and decodes it only once it
// is measured.
func (b *Budget) MeasureNode(doc *yaml.Node) error {
	m := measurer{b: b, memo: map[*yaml.Node]Size{}, open: map[*yaml.Node]bool{}}
	_, err := m.node(doc)
	return err
}

// MeasureJSON is Measure for a JSON text, read token by token (JSON has
// no aliases; its size is what a decoder builds).
func (b *Budget) MeasureJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var n int64
		switch v := t.(type) {
		case string:
			n = int64(len(v))
		case json.Number:
			n = int64(len(v))
		case json.Delim:
			if v == '}' || v == ']' {
				continue
			}
		}
		if err := b.Spend(Size{Nodes: 1, ScalarBytes: n}, 0); err != nil {
			return err
		}
	}
}

// Measure is a Budget of lim spent on data alone.
func Measure(data []byte, lim Limits) (Size, error) {
	b := Budget{Limits: lim}
	err := b.Measure(data)
	return b.Used, err
}

// Spend adds s (measured by the caller, e.g. of values decoded already) to
// b.Used; it returns an *Error naming line when that passes a bound.
func (b *Budget) Spend(s Size, line int) error {
	b.Used.Nodes += s.Nodes
	b.Used.ScalarBytes += s.ScalarBytes
	switch {
	case b.MaxNodes > 0 && b.Used.Nodes > b.MaxNodes:
		return &Error{What: "nodes", Limit: b.MaxNodes, Line: line}
	case b.MaxScalarBytes > 0 && b.Used.ScalarBytes > b.MaxScalarBytes:
		return &Error{What: "scalar bytes", Limit: b.MaxScalarBytes, Line: line}
	}
	return nil
}

// measurer measures one document. Every node is spent from the budget as
// it is counted, so the walk stops at the bound even inside an anchored
// node; an anchored node measured once is added whole, from memo, where
// an alias names it again.
type measurer struct {
	b    *Budget
	memo map[*yaml.Node]Size
	open map[*yaml.Node]bool // anchored nodes being measured (an alias to one is a cycle)
}

func (m *measurer) node(n *yaml.Node) (Size, error) {
	if n == nil {
		return Size{}, nil
	}
	if n.Kind == yaml.AliasNode {
		t := n.Alias
		if t == nil {
			return Size{}, nil
		}
		if m.open[t] {
			// The parser refuses aliases to an enclosing anchor; should
			// one get here, a decoder would recurse for ever.
			return Size{}, fmt.Errorf("line %d: an alias names the node it is in", n.Line)
		}
		if s, ok := m.memo[t]; ok {
			return s, m.b.Spend(s, n.Line)
		}
		return m.node(t) // an alias before its anchor is measured: not by the parser
	}
	if s, ok := m.memo[n]; ok && n.Anchor != "" {
		return s, m.b.Spend(s, n.Line)
	}
	s := Size{Nodes: 1, ScalarBytes: int64(len(n.Value))}
	if n.Kind != yaml.ScalarNode {
		s.ScalarBytes = 0
	}
	if n.Kind == yaml.DocumentNode {
		s = Size{}
	}
	if err := m.b.Spend(s, n.Line); err != nil {
		return s, err
	}
	if n.Anchor != "" {
		m.open[n] = true
		defer delete(m.open, n)
	}
	for _, c := range n.Content {
		cs, err := m.node(c)
		s.Nodes += cs.Nodes
		s.ScalarBytes += cs.ScalarBytes
		if err != nil {
			return s, err
		}
	}
	if n.Anchor != "" {
		m.memo[n] = s
	}
	return s, nil
}
