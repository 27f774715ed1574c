package cluster

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// configMaps: the ConfigMaps each provider's selector matches in the
// cluster are exactly one, and it is the tree's rendered ConfigMap of the
// same release (components compared inflated, metadata, and the labels
// and annotations the operator reads); without a tree, one that someone
// edited in place.
func configMaps(in *Input) []report.Finding {
	var out []report.Finding
	for _, p := range in.Snap.Providers {
		if p.Selector == nil || in.denied(CheckConfigMap, p.Namespace) {
			continue
		}
		pkg, tp := in.treeProvider(p)
		var want *model.ConfigMap
		if tp != nil {
			if m, ok := in.ix.Select(pkg, tp).Picked(p.Version); ok {
				want = m.ConfigMap
			}
		}
		switch len(p.Matches) {
		case 0:
			msg := fmt.Sprintf("the selector of %s matches no ConfigMap in namespace %s: the operator has nothing to install release %q from (\"config map not found\")", p.Ref(), p.Namespace, p.Version)
			if want != nil {
				msg += fmt.Sprintf("; the tree's is ConfigMap %s (%s)", want.Name, path(pkg, want.File))
			}
			out = append(out, in.finding(CheckConfigMap, p, p.Namespace, msg, "deploy the package's ConfigMap to the cluster"))
			continue
		case 1:
		default:
			out = append(out, in.finding(CheckConfigMap, p, p.Namespace,
				fmt.Sprintf("the selector of %s/%s matches %d ConfigMaps in namespace %s (%s): the operator refuses a selector that matches more than one", p.Kind, p.Name, len(p.Matches), p.Namespace, names(p.Matches)),
				"delete the ConfigMaps of other releases, or tell providers apart with a second label in the selector"))
		}
		if p.Version != "" && !slices.ContainsFunc(p.Matches, func(cm *ConfigMap) bool { return versionOf(cm) == p.Version }) {
			vs := make([]string, len(p.Matches))
			for i, cm := range p.Matches {
				vs[i] = fmt.Sprintf("%s (release %s)", cm.Name, versionOf(cm))
			}
			out = append(out, in.finding(CheckConfigMap, p, p.Namespace,
				fmt.Sprintf("the selector of %s matches %s but spec.version is %q: the operator cannot install spec.version from it (\"config map not found\") and keeps what is installed", p.Ref(), strings.Join(vs, ", "), p.Version),
				"set spec.version to the release the ConfigMap holds (with Turtles, on the CAPIProvider: Turtles sets it only when it is empty), or deploy the ConfigMap of spec.version"))
		}
		for _, cm := range p.Matches {
			if want != nil && versionOf(cm) == p.Version {
				if f, ok := in.compare(p, cm, want, pkg); ok {
					out = append(out, f)
				}
				continue
			}
			if w := editor(cm); w != nil {
				out = append(out, in.edited(p, cm, w, ""))
			}
		}
	}
	return out
}

// path is a tree file's path relative to the tree root.
func path(pkg *model.Package, file string) string {
	if pkg == nil || pkg.Path == "" || pkg.Path == "." {
		return file
	}
	return pkg.Path + "/" + file
}

// compare judges the cluster's ConfigMap cm of p's release against the
// tree's want: the same content is fine; other content written by someone
// other than its labeller is an edit in place, else a stale copy.
func (in *Input) compare(p *Provider, cm *ConfigMap, want *model.ConfigMap, pkg *model.Package) (report.Finding, bool) {
	diffs := in.differences(cm, want)
	if len(diffs) == 0 {
		return report.Finding{}, false
	}
	what := strings.Join(diffs, "; ")
	if w := editor(cm); w != nil {
		return in.edited(p, cm, w, what), true
	}
	return in.finding(CheckConfigMap, p, p.Namespace,
		fmt.Sprintf("ConfigMap %s/%s is stale: same name as the tree's ConfigMap of release %q (%s), other content (%s); the operator never installs the tree's content under a release it already has",
			cm.Namespace, cm.Name, p.Version, path(pkg, want.File), what),
		"give the changed content a new release name (bump spec.version and the ConfigMap's name), then deploy the package"), true
}

// edited is the finding for a ConfigMap whose content a field manager
// other than its labeller wrote; what says how it differs from the tree
// ("" without a tree).
func (in *Input) edited(p *Provider, cm *ConfigMap, w *Writer, what string) report.Finding {
	msg := fmt.Sprintf("ConfigMap %s/%s was edited in place: its content was written by %q (%s, %s), not by the %q that made it; changes under an unchanged release name are never rolled out",
		cm.Namespace, cm.Name, w.Manager, w.Operation, w.Time.UTC().Format(time.RFC3339), labeller(cm))
	if what != "" {
		msg += "; against the tree: " + what
	}
	return in.finding(CheckConfigMap, p, p.Namespace, msg,
		"redeploy the package to restore the ConfigMap; release changed content under a new version instead")
}

func labeller(cm *ConfigMap) string {
	for _, w := range cm.Writers {
		if w.Labels {
			return w.Manager
		}
	}
	return ""
}

// differences lists how cm differs from the tree's want: components
// (inflated), metadata, and the compressed annotation and labels the
// tree sets.
func (in *Input) differences(cm *ConfigMap, want *model.ConfigMap) []string {
	var out []string
	got, _, err := content(cm, in.Limit)
	tree, ok := treeContent(want)
	switch {
	case err != nil:
		out = append(out, "components: "+err.Error())
	case ok && sha(got) != tree:
		out = append(out, fmt.Sprintf("components %s, the tree's %s", sha(got), tree))
	}
	if !bytes.Equal(cm.Metadata, want.MetadataRaw) {
		out = append(out, fmt.Sprintf("metadata %s, the tree's %s", sha(cm.Metadata), sha(want.MetadataRaw)))
	}
	if a, b := cm.Annotations[model.CompressedAnnotation], want.Annotations[model.CompressedAnnotation]; a != b {
		out = append(out, fmt.Sprintf("annotation %s %q, the tree's %q", model.CompressedAnnotation, a, b))
	}
	for _, k := range slices.Sorted(maps.Keys(want.Labels)) {
		if v, ok := cm.Labels[k]; !ok || v != want.Labels[k] {
			out = append(out, fmt.Sprintf("label %s=%q, the tree's %q", k, v, want.Labels[k]))
		}
	}
	return out
}
