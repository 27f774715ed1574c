package relocate

import (
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/pkg/pin"
)

// setRelocate returns the pin file text with the relocate entries of the
// providers at the given indexes replaced by set[i] (an entry absent from
// set is left alone), as a line edit: every other line, comment and
// formatting of the file stays. A provider's existing relocate block is
// replaced where it stands; a new one goes after the provider's last line.
func setRelocate(text []byte, set map[int]pin.Relocations) ([]byte, error) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yamlv3.MappingNode {
		return nil, fmt.Errorf("not a mapping")
	}
	provs := mapValue(doc.Content[0], "providers")
	if provs == nil || provs.Kind != yamlv3.SequenceNode {
		return nil, fmt.Errorf("no providers list")
	}
	lines := strings.SplitAfter(string(text), "\n")
	type edit struct {
		from, to int // 0-based line range [from, to) replaced
		text     string
	}
	var edits []edit
	for i, p := range provs.Content {
		rs, ok := set[i]
		if !ok {
			continue
		}
		if p.Kind != yamlv3.MappingNode || p.Style&yamlv3.FlowStyle != 0 || len(p.Content) == 0 {
			return nil, fmt.Errorf("providers[%d] is not written as a block mapping (key: value lines); write it so, then relocate again", i)
		}
		indent := strings.Repeat(" ", p.Content[0].Column-1)
		var b strings.Builder
		if len(rs) > 0 {
			b.WriteString(indent + "relocate:\n")
			for _, r := range rs {
				fmt.Fprintf(&b, "%s- from: %s\n%s  to: %s\n", indent, r.From, indent, r.To)
			}
		}
		e := edit{from: lastLine(p), text: b.String()}
		e.to = e.from
		for k := 0; k+1 < len(p.Content); k += 2 {
			if p.Content[k].Value == "relocate" {
				e.from, e.to = p.Content[k].Line-1, lastLine(p.Content[k+1])
			}
		}
		edits = append(edits, e)
	}
	// Last first, so earlier line numbers stay valid.
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		if e.to > len(lines) {
			e.to = len(lines)
		}
		if e.from == len(lines) && len(lines) > 0 && !strings.HasSuffix(lines[len(lines)-1], "\n") {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines[:e.from], append([]string{e.text}, lines[e.to:]...)...)
	}
	return []byte(strings.Join(lines, "")), nil
}

// lastLine is the 1-based last line any node of n's subtree is on, which
// is the 0-based index of the line after it.
func lastLine(n *yamlv3.Node) int {
	last := n.Line
	for _, c := range n.Content {
		if l := lastLine(c); l > last {
			last = l
		}
	}
	return last
}

func mapValue(m *yamlv3.Node, key string) *yamlv3.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
