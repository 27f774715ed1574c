package check

import (
	"fmt"
	"strings"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// Source says where the cluster-api-operator takes p's components from,
// and what holds those bytes: ConfigMaps of the tree (vendored, pinned
// when the package that holds them pins its files by SHA-256), an OCI
// artifact (pinned when this run read it from the registry), or a release
// downloaded at install time from spec.fetchConfig.url or, with no
// fetchConfig at all, from the repository clusterctl's built-in provider
// list names (operator.DefaultDownload), which nothing pins.
func Source(ix *Index, pkg *model.Package, p *model.Provider) report.Source {
	if p.Selector == nil {
		if ms := storeConfigMaps(ix, pkg, p); len(ms) == 1 {
			return storedSource(ms[0], p)
		}
	}
	switch {
	case p.Selector != nil:
		return vendoredSource(ix, pkg, p)
	case p.FetchOCI != "":
		return ociSourceOf(p)
	case p.FetchURL != "":
		return downloadSource(report.SourceURL, operator.URLDownload(p.FetchURL, p.Version))
	}
	return downloadSource(report.SourceDefault, DefaultDownload(p))
}

// DefaultDownload is what the operator downloads for p, which has no
// spec.fetchConfig: from the repository URL the tree's Rancher Turtles
// clusterctl config gives it (model.Provider.Clusterctl), else from
// clusterctl's built-in provider list.
func DefaultDownload(p *model.Provider) operator.Download {
	if p.Clusterctl != nil {
		return operator.URLDownload(p.Clusterctl.URL, p.Version)
	}
	d, _ := operator.DefaultDownload(p.Kind, p.Name, p.Version)
	return d
}

// clusterctlWhere names the clusterctl config entry that sets p's URL.
func clusterctlWhere(pkgs []*model.Package, p *model.Provider) string {
	ov := p.Clusterctl
	for _, pkg := range pkgs {
		for i := range pkg.Clusterctl {
			if &pkg.Clusterctl[i] == ov {
				return fmt.Sprintf("%s (%s:%d)", ov.From, rel(pkg, ov.File), ov.Line)
			}
		}
	}
	return ov.From
}

func vendoredSource(ix *Index, pkg *model.Package, p *model.Provider) report.Source {
	s := report.Source{Kind: report.SourceVendored}
	m, ok := ix.Select(pkg, p).Picked(p.Version)
	if !ok {
		s.Status = "spec.fetchConfig.selector picks no ConfigMap of the tree for spec.version"
		return s
	}
	where := fmt.Sprintf("ConfigMap %q (%s)", m.ConfigMap.Name, rel(m.Package, m.ConfigMap.File))
	if pinsProvider(m.Package, p) {
		s.Pinned = true
		s.Status = fmt.Sprintf("%s, whose files %s pins by SHA-256", where, pinFile(m.Package))
		return s
	}
	s.Status = where + "; no SHA-256 pin holds its files"
	return s
}

// storeConfigMaps are the ConfigMaps of the tree in p's namespace that
// carry the labels of the operator's own store of p's release, for any
// type name p's kind has had (manifests_downloader.go, ProviderLabels:
// version, type, name, managed-by "true", and source "oci" for an OCI
// provider). For a provider with no spec.fetchConfig.selector the
// operator looks for such a ConfigMap before it downloads anything and
// installs the one it finds (DownloadManifests, checkConfigMapExists);
// with several it fails.
func storeConfigMaps(ix *Index, pkg *model.Package, p *model.Provider) []Match {
	var out []Match
	seen := map[*model.ConfigMap]bool{}
	for _, tn := range operator.Types(p.Kind) {
		labels := operator.StoreLabels(tn.Type, p.Name, p.Version)
		if p.FetchOCI == "" {
			delete(labels, operator.LabelSource)
		}
		store := &model.Provider{Namespace: p.Namespace, Selector: &model.Selector{MatchLabels: labels}}
		for _, m := range ix.Select(pkg, store).Matches {
			if !seen[m.ConfigMap] {
				seen[m.ConfigMap] = true
				out = append(out, m)
			}
		}
	}
	return out
}

// storedSource is the source of a provider the operator installs from a
// ConfigMap of the tree labelled as its own store of the release.
func storedSource(m Match, p *model.Provider) report.Source {
	s := report.Source{Kind: report.SourceVendored, Pinned: pinsProvider(m.Package, p)}
	s.Status = fmt.Sprintf("ConfigMap %q (%s) carries the labels of the operator's own store of release %s: the operator installs it and fetches nothing", m.ConfigMap.Name, rel(m.Package, m.ConfigMap.File), p.Version)
	if !s.Pinned {
		s.Status += "; no SHA-256 pin holds its files"
	}
	return s
}

// metadataInTree is the ConfigMap of the tree whose metadata the operator
// installs for p: the one its selector picks, or, with no selector, the
// one store ConfigMap of its release (storeConfigMaps).
func metadataInTree(ix *Index, pkg *model.Package, p *model.Provider) (Match, bool) {
	if p.Selector != nil {
		return ix.Select(pkg, p).Picked(p.Version)
	}
	if ms := storeConfigMaps(ix, pkg, p); len(ms) == 1 {
		return ms[0], true
	}
	return Match{}, false
}

// pinsProvider reports whether pkg pins p's upstream files by SHA-256 and
// downloads nothing unpinned: a pin.yaml entry for p, or pins assembled
// from Makefile variables (which name no provider).
func pinsProvider(pkg *model.Package, p *model.Provider) bool {
	ps := pkg.Pins
	if ps == nil || ps.File == nil || len(ps.Unpinned) > 0 {
		return false
	}
	for _, pp := range ps.File.Providers {
		if (pp.Kind != p.Kind || pp.Name != p.Name) && (pp.Kind != "" || pp.Name != "") {
			continue
		}
		for _, src := range pp.Sources {
			if src.SHA256 != "" {
				return true
			}
		}
	}
	return false
}

func ociSourceOf(p *model.Provider) report.Source {
	s := report.Source{Kind: report.SourceOCI}
	src, err := operator.ParseSource(p.FetchOCI, p.Version)
	switch a := p.Artifact; {
	case err == nil:
		s.Registry, s.Ref = src.Host, src.Ref()
	case a != nil && a.Repository != "":
		// The artifact was looked up by a reference the caller gave
		// (verifier verify REF), not read from the value.
		s.Registry, _, _ = strings.Cut(a.Repository, "/")
		s.Ref = a.Ref
		if a.Found {
			s.Ref = a.Pinned() // the same whether it was looked up by tag or digest
		}
	default:
		s.Status = "the operator cannot read spec.fetchConfig.oci (oci-source says why)"
		return s
	}
	switch a := p.Artifact; {
	case a == nil:
		s.Status = "not verified: this run contacted no registry"
	case a.Refused != "":
		s.Status = "not verified: " + a.Refused
	case a.Err != "":
		s.Status = "not verified: " + a.Err
	case !a.Found:
		s.Status = "not verified: the registry has no " + a.Ref
	default:
		s.Pinned = true
		s.Status = "read from the registry as " + a.Pinned() + "; the registry checks judge it"
	}
	return s
}

func downloadSource(kind string, d operator.Download) report.Source {
	s := report.Source{Kind: kind, Ref: d.Repository, Release: d.Release, URLs: d.URLs}
	switch {
	case d.Problem != "":
		s.Status = "not installable: " + d.Problem
	case len(d.URLs) > 0:
		s.Status = "downloaded at install time; nothing pins the bytes"
	case d.Release == "":
		s.Status = "the latest release at install time; nothing pins the bytes"
	default:
		s.Status = fmt.Sprintf("release %s downloaded at install time; nothing pins the bytes", d.Release)
	}
	return s
}

// unheldSources: pin-missing for providers whose bytes nothing in the run
// holds. A release downloaded at install time (spec.fetchConfig.url, or
// no fetchConfig) is named with its URLs. An OCI artifact that no
// registry was asked about in this run (offline) is named with its
// registry: pin-missing carries it because, offline, nothing ties the
// bytes the operator installs to a digest (it fetches a mutable tag), the
// same gap as an unpinned download; once a registry run reads the
// artifact, the registry checks judge it instead (registry-digest reports
// one whose registry is not allowed), so it is not reported here twice.
func unheldSources(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	providers(t, func(pkg *model.Package, p *model.Provider) {
		if p.Selector != nil || (p.FetchOCI != "" && p.Artifact != nil) {
			return
		}
		s := Source(in.Index, pkg, p)
		loc := p.Location
		switch s.Kind {
		case report.SourceOCI:
			if s.Registry == "" {
				return // oci-source: the operator cannot read the value
			}
			if p.FetchOCILine > 0 {
				loc.Line = p.FetchOCILine
			}
			f := newFinding(PinMissing, pkg, p.ID(), loc,
				fmt.Sprintf("%s installs from %s (spec.fetchConfig.oci) on registry %s, which this run did not contact: nothing verified the artifact the operator fetches by its mutable tag", p.ID(), s.Ref, s.Registry),
				fmt.Sprintf("check it against the tree: run with the registry (`verifier check --registry PREFIX`) and, if %s is not that registry, allow it (and plain HTTP, if it serves plain HTTP)", s.Registry))
			f.Settings = []report.Setting{report.SettingAllowRegistry, report.SettingPlainHTTP}
			out = append(out, f)
		case report.SourceURL, report.SourceDefault:
			out = append(out, newFinding(PinMissing, pkg, p.ID(), loc, downloadMessage(t.Packages, p, s), downloadHint(p, s)))
		}
	})
	return out
}

// downloadMessage says what the operator downloads for p and that
// nothing pins it.
func downloadMessage(pkgs []*model.Package, p *model.Provider, s report.Source) string {
	if strings.HasPrefix(s.Status, "not installable: ") {
		return fmt.Sprintf("%s: %s", p.ID(), strings.TrimPrefix(s.Status, "not installable: "))
	}
	how := "has no spec.fetchConfig: the cluster-api-operator resolves it through clusterctl's built-in provider list (" + operator.ClusterctlRelease + ") to " + s.Ref + " and"
	if s.Kind == report.SourceURL {
		how = "installs from spec.fetchConfig.url " + s.Ref + ": the cluster-api-operator"
	}
	if p.Turtles() && s.Kind == report.SourceDefault {
		// Turtles hands the embedded operator its own clusterctl config
		// (rancher/turtles internal/controllers/clusterctl/config.go and
		// config-community.yaml at b2e1223), which the clusterctl-config
		// ConfigMap overrides, and fills an empty spec.version from it
		// (internal/provider/defaults.go setLatestVersion).
		how = "has no spec.fetchConfig: Turtles resolves it through its clusterctl config (built into the Turtles release, overridden by the clusterctl-config ConfigMap; clusterctl's own list names " + s.Ref + ") and"
		if p.Clusterctl != nil {
			how = "has no spec.fetchConfig: Turtles resolves it through its clusterctl config, whose entry in " + clusterctlWhere(pkgs, p) + " names " + s.Ref + ", and"
		}
		if s.Release == "" && len(s.URLs) == 0 {
			return fmt.Sprintf("%s %s, with no spec.version, installs the release that config names when Turtles reconciles it; nothing in the tree pins those bytes", p.ID(), how)
		}
	}
	switch {
	case len(s.URLs) > 0:
		return fmt.Sprintf("%s %s downloads release %s at install time: %s; nothing pins those bytes (a release tag is mutable)", p.ID(), how, s.Release, strings.Join(s.URLs, " and "))
	case s.Release == "":
		return fmt.Sprintf("%s %s, with no spec.version, installs whatever release is the latest at install time; nothing pins those bytes", p.ID(), how)
	}
	return fmt.Sprintf("%s %s downloads release %s at install time; nothing pins those bytes (a release tag is mutable)", p.ID(), how, s.Release)
}

func downloadHint(p *model.Provider, s report.Source) string {
	if strings.HasPrefix(s.Status, "not installable: ") && s.Kind == report.SourceDefault {
		return "give the provider a source: vendor its release as a ConfigMap package with pins and spec.fetchConfig.selector, or point spec.fetchConfig.oci or spec.fetchConfig.url at it (docs/sources.md)"
	}
	return fmt.Sprintf("hold the bytes of %s: vendor its components and metadata into a ConfigMap package with SHA-256 pins in %s and point spec.fetchConfig.selector at it, or push it as a signed artifact (`builder push`) and point spec.fetchConfig.oci there (docs/sources.md)", releaseWords(p), "pin.yaml")
}

// releaseWords names the release a provider installs: "release v1.2.3",
// or, with no spec.version, the one the installer picks.
func releaseWords(p *model.Provider) string {
	switch {
	case p.Version != "":
		return "release " + p.Version
	case p.Turtles():
		return "the release Turtles sets spec.version to (its clusterctl config's version; pin it in spec.version)"
	}
	return "the release you install (pin it in spec.version)"
}
