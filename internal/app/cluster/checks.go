package cluster

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// Input is everything the checks judge: the cluster as read, the tree
// (nil without one) and what the registry holds for the providers that
// install from fetchConfig.oci.
type Input struct {
	Snap *Snapshot
	Tree *model.Tree
	// OCI is the registry side of each fetchConfig.oci provider, by
	// Provider.
	OCI map[*Provider]*OCIResult
	// Limit bounds inflating compressed components (blob.DefaultLimit
	// when <= 0).
	Limit int64

	ix *check.Index
}

// Findings runs the five cluster checks; findings carry no severity yet
// (the policy sets it).
func Findings(in *Input) []report.Finding {
	if in.Tree != nil && in.ix == nil {
		in.ix = check.NewIndex(in.Tree)
	}
	var out []report.Finding
	out = append(out, forbidden(in)...)
	out = append(out, installed(in)...)
	out = append(out, configMaps(in)...)
	out = append(out, ociCopies(in)...)
	out = append(out, workloads(in)...)
	out = append(out, crds(in)...)
	return out
}

// where names the cluster and namespace of a finding: the report's
// package path, "CONTEXT/NAMESPACE" ("CONTEXT" for cluster-scoped objects).
func (in *Input) where(ns string) string {
	c := in.Snap.Context
	if c == "" {
		c = "cluster"
	}
	if ns == "" {
		return c
	}
	return c + "/" + ns
}

func (in *Input) finding(id string, p *Provider, ns, msg, hint string) report.Finding {
	f := report.Finding{Check: id, Package: in.where(ns), Message: msg, Hint: hint}
	if p != nil {
		f.Provider = p.ID()
	}
	return f
}

// denied reports whether a read the check needed in ns was forbidden:
// its findings would be about what could not be read.
func (in *Input) denied(id, ns string) bool {
	return slices.ContainsFunc(in.Snap.Forbidden, func(f Forbidden) bool {
		return f.Check == id && (f.Namespace == "" || f.Namespace == ns)
	})
}

// forbidden: each refused read is a finding of the check that needed it,
// naming the permission to grant.
func forbidden(in *Input) []report.Finding {
	var out []report.Finding
	for _, f := range in.Snap.Forbidden {
		scope := "in all namespaces"
		if f.Namespace != "" {
			scope = "in namespace " + f.Namespace
		}
		group := f.Group
		if group == "" {
			group = `"" (core)`
		}
		out = append(out, in.finding(f.Check, nil, f.Namespace,
			fmt.Sprintf("permission missing: %s %s %s (apiGroup %s) is forbidden to these credentials, so %s could not be checked: %s",
				f.Verb, f.Resource, scope, group, f.Check, f.Message),
			fmt.Sprintf("grant get, list and watch on %s in apiGroup %s (the chart's read-only ClusterRole, docs/cluster.md)", f.Resource, group)))
	}
	return out
}

// treeProvider is the tree's provider of p's kind, namespace and name,
// with its package; nil without a tree or when the tree has none.
func (in *Input) treeProvider(p *Provider) (*model.Package, *model.Provider) {
	if in.Tree == nil {
		return nil, nil
	}
	for _, pkg := range in.Tree.Packages {
		for _, tp := range pkg.Providers {
			if tp.Kind == p.Kind && tp.Name == p.Name && check.Namespace(pkg, tp.Namespace) == p.Namespace {
				return pkg, tp
			}
		}
	}
	return nil, nil
}

// installed: spec.version is what the operator installed, its
// conditions hold, and the tree requests the same release.
func installed(in *Input) []report.Finding {
	var out []report.Finding
	for _, p := range in.Snap.Providers {
		obj := p.Ref()
		switch {
		case p.InstalledVersion == "":
			out = append(out, in.finding(CheckInstalled, p, p.Namespace,
				fmt.Sprintf("%s requests release %q but has no status.installedVersion: the operator has not installed it", obj, p.Version),
				"look at the provider's conditions and the operator's log for why it does not install"))
		case p.InstalledVersion != p.Version:
			out = append(out, in.finding(CheckInstalled, p, p.Namespace,
				fmt.Sprintf("%s requests release %q (spec.version) but %q is installed (status.installedVersion)", obj, p.Version, p.InstalledVersion),
				"the operator did not upgrade: look at the provider's conditions; a ConfigMap missing or matched twice keeps it on the old release"))
		}
		for _, c := range p.Conditions {
			if c.Status != "False" {
				continue
			}
			out = append(out, in.finding(CheckInstalled, p, p.Namespace,
				fmt.Sprintf("%s condition %s is False since %s: %s: %s", obj, c.Type, c.Since.UTC().Format(time.RFC3339), c.Reason, c.Message),
				"fix what the condition's message names; the operator retries on its own"))
		}
		// A CAPIProvider with no spec.version in the tree gets one from
		// Turtles' clusterctl config when Turtles reconciles it
		// (internal/provider/defaults.go setLatestVersion): nothing to
		// compare.
		if pkg, tp := in.treeProvider(p); tp != nil && tp.Version != p.Version && !(tp.Turtles() && tp.Version == "") {
			out = append(out, in.finding(CheckInstalled, p, p.Namespace,
				fmt.Sprintf("%s requests release %q, the tree's %s (%s) requests %q", obj, p.Version, tp.ID(), pkg.Path, tp.Version),
				"deploy the tree's package to the cluster (or change the tree to what the cluster should run)"))
		}
	}
	return append(out, mirrored(in)...)
}

// mirrored: an operator object Turtles created from a CAPIProvider (before
// v0.22) carries the CAPIProvider's spec, which Turtles copies down on
// every reconcile; one that differs is a copy Turtles stopped syncing, and
// the operator installs what it says, not what the CAPIProvider says.
func mirrored(in *Input) []report.Finding {
	var out []report.Finding
	for _, m := range in.Snap.Mirrors {
		c := m.MirrorOf
		var diffs []string
		if m.Version != c.Version {
			diffs = append(diffs, fmt.Sprintf("spec.version %q, the CAPIProvider's %q", m.Version, c.Version))
		}
		if a, b := selectorString(m.Selector), selectorString(c.Selector); a != b {
			diffs = append(diffs, fmt.Sprintf("spec.fetchConfig.selector %s, the CAPIProvider's %s", a, b))
		}
		if m.FetchURL != c.FetchURL {
			diffs = append(diffs, fmt.Sprintf("spec.fetchConfig.url %q, the CAPIProvider's %q", m.FetchURL, c.FetchURL))
		}
		if m.FetchOCI != c.FetchOCI {
			diffs = append(diffs, fmt.Sprintf("spec.fetchConfig.oci %q, the CAPIProvider's %q", m.FetchOCI, c.FetchOCI))
		}
		if len(diffs) == 0 {
			continue
		}
		out = append(out, in.finding(CheckInstalled, c, m.Namespace,
			fmt.Sprintf("%s %s/%s, which Turtles created from %s and owns, is out of step with it: %s; the operator installs what the copy says",
				m.Kind, m.Namespace, m.Name, c.Ref(), strings.Join(diffs, "; ")),
			"look at the Turtles controller's log for why it does not sync the provider; Turtles from v0.22 reconciles the CAPIProvider itself and creates no copy"))
	}
	return out
}

// selectorString is a selector as one comparable string.
func selectorString(s *model.Selector) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%v %v", s.MatchLabels, s.MatchExpressions)
}

func sha(b []byte) blob.Digest { return sha256.Sum256(b) }

// treeContent is the digest of a tree ConfigMap's components, inflated
// when gzip; false when they could not be read.
func treeContent(cm *model.ConfigMap) (blob.Digest, bool) {
	c := cm.Components
	switch {
	case c == nil || c.DecodeErr != nil:
		return blob.Digest{}, false
	case c.Gzip:
		if c.Blob == nil || c.Blob.Err != nil {
			return blob.Digest{}, false
		}
		return c.Blob.RawSHA256, true
	}
	return c.SHA256, true
}

// editor is the field manager that wrote cm's components or metadata
// without being the one that labelled it (which made it a provider's
// ConfigMap: Helm, the operator, a GitOps tool): someone edited it in
// place. Nil when the content's writers are the labeller.
func editor(cm *ConfigMap) *Writer {
	labeller := ""
	for _, w := range cm.Writers {
		if w.Labels {
			labeller = w.Manager
		}
	}
	for i := range cm.Writers {
		w := &cm.Writers[i]
		if w.Content && !w.Labels && w.Manager != labeller && labeller != "" {
			return w
		}
	}
	return nil
}

// versionOf is the version the operator reads from a ConfigMap.
func versionOf(cm *ConfigMap) string {
	if v, ok := cm.Labels[model.VersionLabel]; ok {
		return v
	}
	return cm.Name
}

func names(cms []*ConfigMap) string {
	s := make([]string, len(cms))
	for i, cm := range cms {
		s[i] = cm.Name
	}
	return strings.Join(s, ", ")
}
