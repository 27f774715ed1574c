package bump

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/patch"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Target is what a bump of one provider of a package starts from: where
// its pins are read, what they pin, and the vendored files of its release
// (components YAML, metadata, blob) as the package layout gives them.
type Target struct {
	Provider *model.Provider
	// PinSource is where the provider's pins are read: pin.yaml,
	// Makefile (URL and SHA-256 variables or digests in a recipe), or ""
	// when the package downloads its files without a digest.
	PinSource string
	// PinIndex is the provider's entry in pin.yaml (-1 otherwise).
	PinIndex int
	// Version is the pinned upstream version, Release the ConfigMap name
	// and spec.version.
	Version string
	Release string
	// Sources are the upstream files (SHA256 is "" for an unpinned
	// download the Makefile makes).
	Sources []pin.Source
	// Patches apply in order to Components.
	Patches []string
	// ReleaseFiles are the release's vendored components YAML, metadata
	// and blob: the pin entry's (layout.PinFiles) when pin.yaml has one,
	// else the package layout's (model.Package.Layout).
	model.ReleaseFiles
	// Checksums is the URL of the release's checksums file the pin names.
	Checksums string
}

// TargetOf finds what a bump of provider p of pkg in tree t starts from:
// its pin.yaml entry when it has one, else what the chart does with its
// files (the package layout of the ConfigMap the provider's selector
// picks) and the Makefile's pins.
func TargetOf(t *model.Tree, pkg *model.Package, p *model.Provider) (*Target, error) {
	l := &Target{Provider: p, Release: p.Version, PinIndex: -1}
	if l.Release == "" {
		if rel := check.Release(check.NewIndex(t), pkg, p); rel != "" {
			// Turtles fills spec.version in when it reconciles: the
			// template has none to edit.
			return nil, fmt.Errorf("%s (%s) has no spec.version: Turtles sets it from its clusterctl config, and its selector picks the package's ConfigMap of release %s; write spec.version: %s into the template (or the values it reads) first", p.ID(), p.Object, rel, rel)
		}
		return nil, fmt.Errorf("%s has no spec.version; set it to the release name (e.g. v1.2.3-core) first", p.ID())
	}
	set := pkg.Pins
	if set != nil && set.Source == pin.SourcePinFile {
		return l.fromPinFile(set, pkg, p)
	}
	if err := l.fromLayout(t, pkg, p); err != nil {
		return nil, err
	}
	if err := l.upstreamVersion(set, p); err != nil {
		return nil, err
	}
	if l.fromMakefilePins(set) {
		return l, nil
	}
	if err := l.unpinnedSources(set, p); err != nil {
		return nil, err
	}
	if len(l.Sources) == 0 {
		return nil, fmt.Errorf("%s: found no upstream download of %s in the package (pin.yaml, Makefile URL variables or recipes); add %s listing its sources (api/pin.md)", p.ID(), l.Version, pin.FileName)
	}
	return l, nil
}

// fromPinFile fills l from p's entry in the package's pin.yaml.
func (l *Target) fromPinFile(set *pin.Set, pkg *model.Package, p *model.Provider) (*Target, error) {
	if set.File == nil {
		return nil, fmt.Errorf("%s does not parse; run `verifier check %s` and fix it first", pin.FileName, pkg.Dir)
	}
	for i, pp := range set.File.Providers {
		if pp.Kind == p.Kind && pp.Name == p.Name {
			l.PinSource, l.PinIndex = pin.SourcePinFile, i
			l.Version, l.Sources, l.Patches, l.Checksums = pp.Version, slices.Clone(pp.Sources), slices.Clone(pp.Patches), pp.Checksums
			if pp.Release != "" && pp.Release != p.Version {
				return nil, fmt.Errorf("%s pins release %s but spec.version of %s is %s; bring them in step first (`verifier check`)", pin.FileName, pp.Release, p.ID(), p.Version)
			}
			l.ReleaseFiles = layout.PinFiles(&pp)
			return l, nil
		}
	}
	return nil, fmt.Errorf("%s pins no entry for %s; add one (kind %s, name %s) or bump a provider it pins", pin.FileName, p.ID(), p.Kind, p.Name)
}

// fromLayout fills l's files and patches from what the chart does with
// its files, without pin.yaml (the package layout: the vendored file with
// the ConfigMap's blob bytes, the YAML it inflates to, the file with its
// metadata bytes).
func (l *Target) fromLayout(t *model.Tree, pkg *model.Package, p *model.Provider) error {
	m, ok := check.NewIndex(t).Select(pkg, p).Picked(p.Version)
	rel := pkg.Layout.Provider(p)
	if !ok || m.Package != pkg || m.ConfigMap.Components == nil || rel == nil || rel.ConfigMap == nil {
		return fmt.Errorf("%s: no ConfigMap of this package named %s holds its components; fix the package first (`verifier check`)", p.ID(), p.Version)
	}
	cm := m.ConfigMap
	l.ReleaseFiles = rel.ReleaseFiles
	if l.Components == "" || (cm.Components.Gzip && l.Blob == "") {
		return fmt.Errorf("%s: cannot tell which vendored files the ConfigMap %s is built from; add %s naming sources, patches and blob (api/pin.md)", p.ID(), cm.Name, pin.FileName)
	}
	l.Patches = patchesFor(pkg.Dir, l.Components)
	return nil
}

// upstreamVersion sets l.Version: a Makefile/Dockerfile version variable
// that the release is a release of, else the version part of the release.
func (l *Target) upstreamVersion(set *pin.Set, p *model.Provider) error {
	if set != nil {
		for _, v := range set.Versions {
			if v.Known && pin.MatchesRelease(v.Value, l.Release) {
				l.Version = v.Value
				break
			}
		}
	}
	if l.Version == "" {
		l.Version = pin.ReleaseVersion(l.Release)
	}
	if l.Version == "" {
		return fmt.Errorf("%s: release %s is not of the form vX.Y.Z[-suffix]; cannot tell its upstream version", p.ID(), l.Release)
	}
	return nil
}

// fromMakefilePins takes the sources of the Makefile pin of l.Version,
// reporting whether there is one.
func (l *Target) fromMakefilePins(set *pin.Set) bool {
	if set == nil || set.File == nil {
		return false
	}
	for _, pp := range set.File.Providers {
		if pp.Version == l.Version {
			l.PinSource = set.Source
			l.Sources = slices.Clone(pp.Sources)
			return true
		}
	}
	return false
}

// unpinnedSources adds the unpinned downloads of l.Version: each goes
// where its name says.
func (l *Target) unpinnedSources(set *pin.Set, p *model.Provider) error {
	if set == nil {
		return nil
	}
	for _, u := range set.Unpinned {
		if !u.Known || !containsToken(u.Value, l.Version) {
			continue
		}
		to := ""
		switch b := path.Base(u.Value); {
		case strings.HasSuffix(b, "components.yaml"):
			to = l.Components
		case strings.Contains(b, "metadata") && l.Metadata != "":
			to = l.Metadata
		default:
			return fmt.Errorf("%s: %s:%d downloads %s, and which vendored file it becomes is not clear; write %s with `to` for each source", p.ID(), u.File, u.Line, u.Value, pin.FileName)
		}
		if !slices.ContainsFunc(l.Sources, func(s pin.Source) bool { return s.To == to }) {
			l.Sources = append(l.Sources, pin.Source{URL: u.Value, To: to})
		}
	}
	return nil
}

// patchesFor lists the unified diffs under patches/ that change the
// components file, in name order (the order `for p in patches/*` applies).
func patchesFor(dir, components string) []string {
	entries, err := os.ReadDir(filepath.Join(dir, "patches"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !(strings.HasSuffix(e.Name(), ".diff") || strings.HasSuffix(e.Name(), ".patch")) {
			continue
		}
		rel := "patches/" + e.Name()
		data, err := os.ReadFile(filepath.Join(dir, "patches", e.Name()))
		if err != nil {
			continue
		}
		p, err := patch.Parse(rel, data)
		if err != nil {
			continue
		}
		for _, fd := range p.Files {
			if fd.NewName == components || fd.OldName == components {
				out = append(out, rel)
				break
			}
		}
	}
	return out
}
