package load

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/model"
)

// clusterctlOverrides reads the provider entries of a Turtles clusterctl
// config object (manifest.IsClusterctlConfig): the clusterctl-config
// ConfigMap's clusterctl.yaml (`providers: [{name, url, type}]`, the
// format Turtles' embedded config-community.yaml has), or a
// ClusterctlConfig's spec.providers (rancher/turtles
// api/v1alpha1/clusterctlconfig_types.go at b2e1223). An entry without a
// name or URL overrides nothing and is left out; a clusterctl.yaml that
// does not parse is left out (Turtles fails to read it too).
func clusterctlOverrides(o sourced) []model.ClusterctlOverride {
	var list *yaml.Node
	from := "ClusterctlConfig " + o.Name
	base := 0 // line of the clusterctl.yaml text, for its entries
	if o.Kind == "ConfigMap" {
		from = "ConfigMap " + o.Name
		n := manifest.LookupPath(o.Root, "data", "clusterctl.yaml")
		text, ok := manifest.Scalar(n)
		if !ok {
			return nil
		}
		var doc yaml.Node
		if yaml.Unmarshal([]byte(text), &doc) != nil || len(doc.Content) == 0 {
			return nil
		}
		list = manifest.Lookup(doc.Content[0], "providers")
		base = n.Line
		if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
			base = 0 // a quoted or plain string: its lines are not the file's
		}
	} else {
		list = manifest.LookupPath(o.Root, "spec", "providers")
	}
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	var out []model.ClusterctlOverride
	for _, e := range list.Content {
		name, _ := manifest.Scalar(manifest.Lookup(e, "name"))
		url, _ := manifest.Scalar(manifest.Lookup(e, "url"))
		typ, _ := manifest.Scalar(manifest.Lookup(e, "type"))
		if name == "" || url == "" {
			continue
		}
		line := o.Line
		switch {
		case o.Kind != "ConfigMap":
			line = o.fileLine(e.Line)
		case base > 0 && o.fileLine(base) > 0:
			// The block's lines follow its key's line as written.
			line = o.fileLine(base) + e.Line
		}
		out = append(out, model.ClusterctlOverride{Name: name, Type: strings.TrimSpace(typ), URL: strings.TrimSpace(url), From: from,
			Location: model.Location{File: o.File, Line: line}})
	}
	return out
}

// resolveClusterctl gives each Turtles CAPIProvider with no
// spec.fetchConfig the tree's clusterctl config entry of its name and
// kind, a ClusterctlConfig's before the ConfigMap's (Turtles' ClusterConfig
// merges the ClusterctlConfig over the ConfigMap by name and type; its
// GetProviderVersion matches the type without regard to case).
func resolveClusterctl(t *model.Tree) {
	var all []*model.ClusterctlOverride
	for _, pkg := range t.Packages {
		for i := range pkg.Clusterctl {
			all = append(all, &pkg.Clusterctl[i])
		}
	}
	if len(all) == 0 {
		return
	}
	for _, pkg := range t.Packages {
		for _, p := range pkg.Providers {
			if !p.Turtles() || p.Selector != nil || p.FetchURL != "" || p.FetchOCI != "" {
				continue
			}
			for _, ov := range all {
				if ov.Name != p.Name || !strings.EqualFold(ov.Type, p.Kind) {
					continue
				}
				if p.Clusterctl == nil || strings.HasPrefix(ov.From, "ClusterctlConfig") {
					p.Clusterctl = ov
				}
			}
		}
	}
}
