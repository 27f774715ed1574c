// Package changes compares two releases of a provider's components (the
// vendored components YAML and clusterctl metadata.yaml before and after a
// bump) and says what changes for the clusters that run them: CRD versions
// no longer served, storage versions and conversion, the contract, images,
// RBAC, the variables the operator must be given, namespaces.
//
// Compare is a pure function of the bytes: `builder bump` reports its
// changes and refuses the Breaking ones, and an upgrade plan can show the
// same report for each step.
package changes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/internal/yamlbound"
)

// Change kinds, in the order a report lists them.
const (
	CRDVersionRemoved    = "crd-version-removed"
	CRDStorageChanged    = "crd-storage-changed"
	CRDConversionRemoved = "crd-conversion-removed"
	ContractChanged      = "contract-changed"
	ImageChanged         = "image-changed"
	RBACWidened          = "rbac-widened"
	VariableAdded        = "variable-added"
	NamespaceChanged     = "namespace-changed"
)

// Kinds are the change kinds, in report order.
var Kinds = []string{CRDVersionRemoved, CRDStorageChanged, CRDConversionRemoved, ContractChanged,
	ImageChanged, RBACWidened, VariableAdded, NamespaceChanged}

// Change is one difference between two releases that matters to the
// clusters running them.
type Change struct {
	Kind string `json:"kind"`
	// Object is what changes: Kind/name of a Kubernetes object, a
	// ${VARIABLE}, or metadata.yaml for the contract.
	Object string `json:"object"`
	Detail string `json:"detail"`
	// Breaking: clusters running the old release stop working with the new
	// one (a served CRD version gone without a conversion webhook, a
	// contract the core does not serve).
	Breaking bool `json:"breaking,omitempty"`
}

// Release is one side of a comparison.
type Release struct {
	// Version is the upstream version (vX.Y.Z); it selects the release
	// series of Metadata whose contract is compared.
	Version string
	// Components is the components YAML (multi-document).
	Components []byte
	// Metadata is clusterctl's metadata.yaml; nil compares no contract.
	Metadata []byte
}

// Options tune a comparison.
type Options struct {
	// Served are the contracts the tree's core provider serves: a new
	// contract outside them is Breaking. Empty: contracts are reported, not
	// judged (the release is the core's own, or the core is unknown).
	Served []string
}

// Bounds of what Compare parses: components come from upstream releases,
// pinned but not trusted, and are parsed in this process. The largest real
// components files (Cluster API core) are a few MB and a few hundred
// thousand YAML nodes.
const (
	MaxBytes       = 64 << 20
	MaxNodes       = 2 << 20
	MaxScalarBytes = 128 << 20
)

// Compare lists what changes from before to after, breaking changes first,
// then by kind (Kinds order) and object. Components that do not parse
// are an error naming the side and the line.
func Compare(before, after Release, opts Options) ([]Change, error) {
	o, err := parseSide("old", before.Components)
	if err != nil {
		return nil, err
	}
	n, err := parseSide("new", after.Components)
	if err != nil {
		return nil, err
	}
	var out []Change
	out = append(out, compareCRDs(o, n)...)
	out = append(out, compareContract(before, after, opts)...)
	imgs, err := compareImages(before.Components, after.Components)
	if err != nil {
		return nil, err
	}
	out = append(out, imgs...)
	rbac, err := compareRBAC(o, n)
	if err != nil {
		return nil, err
	}
	out = append(out, rbac...)
	out = append(out, compareVariables(before.Components, after.Components)...)
	out = append(out, compareNamespaces(o, n)...)
	sortChanges(out)
	return out, nil
}

// Breaking returns the breaking changes of cs.
func Breaking(cs []Change) []Change {
	var out []Change
	for _, c := range cs {
		if c.Breaking {
			out = append(out, c)
		}
	}
	return out
}

func sortChanges(cs []Change) {
	rank := map[string]int{}
	for i, k := range Kinds {
		rank[k] = i
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Breaking != b.Breaking {
			return a.Breaking
		}
		if a.Kind != b.Kind {
			return rank[a.Kind] < rank[b.Kind]
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Detail < b.Detail
	})
}

// object is one Kubernetes object of a components file.
type object struct {
	kind, name, namespace string
	line                  int
	node                  *yaml.Node // the document's top mapping
}

func (o *object) id() string { return o.kind + "/" + o.name }

// side is the objects of one components file by Kind/name.
type side struct {
	objs  []*object
	byID  map[string]*object
	order []string
}

// parseSide parses a components file within the bounds.
func parseSide(which string, data []byte) (*side, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("%s components: %d bytes, more than the %d compared", which, len(data), MaxBytes)
	}
	if _, err := yamlbound.Measure(data, yamlbound.Limits{MaxNodes: MaxNodes, MaxScalarBytes: MaxScalarBytes}); err != nil {
		return nil, fmt.Errorf("%s components: %w", which, err)
	}
	s := &side{byID: map[string]*object{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s components: %w", which, err)
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		top := doc.Content[0]
		o := &object{kind: text(get(top, "kind")), line: top.Line, node: top}
		md := get(top, "metadata")
		o.name, o.namespace = text(get(md, "name")), text(get(md, "namespace"))
		if o.kind == "" || o.name == "" {
			continue
		}
		s.objs = append(s.objs, o)
		if _, dup := s.byID[o.id()]; !dup {
			s.byID[o.id()] = o
			s.order = append(s.order, o.id())
		}
	}
}

// get returns the value of key in mapping m (aliases followed), else nil.
func get(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return deref(m.Content[i+1])
		}
	}
	return nil
}

// deref follows an alias to its anchor, a bounded number of hops.
func deref(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 32 {
			return nil
		}
		n = n.Alias
	}
	return n
}

// isTrue reads a YAML boolean as Kubernetes' decoder (YAML 1.1) does.
func isTrue(n *yaml.Node) bool {
	switch text(n) {
	case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y":
		return true
	}
	return false
}

func text(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func texts(n *yaml.Node) []string {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if c = deref(c); c != nil && c.Kind == yaml.ScalarNode {
			out = append(out, c.Value)
		}
	}
	return out
}

// compareContract reports a new contract for the release series, breaking
// when the core does not serve it.
func compareContract(before, after Release, opts Options) []Change {
	if before.Metadata == nil || after.Metadata == nil {
		return nil
	}
	oc, oerr := metadata.Contract(before.Metadata, before.Version)
	nc, nerr := metadata.Contract(after.Metadata, after.Version)
	if oerr != nil || nerr != nil || oc == nc {
		// A series missing from the metadata is the metadata-series
		// check's to report.
		return nil
	}
	c := Change{Kind: ContractChanged, Object: "metadata.yaml",
		Detail: fmt.Sprintf("release series %s declares contract %s (%s declared %s)", series(after.Version), nc, series(before.Version), oc)}
	if len(opts.Served) > 0 {
		if !slices.Contains(opts.Served, nc) {
			c.Breaking = true
			c.Detail += fmt.Sprintf("; the core provider serves %s, not %s: upgrade the core first", strings.Join(opts.Served, ", "), nc)
		}
	}
	return []Change{c}
}

// series is "major.minor" of vX.Y.Z.
func series(v string) string {
	v = strings.TrimPrefix(v, "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
