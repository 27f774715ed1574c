package check

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// metadataLocation is the vendored file whose bytes are the ConfigMap's
// metadata, else the ConfigMap itself.
func metadataLocation(pkg *model.Package, cm *model.ConfigMap) model.Location {
	if len(cm.MetadataRaw) > 0 {
		d := sha256.Sum256(cm.MetadataRaw)
		for _, name := range slices.Sorted(maps.Keys(pkg.Files)) {
			if pkg.Files[name].SHA256 == d {
				return model.Location{File: name}
			}
		}
	}
	return cm.Location
}

// series finds the release series for major.minor.
func series(md *model.Metadata, major, minor uint) (model.ReleaseSeries, bool) {
	for _, s := range md.ReleaseSeries {
		if s.Major >= 0 && s.Minor >= 0 && uint(s.Major) == major && uint(s.Minor) == minor {
			return s, true
		}
	}
	return model.ReleaseSeries{}, false
}

func listSeries(md *model.Metadata) string {
	if len(md.ReleaseSeries) == 0 {
		return "none"
	}
	vs := make([]string, len(md.ReleaseSeries))
	for i, s := range md.ReleaseSeries {
		vs[i] = fmt.Sprintf("%d.%d", s.Major, s.Minor)
	}
	return strings.Join(vs, ", ")
}

// releaseContract is the contract a ConfigMap's release declares, if its
// version is semver and its metadata has the series.
func releaseContract(cm *model.ConfigMap) (contract string, v *version.Version, ok bool) {
	key, _ := VersionOf(cm)
	v, err := version.ParseSemantic(key)
	if err != nil || cm.Metadata == nil || cm.Metadata.Err != nil {
		return "", v, false
	}
	s, ok := series(cm.Metadata, v.Major(), v.Minor())
	if !ok || s.Contract == "" {
		return "", v, false
	}
	return s.Contract, v, true
}

// metadataSeries: the ConfigMap's metadata parses and has a releaseSeries
// for its release's major.minor.
func metadataSeries(in *Input) []report.Finding {
	var out []report.Finding
	eachConfigMap(in, func(pkg *model.Package, cm *model.ConfigMap, owner string) {
		key, _ := VersionOf(cm)
		v, err := version.ParseSemantic(key)
		if err != nil {
			return // selector-semver
		}
		loc := metadataLocation(pkg, cm)
		switch md := cm.Metadata; {
		case md == nil:
			out = append(out, newFinding(MetadataSeries, pkg, owner, cm.Location,
				fmt.Sprintf("ConfigMap %q has no data.metadata: the operator fails the whole version list", cm.Name),
				"add data.metadata from the vendored metadata.yaml of the same upstream release"))
		case md.Err != nil:
			out = append(out, newFinding(MetadataSeries, pkg, owner, loc,
				fmt.Sprintf("the metadata of ConfigMap %q does not parse: %v", cm.Name, md.Err),
				"vendor the metadata.yaml of the same upstream release"))
		default:
			if _, ok := series(md, v.Major(), v.Minor()); ok {
				return
			}
			out = append(out, newFinding(MetadataSeries, pkg, owner, loc,
				fmt.Sprintf("metadata of ConfigMap %q has no releaseSeries for %d.%d (release %s); it lists %s",
					cm.Name, v.Major(), v.Minor(), key, listSeries(md)),
				fmt.Sprintf("vendor the metadata.yaml of release %s (it must list major: %d, minor: %d with its contract)", key, v.Major(), v.Minor())))
		}
	})
	return out
}

// coreContract finds the contract served by the tree's core provider.
func coreContract(t *model.Tree, ix *Index) (contract string, core *model.Provider, ok bool) {
	if t.Core == nil {
		return "", nil, false
	}
	for _, p := range t.Core.Providers {
		if p.Kind != "CoreProvider" {
			continue
		}
		m, found := metadataInTree(ix, t.Core, p)
		if !found {
			if r := pinnedRelease(t.Core, p); r != nil {
				c, _, err := pinnedContract(r)
				return c, p, err == nil
			}
			return "", p, false
		}
		c, _, ok := releaseContract(m.ConfigMap)
		return c, p, ok
	}
	return "", nil, false
}

// contract: each provider release's contract is one the core serves. With
// no core provider (or no readable core contract) in the tree it is
// skipped; the other checks say what is wrong with the core.
func contract(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	if out := uncheckableContracts(t, ix); out != nil {
		return out
	}
	served, core, ok := coreContract(t, ix)
	if !ok {
		return nil
	}
	// Which contracts a core release serves is Cluster API's policy,
	// written down once in internal/operator (operator.Contracts).
	accepted := operator.Served(core.Version, served)
	// ConfigMaps no provider in the tree selects (air-gap charts) are
	// releases too, installed by providers created elsewhere.
	pick := pickers(t, ix)
	for _, pkg := range t.Packages {
		for _, cm := range pkg.ConfigMaps {
			if len(pick[cm]) > 0 || pkg == t.Core {
				continue
			}
			c, v, ok := releaseContract(cm)
			if !ok || slices.Contains(accepted, c) {
				continue
			}
			out = append(out, newFinding(Contract, pkg, "", metadataLocation(pkg, cm),
				fmt.Sprintf("ConfigMap %q in %s (release %d.%d.%d) declares contract %s, but the core provider %s %s (%s) serves %s",
					cm.Name, nsName(cm.Namespace), v.Major(), v.Minor(), v.Patch(), c, core.ID(), core.Version, pkgPath(t.Core), strings.Join(accepted, ", ")),
				fmt.Sprintf("ship a release whose series declares %s, or upgrade the core provider to a release serving %s", served, c)))
		}
	}
	providers(t, func(pkg *model.Package, p *model.Provider) {
		if p.Kind == "CoreProvider" {
			return
		}
		m, found := metadataInTree(ix, pkg, p)
		if !found {
			if r := pinnedRelease(pkg, p); r != nil {
				out = append(out, pinnedContractFindings(pkg, p, r, core, t.Core, accepted, served)...)
			} else if p.Selector == nil {
				out = append(out, notInTree(pkg, p, p))
			}
			return
		}
		c, v, ok := releaseContract(m.ConfigMap)
		if !ok || slices.Contains(accepted, c) {
			return
		}
		out = append(out, newFinding(Contract, m.Package, p.ID(), metadataLocation(m.Package, m.ConfigMap),
			fmt.Sprintf("release %s of %s declares contract %s (releaseSeries %d.%d), but the core provider %s %s (%s) serves %s",
				p.Version, p.ID(), c, v.Major(), v.Minor(), core.ID(), core.Version, pkgPath(t.Core), strings.Join(accepted, ", ")),
			fmt.Sprintf("use a release of %s whose series declares %s, or upgrade the core provider to a release serving %s", p.ID(), served, c)))
	})
	return out
}

// uncheckableContracts: when the tree's core provider installs from
// outside the tree (no spec.fetchConfig.selector), the contract it serves
// is not known offline, so no provider's contract can be checked: one
// warning for each provider, the core first. nil when the core's
// metadata is in the tree (or there is no core).
func uncheckableContracts(t *model.Tree, ix *Index) []report.Finding {
	if t.Core == nil {
		return nil
	}
	var core *model.Provider
	for _, p := range t.Core.Providers {
		if p.Kind == "CoreProvider" {
			core = p
			break
		}
	}
	if core == nil || core.Selector != nil {
		return nil
	}
	if _, ok := metadataInTree(ix, t.Core, core); ok {
		return nil
	}
	if r := pinnedRelease(t.Core, core); r != nil {
		if _, _, err := pinnedContract(r); err != nil {
			return []report.Finding{pinnedUncheckable(t.Core, core, r, err)}
		}
		return nil
	}
	out := []report.Finding{notInTree(t.Core, core, core)}
	providers(t, func(pkg *model.Package, p *model.Provider) {
		if p != core {
			from := core
			if _, ok := metadataInTree(ix, pkg, p); !ok && p.Selector == nil && pinnedRelease(pkg, p) == nil {
				from = p
			}
			out = append(out, notInTree(pkg, p, from))
		}
	})
	return out
}

// notInTree is the contract warning for p, whose contract cannot be
// checked because the metadata of from (p itself, or the core provider)
// is not in the tree: the operator fetches it at install time.
func notInTree(pkg *model.Package, p, from *model.Provider) report.Finding {
	whose := "its"
	if from != p {
		whose = "the core provider " + from.ID() + "'s"
	}
	f := newFinding(Contract, pkg, p.ID(), p.Location,
		fmt.Sprintf("the contract of %s %s could not be checked: %s metadata.yaml is not in the tree (%s)", p.ID(), p.Version, whose, fetchedHow(from)),
		fmt.Sprintf("vendor the metadata.yaml of %s's release with its components into a ConfigMap package selected by spec.fetchConfig.selector (docs/sources.md), so that the contract can be checked", from.ID()))
	f.Severity = report.Warning
	return f
}

// fetchedHow says, in words, where the operator fetches p's metadata from
// when p has no spec.fetchConfig.selector.
func fetchedHow(p *model.Provider) string {
	if p.FetchOCI != "" {
		return "the operator fetches it from spec.fetchConfig.oci " + p.FetchOCI
	}
	var d operator.Download
	if p.FetchURL != "" {
		d = operator.URLDownload(p.FetchURL, p.Version)
	} else {
		d = DefaultDownload(p)
	}
	if len(d.URLs) > 1 {
		return "the operator downloads it at install time from " + d.URLs[1]
	}
	if p.FetchURL != "" {
		return "the operator downloads it at install time from spec.fetchConfig.url " + p.FetchURL
	}
	return "with no spec.fetchConfig, the operator downloads it at install time from the repository clusterctl's built-in provider list names"
}
