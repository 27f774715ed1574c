// Package release derives the artifact releases `builder push` publishes
// from a provider package as it stands, exactly as the verifier sees it:
// the package is loaded and rendered by pkg/load, checked offline by
// pkg/verify under the policy, and each provider's release (kind, name,
// spec.version, and the components YAML, metadata and blob the package
// layout pairs with the ConfigMap its selector picks) becomes an
// artifact.Release. A provider whose offline checks have error findings
// that make its artifact wrong (Refuses: drift, a wrong release, bad
// pins) is refused, with the findings, and nothing is pushed for it; its
// other error findings (a blob header that is not reproducible) are
// warnings. The artifact's blob is the reproducible encoding of the YAML
// (blob.ForYAML), whatever header the tree's blob has. No pin file is
// needed: the provenance materials are whatever digest pins the package
// has (pin.yaml or Makefile URL and SHA-256 variables), and the version
// pins it has (Makefile or Dockerfile) are recorded beside them.
package release

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// Options tune Load.
type Options struct {
	// BuilderVersion is stamped on each release.
	BuilderVersion string
	// Policy decides which findings are errors (severity error, not
	// waived); of those, Refuses decides which refuse a provider. nil
	// means policy.Default().
	Policy *policy.Policy
	// Namespace of packages that name none (as verifier check --namespace).
	Namespace string
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
}

// Provider is what Load decided for one provider of the package.
type Provider struct {
	// Package is the package directory.
	Package string
	// ID is Kind/name.
	ID string
	// Release is what to push; nil when Refused or Skipped.
	Release *artifact.Release
	// Refused are the error findings of the offline checks about this
	// provider or its whole package that make its artifact wrong
	// (Refuses): nothing may be pushed for it.
	Refused []report.Finding
	// Warnings are the other error findings about this provider or its
	// whole package: they do not change what is pushed.
	Warnings []report.Finding
	// Reencoded is the tree's blob when it holds exactly the YAML under a
	// header that is not reproducible: the release carries the
	// reproducible encoding instead (the bytes `builder build` writes).
	Reencoded string
	// Skipped says why there is nothing to push (the provider installs
	// from spec.fetchConfig.oci or .url, not from the package).
	Skipped string
}

// ErrNoPackage is wrapped when a directory holds no provider package.
var ErrNoPackage = errors.New("no provider package")

// maxFileSize bounds each vendored file read into a release.
const maxFileSize = artifact.MaxLayerSize

// Load loads the provider package in dir (and any below it) as `verifier
// check` does, runs the offline checks, and returns one Provider per
// provider object, in package order. The error is about dir itself (it
// cannot be read, it holds no provider package); everything about a
// provider is in its Provider.
func Load(ctx context.Context, dir string, opts Options) ([]Provider, error) {
	tree, r, err := checkTree(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	return providers(dir, tree, r, opts.BuilderVersion)
}

// checkTree loads the tree at dir as `verifier check` does and runs the
// offline checks under opts.Policy rooted at dir.
func checkTree(ctx context.Context, dir string, opts Options) (*model.Tree, *report.Report, error) {
	pol := opts.Policy
	if pol == nil {
		pol = policy.Default()
	}
	pol = rootedAt(pol, dir)
	return verify.Run(ctx, dir, verify.Options{
		Options: load.Options{Namespace: opts.Namespace, Logger: opts.Logger, CommandDir: filepath.ToSlash(dir)},
		Policy:  pol,
	})
}

// providers decides every provider of the checked tree at dir, in package
// order; ErrNoPackage when the tree holds no package.
func providers(dir string, tree *model.Tree, r *report.Report, builderVersion string) ([]Provider, error) {
	if len(tree.Packages) == 0 {
		return nil, fmt.Errorf("%s: %w: no cluster-api-operator provider or components ConfigMap is in it (give the directory of a provider package, e.g. packages/system/capi-providers-core)", dir, ErrNoPackage)
	}
	var out []Provider
	for _, pkg := range tree.Packages {
		pkgDir := filepath.Join(dir, filepath.FromSlash(pkg.Path))
		for _, p := range pkg.Providers {
			out = append(out, provider(pkgDir, pkg, p, r.Findings, builderVersion))
		}
	}
	return out, nil
}

// provider decides one provider.
func provider(dir string, pkg *model.Package, p *model.Provider, findings []report.Finding, builderVersion string) Provider {
	out := Provider{Package: dir, ID: p.ID()}
	if p.Selector == nil {
		switch {
		case p.FetchOCI != "":
			out.Skipped = "it installs from spec.fetchConfig.oci " + p.FetchOCI + ", not from this package"
		case p.FetchURL != "":
			out.Skipped = "it installs from spec.fetchConfig.url " + p.FetchURL + ", not from this package"
		default:
			out.Skipped = "it has no spec.fetchConfig.selector, so no ConfigMap of this package is its release"
		}
		return out
	}
	// Findings about another provider of the package are its own; those
	// about the whole package (no provider) count for each.
	for _, f := range findings {
		if f.Severity != report.Error || f.Waiver != nil || f.Package != pkg.Path || (f.Provider != p.ID() && f.Provider != "") {
			continue
		}
		if Refuses(f.Check) {
			out.Refused = append(out.Refused, relocate(f, pkg.CommandDir))
		} else {
			out.Warnings = append(out.Warnings, relocate(f, pkg.CommandDir))
		}
	}
	if len(out.Refused) > 0 {
		return out
	}
	rel, reencoded, err := releaseOf(dir, pkg, p, builderVersion)
	if err != nil {
		// The checks passed but the release cannot be assembled: say so
		// as a finding of the check whose ground it is.
		out.Refused = append(out.Refused, report.Finding{
			Check: model.CheckPackageLoad, Severity: report.Error, Package: pkg.Path, Provider: p.ID(),
			Message: err.Error(),
			Hint:    "run `verifier check` on the package and fix what it reports, then push again",
		})
		return out
	}
	out.Release = rel
	if reencoded != "" {
		out.Reencoded = path.Join(filepath.ToSlash(dir), reencoded)
	}
	return out
}

// releaseOf assembles the release of p from the package layout. reencoded
// is the blob file whose bytes the release does not carry because their
// header is not reproducible (blob.ForYAML).
func releaseOf(dir string, pkg *model.Package, p *model.Provider, builderVersion string) (rel *artifact.Release, reencoded string, err error) {
	r := pkg.Layout.Provider(p)
	if err := complete(r, p); err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	read := func(rel string) ([]byte, error) { return layout.ReadFile(root, rel, maxFileSize) }
	var files [3][]byte
	for i, name := range []string{r.Blob, r.Components, r.Metadata} {
		if files[i], err = read(name); err != nil {
			return nil, "", fmt.Errorf("%s: %w", p.ID(), err)
		}
	}
	gz, yml, meta := files[0], files[1], files[2]
	// The blob a rebuild leaves: the tree's own unless its header alone
	// is not reproducible.
	gz, enc, err := blob.ForYAML(gz, yml)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %s: %w", p.ID(), r.Blob, err)
	}
	if enc == blob.DirtyHeader {
		reencoded = r.Blob
	}
	cfg, patches, err := configOf(pkg, r, p, builderVersion, read)
	if err != nil {
		return nil, "", err
	}
	built, err := artifact.NewRelease(cfg, artifact.ReleaseFiles{Blob: gz, YAML: yml, Metadata: meta, MetadataPath: r.Metadata, Patches: patches})
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", p.ID(), err)
	}
	return &built, reencoded, nil
}

// complete says what the package layout r of p lacks for a release: its
// ConfigMap, blob, components YAML or metadata.
func complete(r *model.LayoutRelease, p *model.Provider) error {
	if r == nil || r.ConfigMap == nil {
		return fmt.Errorf("%s: no ConfigMap of this package named %s is selected by it, so the package holds no release of it", p.ID(), p.Version)
	}
	var missing []string
	if r.Blob == "" {
		missing = append(missing, "blob (the ConfigMap's components are no vendored gzip file)")
	}
	if r.Components == "" {
		missing = append(missing, "components YAML")
	}
	if r.Metadata == "" {
		missing = append(missing, "metadata (data.metadata is no vendored file)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: the package layout of release %s has no %v", p.ID(), p.Version, missing)
	}
	return nil
}

// configOf is the artifact config of p's release: its pins and their
// patches (hashed from the files read reads), the version pins of the
// package, and the upstream version, from a pin else from the release name.
func configOf(pkg *model.Package, r *model.LayoutRelease, p *model.Provider, builderVersion string, read func(string) ([]byte, error)) (model.ArtifactConfig, []artifact.Patch, error) {
	cfg := model.ArtifactConfig{Kind: p.Kind, Name: p.Name, Release: p.Version, BuilderVersion: builderVersion}
	var patches []artifact.Patch
	if pp := pinOf(pkg, r, p); pp != nil {
		cfg.Version = pp.Version
		cfg.Pins = slices.Clone(pp.Sources)
		var err error
		if patches, err = artifact.HashPatches(pp.Patches, read); err != nil {
			return cfg, nil, fmt.Errorf("%s: patch: %w", p.ID(), err)
		}
	}
	if pkg.Pins != nil {
		for _, v := range pkg.Pins.Versions {
			if v.Known {
				cfg.VersionPins = append(cfg.VersionPins, model.VersionPin{File: v.File, Line: v.Line, Name: v.Name, Value: v.Value})
				if cfg.Version == "" && pin.MatchesRelease(v.Value, p.Version) {
					cfg.Version = v.Value
				}
			}
		}
	}
	if cfg.Version == "" {
		// No pin says it: the upstream version the release is named after,
		// by the rule bump and outdated use, else the release itself.
		if cfg.Version = pin.ReleaseVersion(p.Version); cfg.Version == "" {
			cfg.Version = p.Version
		}
	}
	return cfg, patches, nil
}

// rootedAt is pol with its waivers made to work for a check rooted at dir:
// a policy names packages relative to the tree's root, where the gate runs
// (`builder push packages/system/x` from there), but the checks here see
// dir as ".". A waiver whose package is dir, or a pattern dir matches, also
// waives "."; one below dir also waives its path below dir.
func rootedAt(pol *policy.Policy, dir string) *policy.Policy {
	d := path.Clean(filepath.ToSlash(dir))
	if len(pol.Waivers) == 0 || d == "." {
		return pol
	}
	p := *pol
	p.Waivers = slices.Clone(pol.Waivers)
	for _, w := range pol.Waivers {
		ok, _ := path.Match(w.Package, d)
		switch {
		case ok || w.Package == d:
			w.Package = "."
		case strings.HasPrefix(w.Package, d+"/"):
			w.Package = strings.TrimPrefix(w.Package, d+"/")
		default:
			continue
		}
		p.Waivers = append(p.Waivers, w)
	}
	return &p
}

// relocate makes a finding of the tree rooted at dir read from where
// builder push was run: its package and file are prefixed with dir, the
// package's CommandDir (the commands its hint gives already name the
// package so: Load passes its dir as load.Options.CommandDir).
func relocate(f report.Finding, dir string) report.Finding {
	f.Package = path.Join(dir, f.Package)
	if f.File != "" {
		f.File = path.Join(dir, f.File)
	}
	return f
}

// pinOf is the package's pin of a release: the one the package layout
// pairs with it, else, as the registry checks find it, the pin entry of the
// provider's kind and name, of its release, or a Makefile pin (no kind,
// no name) of the upstream version the release is named after.
func pinOf(pkg *model.Package, r *model.LayoutRelease, p *model.Provider) *pin.Provider {
	if r.Pin != nil {
		return r.Pin
	}
	return layout.PinOf(pkg, p)
}

// Releases is what `builder push` publishes from dir. With a pin.yaml, the
// releases it lists (artifact.PinnedReleases: the files its pins name);
// without one, the releases Load derives from the package as it stands.
// Either way a provider whose offline checks have error findings that
// Refuses is refused with them (a pin-only directory that holds no
// provider objects has nothing for the checks to judge, and is pushed as
// its pins say), and a blob whose header alone is not reproducible is
// pushed in its reproducible encoding (blob.ForYAML).
func Releases(ctx context.Context, dir string, opts Options) ([]Provider, error) {
	tree, r, err := checkTree(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	set, err := pinsOf(dir, tree)
	if err != nil {
		return nil, err
	}
	if set == nil || set.Source != pin.SourcePinFile || set.File == nil {
		return providers(dir, tree, r, opts.BuilderVersion)
	}
	rels, err := artifact.PinnedReleases(dir, set.File, opts.BuilderVersion)
	if err != nil {
		return nil, err
	}
	provs, err := providers(dir, tree, r, opts.BuilderVersion)
	if errors.Is(err, ErrNoPackage) {
		provs, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Provider
	for i := range rels {
		rel := rels[i]
		p := Provider{Package: dir, ID: rel.Kind + "/" + rel.Name, Release: &rel}
		for _, q := range provs {
			if q.ID == p.ID {
				p.Refused, p.Warnings = q.Refused, q.Warnings
			}
		}
		if len(p.Refused) > 0 {
			p.Release = nil
			out = append(out, p)
			continue
		}
		gz, enc, err := blob.ForYAML(rel.Blob, rel.YAML)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, p.ID, err)
		}
		if enc == blob.DirtyHeader {
			rel.Blob = gz
			p.Reencoded = path.Join(filepath.ToSlash(dir), blobOf(set.File, rel.Kind, rel.Name))
		}
		out = append(out, p)
	}
	return out, nil
}

// pinsOf is the pin set of the package at dir: the one the loader read
// for the tree, so the pins are read once. A directory the loader found no
// package at (pin-only), or whose pins it could not read or did not reach,
// is read here, so a pin file that does not parse fails with its own error.
func pinsOf(dir string, tree *model.Tree) (*pin.Set, error) {
	for _, pkg := range tree.Packages {
		if pkg.Path != "." || pkg.Pins == nil {
			continue
		}
		if pkg.Pins.Source != "" && (pkg.Pins.Source != pin.SourcePinFile || pkg.Pins.File != nil) {
			return pkg.Pins, nil
		}
	}
	return infer.LoadDir(dir)
}

// blobOf is the blob pin.yaml names for a provider (artifact.DefaultBlob
// when it names none).
func blobOf(f *pin.File, kind, name string) string {
	for _, p := range f.Providers {
		if p.Kind == kind && p.Name == name && p.Blob != "" {
			return p.Blob
		}
	}
	return artifact.DefaultBlob
}
