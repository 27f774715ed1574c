package check

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/model"
)

// Match is a ConfigMap a provider's selector matches, with its package.
type Match struct {
	Package   *model.Package
	ConfigMap *model.ConfigMap
}

// Selection is the result of evaluating one provider's selector.
type Selection struct {
	Matches []Match // in tree order (package path, then ConfigMap order)
	Err     error   // the selector is invalid
}

// Picked is the match whose version (as the operator reads it) equals
// version, if any.
func (s Selection) Picked(version string) (Match, bool) {
	for _, m := range s.Matches {
		if v, _ := VersionOf(m.ConfigMap); v == version {
			return m, true
		}
	}
	return Match{}, false
}

// Index answers "which ConfigMaps does this provider's selector match" the
// way the cluster-api-operator does: ConfigMaps in the provider's namespace,
// across the whole tree. Build one with NewIndex; it is not safe for
// concurrent use.
type Index struct {
	byNS  map[string]*nsIndex
	cache map[*model.Provider]Selection
}

type nsIndex struct {
	all     []Match
	byLabel map[string][]int // "key=value" -> positions in all
}

// NewIndex indexes every ConfigMap of the tree by namespace and label.
func NewIndex(t *model.Tree) *Index {
	ix := &Index{byNS: map[string]*nsIndex{}, cache: map[*model.Provider]Selection{}}
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			ns := Namespace(pkg, cm.Namespace)
			n := ix.byNS[ns]
			if n == nil {
				n = &nsIndex{byLabel: map[string][]int{}}
				ix.byNS[ns] = n
			}
			pos := len(n.all)
			n.all = append(n.all, Match{Package: pkg, ConfigMap: cm})
			for k, v := range cm.Labels {
				n.byLabel[k+"="+v] = append(n.byLabel[k+"="+v], pos)
			}
		}
	}
	return ix
}

// Namespace is an object's namespace: its own, else its package's.
func Namespace(pkg *model.Package, own string) string {
	if own != "" {
		return own
	}
	if pkg != nil {
		return pkg.Namespace
	}
	return ""
}

// Select evaluates the selector of p (a provider of pkg). A provider with
// no selector (fetching by URL or OCI) selects nothing and has no error.
func (ix *Index) Select(pkg *model.Package, p *model.Provider) Selection {
	if s, ok := ix.cache[p]; ok {
		return s
	}
	s := ix.selectUncached(pkg, p)
	ix.cache[p] = s
	return s
}

func (ix *Index) selectUncached(pkg *model.Package, p *model.Provider) Selection {
	if p.Selector == nil {
		return Selection{}
	}
	sel, err := layout.Selector(p.Selector)
	if err != nil {
		return Selection{Err: err}
	}
	n := ix.byNS[Namespace(pkg, p.Namespace)]
	if n == nil {
		return Selection{}
	}
	// Narrow to the ConfigMaps carrying the rarest matchLabels pair; the
	// full selector is evaluated on those only.
	candidates := -1
	var narrowed []int
	for k, v := range p.Selector.MatchLabels {
		l := n.byLabel[k+"="+v]
		if candidates < 0 || len(l) < candidates {
			candidates, narrowed = len(l), l
		}
	}
	var out []Match
	test := func(m Match) {
		if sel.Matches(labels.Set(m.ConfigMap.Labels)) {
			out = append(out, m)
		}
	}
	if candidates >= 0 {
		for _, i := range narrowed {
			test(n.all[i])
		}
	} else {
		for _, m := range n.all {
			test(m)
		}
	}
	return Selection{Matches: out}
}

// VersionOf is the version the operator reads from a ConfigMap: the
// provider.cluster.x-k8s.io/version label when present, else the name.
// from says which ("label" or "name").
func VersionOf(cm *model.ConfigMap) (version, from string) {
	if v, ok := cm.Labels[model.VersionLabel]; ok {
		return v, "label " + model.VersionLabel
	}
	return cm.Name, "name"
}

// describe lists matches as `"name" (pkg/file:line)`.
func describe(ms []Match) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ", "
		}
		where := rel(m.Package, m.ConfigMap.File)
		if where == "" {
			where = pkgPath(m.Package)
		}
		if m.ConfigMap.Line > 0 {
			where = fmt.Sprintf("%s:%d", where, m.ConfigMap.Line)
		}
		s += fmt.Sprintf("%q (%s)", m.ConfigMap.Name, where)
	}
	return s
}

// providers iterates every provider of the tree with its package, in tree
// order.
func providers(t *model.Tree, fn func(pkg *model.Package, p *model.Provider)) {
	for _, pkg := range t.Packages {
		for _, p := range pkg.Providers {
			fn(pkg, p)
		}
	}
}

// pickers maps each ConfigMap to the providers whose selector matches it.
func pickers(t *model.Tree, ix *Index) map[*model.ConfigMap][]*model.Provider {
	out := map[*model.ConfigMap][]*model.Provider{}
	providers(t, func(pkg *model.Package, p *model.Provider) {
		for _, m := range ix.Select(pkg, p).Matches {
			out[m.ConfigMap] = append(out[m.ConfigMap], p)
		}
	})
	return out
}

// eachConfigMap calls fn for every ConfigMap of the tree, package by
// package, with the provider to name on a finding about it (ownerOf: ""
// when no provider in the tree selects it).
func eachConfigMap(in *Input, fn func(pkg *model.Package, cm *model.ConfigMap, owner string)) {
	t := in.Tree
	pick := pickers(t, in.Index)
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			fn(pkg, cm, ownerOf(pkg, cm, pick))
		}
	}
}

// ownerOf is the provider to name on a ConfigMap finding: a provider of the
// ConfigMap's own package that matches it, else any that matches it.
func ownerOf(pkg *model.Package, cm *model.ConfigMap, pick map[*model.ConfigMap][]*model.Provider) string {
	ps := pick[cm]
	for _, p := range ps {
		if slices.Contains(pkg.Providers, p) {
			return p.ID()
		}
	}
	if len(ps) > 0 {
		return ps[0].ID()
	}
	return ""
}

// Release is the release p installs as the tree holds it: spec.version,
// or, for a Rancher Turtles CAPIProvider with none, the version of the
// one ConfigMap its selector matches (Turtles fills spec.version in from
// its clusterctl config, and the operator can install only that
// ConfigMap); "" when neither says.
func Release(ix *Index, pkg *model.Package, p *model.Provider) string {
	if p.Version != "" || !p.Turtles() || p.Selector == nil {
		return p.Version
	}
	if ms := ix.Select(pkg, p).Matches; len(ms) == 1 {
		v, _ := VersionOf(ms[0].ConfigMap)
		return v
	}
	return ""
}
