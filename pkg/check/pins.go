package check

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// pinFile is where a package's pins were read, relative to the package.
func pinFile(pkg *model.Package) string {
	if pkg.Pins == nil {
		return ""
	}
	switch pkg.Pins.Source {
	case "pin.yaml", "":
		return pin.FileName
	default:
		return pkg.Pins.Source
	}
}

func findProvider(pkg *model.Package, kind, name string) *model.Provider {
	for _, p := range pkg.Providers {
		if p.Kind == kind && p.Name == name {
			return p
		}
	}
	return nil
}

// target is one release name a pinned version is compared with.
type target struct {
	what, value string // e.g. "spec.version", "v1.10.1-core"
	loc         model.Location
}

// releaseTargets are the release names a provider's pinned version must be
// the version part of: spec.version and the names of the ConfigMaps of its
// own package that its selector matches.
func releaseTargets(ix *Index, pkg *model.Package, p *model.Provider) []target {
	var ts []target
	if p.Version != "" {
		ts = append(ts, target{"spec.version", p.Version, p.Location})
	}
	for _, m := range ix.Select(pkg, p).Matches {
		if m.Package == pkg {
			ts = append(ts, target{"ConfigMap name", m.ConfigMap.Name, m.ConfigMap.Location})
		}
	}
	return ts
}

// mismatches lists the targets whose version part is not version.
func mismatches(version string, ts []target) []target {
	var bad []target
	for _, t := range ts {
		if !pin.MatchesRelease(version, t.value) {
			bad = append(bad, t)
		}
	}
	return bad
}

// describeReleases lists a package's providers with their spec.version.
func describeReleases(pkg *model.Package) string {
	parts := make([]string, 0, len(pkg.Providers))
	for _, p := range pkg.Providers {
		parts = append(parts, fmt.Sprintf("%s %q", p.ID(), p.Version))
	}
	return strings.Join(parts, ", ")
}

func describeTargets(ts []target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %q", t.what, t.value)
	}
	return strings.Join(parts, ", ")
}

// pinVersion: the pinned upstream version is the version part of the
// ConfigMap name and spec.version.
func pinVersion(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	for _, pkg := range t.Packages {
		ps := pkg.Pins
		if ps == nil {
			continue
		}
		pf := model.Location{File: pinFile(pkg)}
		if ps.File != nil {
			for _, pp := range ps.File.Providers {
				if pp.Kind == "" && pp.Name == "" {
					out = append(out, assembledPin(ix, pkg, pp)...)
					continue
				}
				out = append(out, pinnedProvider(ix, pkg, pf, pp)...)
			}
		}
		for _, v := range ps.Versions {
			loc := model.Location{File: v.File, Line: v.Line}
			if loc.File == "" {
				loc.File = pinFile(pkg)
			}
			if !v.Known {
				if literal := literalPin(ps.Versions); literal != nil {
					continue // the literal pin (a Dockerfile ARG) is compared instead
				}
				f := newFinding(PinVersion, pkg, "", loc,
					fmt.Sprintf("version variable %s = %s is computed and nothing in the package pins the version literally: the version is unknown and cannot be checked against the releases", v.Name, v.Value),
					fmt.Sprintf("set %s to a literal version (e.g. %s = v1.2.3), pin it in a Dockerfile (ARG VERSION=v1.2.3), or pin the package in %s", v.Name, v.Name, pin.FileName))
				f.Severity = report.Warning // unknown is not wrong: at most a warning
				out = append(out, f)
				continue
			}
			if pin.ReleaseVersion(v.Value) == "" {
				continue // not an upstream version (e.g. GO_VERSION = 1.22)
			}
			var owners []*model.Provider
			var all []target
			for _, p := range pkg.Providers {
				if p.Version != "" && pin.MatchesRelease(v.Value, p.Version) {
					owners = append(owners, p)
				}
				all = append(all, releaseTargets(ix, pkg, p)...)
			}
			if len(owners) == 0 {
				if len(all) == 0 {
					continue // nothing to compare with; other checks report the missing providers
				}
				prov := ""
				if len(pkg.Providers) == 1 {
					prov = pkg.Providers[0].ID()
				}
				out = append(out, newFinding(PinVersion, pkg, prov, loc,
					fmt.Sprintf("%s pins %s = %s, but no release of this package is of that version: %s", loc.File, v.Name, v.Value, describeReleases(pkg)),
					fmt.Sprintf("bump spec.version and the ConfigMap name to %s-<suffix> together with the vendored files, or fix %s", v.Value, v.Name)))
				continue
			}
			for _, p := range owners {
				if bad := mismatches(v.Value, releaseTargets(ix, pkg, p)); len(bad) > 0 {
					out = append(out, newFinding(PinVersion, pkg, p.ID(), bad[0].loc,
						fmt.Sprintf("%s pins version %s = %s but %s is not a release of it", loc.File, v.Name, v.Value, describeTargets(bad)),
						fmt.Sprintf("rename it to %s-<suffix> like spec.version %q", v.Value, p.Version)))
				}
			}
		}
	}
	return out
}

// literalPin is a known version the package pins in a Dockerfile (ARG
// VERSION=…), which a computed Makefile version usually reads; nil if none.
func literalPin(vs []pin.Var) *pin.Var {
	for i := range vs {
		if vs[i].Known && path.Base(vs[i].File) == "Dockerfile" && pin.ReleaseVersion(vs[i].Value) != "" {
			return &vs[i]
		}
	}
	return nil
}

// loadFailed reports whether the loader could not make sense of part of
// pkg (a chart that did not render, a manifest that did not parse).
func loadFailed(pkg *model.Package) bool {
	for _, pr := range pkg.Problems {
		if pr.Check == model.CheckPackageLoad {
			return true
		}
	}
	return false
}

// pinnedProvider checks one pin.yaml entry against its provider.
func pinnedProvider(ix *Index, pkg *model.Package, pf model.Location, pp pin.Provider) []report.Finding {
	var out []report.Finding
	id := pp.Kind + "/" + pp.Name
	p := findProvider(pkg, pp.Kind, pp.Name)
	if p == nil && len(pkg.Providers) == 0 && loadFailed(pkg) {
		return nil // the package did not render: its package-load finding says why
	}
	if p == nil {
		return []report.Finding{newFinding(PinVersion, pkg, id, pf,
			fmt.Sprintf("%s pins %s, which this package does not define", pf.File, id),
			"fix the pin's kind and name, or remove the entry")}
	}
	if pp.Version == "" {
		return nil
	}
	if pp.Release != "" && !pin.MatchesRelease(pp.Version, pp.Release) {
		out = append(out, newFinding(PinVersion, pkg, id, pf,
			fmt.Sprintf("%s: release %q is not a release of the pinned version %q", pf.File, pp.Release, pp.Version),
			fmt.Sprintf("name the release after the version, e.g. %s-<suffix>", pp.Version)))
	}
	if pp.Release != "" && p.Version != "" && p.Version != pp.Release {
		out = append(out, newFinding(PinVersion, pkg, id, p.Location,
			fmt.Sprintf("spec.version is %q but %s pins release %q", p.Version, pf.File, pp.Release),
			fmt.Sprintf("set spec.version and the ConfigMap name to %q, or re-pin: `builder build %s`", pp.Release, pkg.CommandPath())))
	}
	if bad := mismatches(pp.Version, releaseTargets(ix, pkg, p)); len(bad) > 0 {
		out = append(out, newFinding(PinVersion, pkg, id, bad[0].loc,
			fmt.Sprintf("%s pins upstream version %q but %s is not a release of it", pf.File, pp.Version, describeTargets(bad)),
			fmt.Sprintf("bump spec.version and the ConfigMap name to %s-<suffix> together with the vendored files (`builder build %s`), or fix the pin", pp.Version, pkg.CommandPath())))
	}
	return out
}

// assembledPin checks a pin assembled from Makefile URL and SHA-256
// variables: it names no provider, only the release its URLs download.
// Versions the Makefile also states in a version variable are checked
// there, once.
func assembledPin(ix *Index, pkg *model.Package, pp pin.Provider) []report.Finding {
	if pp.Version == "" || len(pp.Sources) == 0 {
		return nil
	}
	for _, v := range pkg.Pins.Versions {
		if v.Known && v.Value == pp.Version {
			return nil
		}
	}
	var all []target
	for _, p := range pkg.Providers {
		if p.Version != "" && pin.MatchesRelease(pp.Version, p.Version) {
			return nil
		}
		all = append(all, releaseTargets(ix, pkg, p)...)
	}
	if len(all) == 0 {
		return nil
	}
	prov := ""
	if len(pkg.Providers) == 1 {
		prov = pkg.Providers[0].ID()
	}
	return []report.Finding{newFinding(PinVersion, pkg, prov, model.Location{File: pinFile(pkg)},
		fmt.Sprintf("%s downloads %s (release %s), but no release of this package is of that version: %s", pinFile(pkg), pp.Sources[0].URL, pp.Version, describeReleases(pkg)),
		fmt.Sprintf("bump spec.version and the ConfigMap name to %s-<suffix> together with the vendored files, or pin the URL of the release in use", pp.Version))}
}

// patchesUnresolved reports whether the loader could not use the patches
// of the pinned provider id (a patch missing, not parsing, or changing no
// pinned source): it reported that as a pin-digest problem, and the files
// the patches change carry no upstream digest (model.File.Upstream).
func patchesUnresolved(pkg *model.Package, id string) bool {
	for _, p := range pkg.Problems {
		if p.Check == model.CheckPinDigest && p.Provider == id {
			return true
		}
	}
	return false
}

// patchedComponents reports whether the source's file is the components
// file that the pin's patches change (DESIGN: patches apply to the
// components file): its bytes then differ from the upstream pin by design.
// Used only when the patches could not be resolved (patchesUnresolved), so
// the problem is reported once, by the loader.
func patchedComponents(pkg *model.Package, pp pin.Provider, s pin.Source) bool {
	if len(pp.Patches) == 0 {
		return false
	}
	for _, cm := range pkg.ConfigMaps {
		if yaml, _ := pkg.Layout.ComponentsYAML(cm); cm.Components != nil && yaml == s.To {
			return true
		}
	}
	c, _ := layout.PinComponents(pp)
	return c == s.To
}

// reversed names what the loader undid to recover a file's upstream
// bytes: its relocation, its patches, or both.
func reversed(pp pin.Provider) string {
	var parts []string
	if len(pp.Relocate) > 0 {
		parts = append(parts, "its relocation ("+pp.Relocate.String()+")")
	}
	if len(pp.Patches) > 0 {
		parts = append(parts, "its patches ("+strings.Join(pp.Patches, ", ")+")")
	}
	return strings.Join(parts, " and ")
}

// applied names what the builder applies to a provider's upstream bytes,
// as the pin file pf lists it.
func applied(pp pin.Provider, pf string) string {
	var parts []string
	if len(pp.Patches) > 0 {
		parts = append(parts, fmt.Sprintf("the patches %s lists (%s)", pf, strings.Join(pp.Patches, ", ")))
	}
	if len(pp.Relocate) > 0 {
		parts = append(parts, fmt.Sprintf("the relocation %s records (%s)", pf, pp.Relocate))
	}
	return strings.Join(parts, " and ")
}

// pinDigest: every pinned vendored file exists and matches its SHA-256; a
// file the pin's patches change matches it once they are reversed
// (model.File.Upstream, filled by the loader).
func pinDigest(in *Input) []report.Finding {
	var out []report.Finding
	for p := range pinFileProviders(in.Tree) {
		pkg, pf, pp, id := p.pkg, p.pf, p.pp, p.id
		for _, s := range pp.Sources {
			if s.To == "" || s.SHA256 == "" {
				continue
			}
			f := pkg.Files[s.To]
			if f == nil {
				out = append(out, newFinding(model.CheckPinDigest, pkg, id, model.Location{File: pf},
					fmt.Sprintf("%s pins %s (from %s) but the file is not vendored", pf, s.To, s.URL),
					fmt.Sprintf("vendor it: `builder build %s`", pkg.CommandPath())))
				continue
			}
			switch {
			case f.UpstreamErr != "":
				out = append(out, newFinding(model.CheckPinDigest, pkg, id, model.Location{File: s.To},
					fmt.Sprintf("%s is not the pinned upstream (%s) plus %s: %s", s.To, s.URL, applied(pp, pf), f.UpstreamErr),
					fmt.Sprintf("re-vendor it: `builder build %s` fetches %s, checks its digest and applies the patches; or, if the edit is wanted, update the patch so it produces the vendored file", pkg.CommandPath(), s.URL)))
				continue
			case f.Upstream != nil:
				if strings.EqualFold(f.Upstream.Hex(), s.SHA256) {
					continue
				}
				out = append(out, newFinding(model.CheckPinDigest, pkg, id, model.Location{File: s.To},
					fmt.Sprintf("%s does not match its pin in %s: sha256 %s with %s reversed, pinned %s (%s)", s.To, pf, f.Upstream.Hex(), reversed(pp), strings.ToLower(s.SHA256), s.URL),
					fmt.Sprintf("the vendored file must be the pinned upstream plus the listed patches, and it was edited outside them: `builder build %s` re-vendors it; to keep the edit, put it in a patch listed in %s", pkg.CommandPath(), pf)))
				continue
			}
			if strings.EqualFold(f.SHA256.Hex(), s.SHA256) || (patchesUnresolved(pkg, id) && patchedComponents(pkg, pp, s)) {
				continue
			}
			out = append(out, newFinding(model.CheckPinDigest, pkg, id, model.Location{File: s.To},
				fmt.Sprintf("%s does not match its pin in %s: sha256 %s, pinned %s (%s)", s.To, pf, f.SHA256.Hex(), strings.ToLower(s.SHA256), s.URL),
				fmt.Sprintf("restore the upstream bytes: `builder build %s` fetches %s and checks its digest; if upstream really changed, review it and update the pin", pkg.CommandPath(), s.URL)))
		}
	}
	return out
}

// vendoredYAML lists a package's vendored files that are not gzip blobs
// (blobs are built, not downloaded), sorted.
func vendoredYAML(pkg *model.Package) []string {
	// A file a pin names as its blob, or whose bytes a ConfigMap carries as
	// components, is a blob even when it is not gzip (blob-corrupt and
	// compressed-annotation report that); it has no upstream to pin.
	blobs := map[string]bool{}
	if pkg.Pins != nil && pkg.Pins.File != nil {
		for _, pp := range pkg.Pins.File.Providers {
			blobs[pp.Blob] = true
		}
	}
	for _, cm := range pkg.ConfigMaps {
		blobs[pkg.Layout.BlobFile(cm)] = true
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(pkg.Files)) {
		if pkg.Files[name].Blob == nil && !blobs[name] {
			out = append(out, name)
		}
	}
	return out
}

// pinMissing: every upstream download and vendored file is pinned by
// SHA-256, and every provider installs bytes something holds
// (unheldSources).
func pinMissing(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	for _, pkg := range t.Packages {
		prov := ""
		if len(pkg.Providers) == 1 {
			prov = pkg.Providers[0].ID()
		}
		var unpinned []pin.Var
		var file *pin.File
		if pkg.Pins != nil {
			unpinned, file = pkg.Pins.Unpinned, pkg.Pins.File
		}
		for _, u := range unpinned {
			where := u.File
			if u.Line > 0 {
				where = fmt.Sprintf("%s:%d", u.File, u.Line)
			}
			what := "a recipe downloads " + u.Value
			fix := fmt.Sprintf("pin the bytes: put the digest beside the download at %s (e.g. a SHA-256 variable checked with sha256sum -c), or list the source with its url, sha256 and to in %s", where, pin.FileName)
			if u.Name != "" {
				what = fmt.Sprintf("%s = %s", u.Name, u.Value)
				fix = fmt.Sprintf("pin the bytes: add a SHA-256 variable beside %s (e.g. %s_SHA256), or list the source with its url, sha256 and to in %s", u.Name, strings.TrimSuffix(u.Name, "_URL"), pin.FileName)
			}
			out = append(out, newFinding(PinMissing, pkg, prov, model.Location{File: u.File, Line: u.Line},
				fmt.Sprintf("%s: %s with no SHA-256 pin: a release tag is mutable", where, what),
				fix))
		}
		vendored := vendoredYAML(pkg)
		if len(vendored) == 0 {
			continue
		}
		if file == nil {
			if len(unpinned) > 0 {
				continue // already said
			}
			out = append(out, newFinding(PinMissing, pkg, prov, model.Location{File: vendored[0]},
				fmt.Sprintf("package vendors %s with no SHA-256 pin", strings.Join(vendored, ", ")),
				fmt.Sprintf("add a %s listing each upstream URL with its sha256 and target file (api/pin.schema.json)", pin.FileName)))
			continue
		}
		covered := map[string]bool{}
		for _, pp := range file.Providers {
			for _, s := range pp.Sources {
				if s.SHA256 != "" {
					covered[s.To] = true
				}
			}
		}
		for _, name := range vendored {
			if covered[name] {
				continue
			}
			out = append(out, newFinding(PinMissing, pkg, prov, model.Location{File: name},
				fmt.Sprintf("%s is vendored but %s pins no source for it", name, pinFile(pkg)),
				fmt.Sprintf("add its upstream URL and sha256 to %s", pinFile(pkg))))
		}
	}
	out = append(out, treeFetches(t)...)
	return append(out, unheldSources(in)...)
}

// treeFetches: pin-missing for each download of a components release a
// script or a Makefile outside the packages runs with no SHA-256 beside
// it, named at the command's line, under the package it serves when the
// loader could tell which (whether or not that package vendors files).
func treeFetches(t *model.Tree) []report.Finding {
	var out []report.Finding
	for _, d := range t.Fetches {
		where := fmt.Sprintf("%s:%d", d.File, d.Line)
		cmd := d.Command
		if cmd == "" {
			cmd = "a recipe"
		}
		what := fmt.Sprintf("%s: %s downloads %s", where, cmd, d.URL)
		if d.Var != "" {
			what += fmt.Sprintf(" (%s, as the script's defaults set it)", d.Var)
		}
		if d.Writes != "" {
			what += " into " + d.Writes
		}
		fix := fmt.Sprintf("pin the bytes: download to a file, check it against its SHA-256 beside the command at %s (echo \"<sha256>  file\" | sha256sum -c), and build from that file; or vendor the release with a %s (url, sha256, to) and build it with `builder build`", where, pin.FileName)
		prov := ""
		if d.Package != nil && len(d.Package.Providers) == 1 {
			prov = d.Package.Providers[0].ID()
		}
		f := newFinding(PinMissing, d.Package, prov, model.Location{}, what+" with no SHA-256 beside it: a release tag is mutable, so the bytes are not the ones reviewed", fix)
		f.File, f.Line = d.File, d.Line
		out = append(out, f)
	}
	return out
}

// packageLoad passes the loader's problems through; each carries its own
// check ID (package-load when it belongs to no other check).
func packageLoad(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	for _, p := range t.Problems {
		id := p.Check
		if id == "" {
			id = model.CheckPackageLoad
		}
		f := newFinding(id, nil, p.Provider, p.Location, p.Message, p.Hint)
		f.Settings = p.Settings
		out = append(out, f)
	}
	for _, pkg := range t.Packages {
		for _, p := range pkg.Problems {
			id := p.Check
			if id == "" {
				id = model.CheckPackageLoad
			}
			f := newFinding(id, pkg, p.Provider, p.Location, p.Message, p.Hint)
			f.Settings = p.Settings
			out = append(out, f)
		}
	}
	return out
}
