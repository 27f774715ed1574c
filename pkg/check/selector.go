package check

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// nsName renders a namespace for messages.
func nsName(ns string) string {
	if ns == "" {
		return "the default namespace"
	}
	return fmt.Sprintf("namespace %q", ns)
}

// configMapVersion: the ConfigMap the selector picks has the version
// spec.version (label, else name), as the operator keys it.
func configMapVersion(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	providers(t, func(pkg *model.Package, p *model.Provider) {
		if p.Selector == nil {
			return
		}
		if p.Version == "" && p.Turtles() {
			out = append(out, turtlesNoVersion(ix, pkg, p)...)
			return
		}
		if p.Version == "" {
			out = append(out, newFinding(ConfigMapVersion, pkg, p.ID(), p.Location,
				fmt.Sprintf("%s has no spec.version: the operator installs whichever version it thinks is latest", p.ID()),
				"set spec.version to the release, the name of the ConfigMap it should install"))
			return
		}
		s := ix.Select(pkg, p)
		if s.Err != nil || len(s.Matches) == 0 {
			return // selector-unique says why
		}
		if _, ok := s.Picked(p.Version); ok {
			return
		}
		var got []string
		for _, m := range s.Matches {
			v, from := VersionOf(m.ConfigMap)
			where := describe([]Match{m})
			if from != "name" {
				where = fmt.Sprintf("%s of ConfigMap %s", from, where)
			} else {
				where = "ConfigMap " + where
			}
			got = append(got, fmt.Sprintf("%q (%s)", v, where))
		}
		m := s.Matches[0]
		out = append(out, newFinding(ConfigMapVersion, pkg, p.ID(), p.Location,
			fmt.Sprintf("spec.version is %q but its selector matches only version %s: the operator cannot install %q and keeps the old provider",
				p.Version, strings.Join(got, ", "), p.Version),
			fmt.Sprintf("make the ConfigMap name (%s) and spec.version (%s) the same release, then `builder build %s`",
				rel(m.Package, m.ConfigMap.File), rel(pkg, p.File), pkg.CommandPath())))
	})
	return out
}

// turtlesNoVersion: a CAPIProvider with no spec.version gets the version
// Turtles' clusterctl config names for it when Turtles reconciles it
// (rancher/turtles internal/provider/defaults.go setLatestVersion at
// b2e1223): not "whatever is latest", but not what the tree says either.
// The ConfigMap its selector matches is installed only while that version
// is the ConfigMap's: a warning naming the version to write down.
func turtlesNoVersion(ix *Index, pkg *model.Package, p *model.Provider) []report.Finding {
	s := ix.Select(pkg, p)
	if s.Err != nil || len(s.Matches) != 1 {
		return nil // selector-unique says why
	}
	m := s.Matches[0]
	v, _ := VersionOf(m.ConfigMap)
	f := newFinding(ConfigMapVersion, pkg, p.ID(), p.Location,
		fmt.Sprintf("%s (%s) has no spec.version: Turtles sets the version its clusterctl config names for it, and the ConfigMap %s its selector matches holds %q; the tree does not say they agree", p.ID(), p.Object, describe([]Match{m}), v),
		fmt.Sprintf("set spec.version to %s (the ConfigMap's version) in %s, so the tree says what the cluster installs", v, rel(pkg, p.File)))
	f.Severity = report.Warning
	return []report.Finding{f}
}

// selectorUnique: each provider's selector is valid and matches exactly
// one ConfigMap in its namespace across the whole tree.
func selectorUnique(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	providers(t, func(pkg *model.Package, p *model.Provider) {
		if p.Selector == nil {
			return
		}
		s := ix.Select(pkg, p)
		ns := nsName(Namespace(pkg, p.Namespace))
		switch {
		case s.Err != nil:
			out = append(out, newFinding(SelectorUnique, pkg, p.ID(), p.Location,
				fmt.Sprintf("%s: %v", p.ID(), s.Err),
				"use matchLabels, or matchExpressions with operator In, NotIn, Exists or DoesNotExist"))
		case len(s.Matches) == 0:
			out = append(out, newFinding(SelectorUnique, pkg, p.ID(), p.Location,
				fmt.Sprintf("the selector of %s matches no ConfigMap in %s: the operator has nothing to install", p.ID(), ns),
				"give the package's ConfigMap the selector's labels (or fix the selector)"))
		case len(s.Matches) > 1:
			out = append(out, newFinding(SelectorUnique, pkg, p.ID(), p.Location,
				fmt.Sprintf("the selector of %s matches %d ConfigMaps in %s: %s; newer operators refuse, older ones fail the whole version list on one bad match",
					p.ID(), len(s.Matches), ns, describe(s.Matches)),
				"give each provider's ConfigMap a distinguishing label and add it to that provider's selector matchLabels"))
		}
	})
	return out
}

// selectorSemver: every ConfigMap a selector matches has a semver version.
func selectorSemver(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	pick := pickers(t, ix)
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			ps := pick[cm]
			v, from := VersionOf(cm)
			if _, err := version.ParseSemantic(v); err == nil {
				continue
			}
			if len(ps) == 0 {
				// Shaped as provider components but selected by no
				// provider in the tree (an air-gap chart: the providers
				// are created elsewhere): whichever selects it reads its
				// name as a version.
				out = append(out, newFinding(SelectorSemver, pkg, "", cm.Location,
					fmt.Sprintf("ConfigMap %q in %s holds provider components but has version %q (from its %s), which is not semver: the provider that selects it will fail its whole version list",
						cm.Name, nsName(cm.Namespace), v, from),
					fmt.Sprintf("name the ConfigMap after the release (e.g. v1.2.3 or v1.2.3-suffix) or set the label %s to it", model.VersionLabel)))
				continue
			}
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID()
			}
			out = append(out, newFinding(SelectorSemver, pkg, ownerOf(pkg, cm, pick), cm.Location,
				fmt.Sprintf("ConfigMap %q has version %q (from its %s), which is not semver; it is matched by the selector of %s, so the operator fails the whole version list",
					cm.Name, v, from, strings.Join(ids, ", ")),
				fmt.Sprintf("name the ConfigMap after the release (e.g. v1.2.3 or v1.2.3-suffix) or set the label %s to it", model.VersionLabel)))
		}
	}
	return out
}

// providerDuplicate: one kind, name and namespace is one object in the
// cluster; two in the tree with different versions mean one of them is
// never installed. Copies with one version (golden renders) are left
// alone.
func providerDuplicate(in *Input) []report.Finding {
	type key struct{ ns, id string }
	type seen struct {
		pkg *model.Package
		p   *model.Provider
	}
	first := map[key]seen{}
	var out []report.Finding
	providers(in.Tree, func(pkg *model.Package, p *model.Provider) {
		if pkg.Fixture || p.Turtles() && p.Version == "" {
			// A CAPIProvider with no spec.version asks for the version
			// Turtles' clusterctl config names when it reconciles it,
			// which the tree does not show: no version to compare.
			return
		}
		k := key{Namespace(pkg, p.Namespace), p.ID()}
		f, ok := first[k]
		if !ok {
			first[k] = seen{pkg, p}
			return
		}
		if f.p.Version == p.Version {
			return
		}
		out = append(out, newFinding(ProviderDuplicate, pkg, p.ID(), p.Location,
			fmt.Sprintf("%s in %s asks for version %q, but %s (%s) is the same provider object asking for %q: the cluster holds one, so one of them is never installed",
				p.ID(), nsName(k.ns), p.Version, p.ID(), rel(f.pkg, f.p.File), f.p.Version),
			"keep one provider object per kind, name and namespace; if these are golden renders, list their folder under fixtures: in the policy"))
	})
	return out
}
