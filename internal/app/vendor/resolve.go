package vendor

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// target is the provider being vendored and what the operator downloads
// for it.
type target struct {
	dir      string // the package directory, absolute
	pkg      *model.Package
	provider *model.Provider
	source   string // report.SourceDefault or report.SourceURL
	download operator.Download
	// checksums is the URL of the release's checksums file the digests
	// were read from ("" when none): pin.yaml's checksums, for bump.
	checksums string
	// pinned is the provider's pin.yaml entry, nil when it has none.
	pinned *pin.Provider
}

// ociTarget is where the OCI form pushes.
type ociTarget struct {
	prefix artifact.Prefix
	src    operator.Source // the chart's spec.fetchConfig.oci, as the operator reads it
}

// loadPackage loads the chart in dir alone (as the root of a tree),
// rendered with values.
func loadPackage(ctx context.Context, dir string, values []string) (*model.Package, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("vendor %s: %w", dir, err)
	}
	opts := load.Options{Logger: slog.New(slog.DiscardHandler)}
	if len(values) > 0 {
		opts.Values = []load.ValuesFiles{{Package: ".", Files: values}}
	}
	t, err := load.Tree(ctx, abs, opts)
	if err != nil {
		return nil, fmt.Errorf("vendor: %w", err)
	}
	for _, p := range t.Packages {
		if p.Path == "." {
			for _, pr := range p.Problems {
				if pr.Check == model.CheckPackageLoad {
					return nil, fmt.Errorf("vendor %s: %s: %s", dir, pr.File, pr.Message)
				}
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("vendor %s: not a provider package (no provider object renders there); give the chart directory that holds the provider", dir)
}

// resolve finds the provider to vendor in the chart in dir, rendered with
// its own values, and what the operator downloads for it.
func resolve(ctx context.Context, dir string, opts Options) (*target, error) {
	pkg, err := loadPackage(ctx, dir, nil)
	if err != nil {
		return nil, err
	}
	p, err := pickProvider(pkg, opts.Provider)
	if err != nil {
		return nil, fmt.Errorf("vendor %s: %w", dir, err)
	}
	t := &target{dir: pkg.Dir, pkg: pkg, provider: p}
	if src := pkg.Pins.Source; src == pin.SourceMakefile || src == pin.SourceDockerfile {
		// The loader reads a pin.yaml instead of the Makefile's or
		// Dockerfile's pins, not beside them: adding one would unpin
		// what they pin.
		return nil, fmt.Errorf("vendor %s: the package pins with its %s, and a %s (which vendoring adds) replaces those pins: move them into %s first (api/pin.md), then vendor", dir, src, pin.FileName, pin.FileName)
	}
	if pkg.Pins != nil && pkg.Pins.Source == pin.SourcePinFile && pkg.Pins.File != nil {
		for i, e := range pkg.Pins.File.Providers {
			if e.Kind == p.Kind && e.Name == p.Name {
				t.pinned = &pkg.Pins.File.Providers[i]
			}
		}
	}
	if p.FetchURL != "" {
		t.source, t.download = report.SourceURL, operator.URLDownload(p.FetchURL, p.Version)
	} else {
		t.source = report.SourceDefault
		t.download = check.DefaultDownload(p)
	}
	switch d := t.download; {
	case d.Problem != "":
		return nil, fmt.Errorf("vendor %s: %s: %s", dir, p.ID(), d.Problem)
	case d.Release == "" || p.Version == "":
		return nil, fmt.Errorf("vendor %s: %s has no spec.version, so the operator installs whatever release is the latest at install time; set spec.version to the release to vendor first", dir, p.ID())
	case len(d.URLs) < 2:
		return nil, fmt.Errorf("vendor %s: %s downloads from %s, which is not a GitHub release URL: vendor it by hand (docs/sources.md)", dir, p.ID(), d.Repository)
	}
	return t, nil
}

// held says what holds p's bytes already, "" when nothing does.
func held(p *model.Provider) string {
	switch {
	case p.Selector != nil:
		return "it installs from ConfigMaps of the tree (spec.fetchConfig.selector)"
	case p.FetchOCI != "":
		return "it installs from the OCI artifact " + p.FetchOCI + " (spec.fetchConfig.oci)"
	}
	return ""
}

// pickProvider is the provider named id (Kind/name), or with id "" the
// package's only provider that downloads its release at install time.
func pickProvider(pkg *model.Package, id string) (*model.Provider, error) {
	var cands, all []string
	var only *model.Provider
	for _, p := range pkg.Providers {
		all = append(all, p.ID())
		if id != "" && p.ID() == id {
			if why := held(p); why != "" {
				return nil, fmt.Errorf("%s: %w: %s; `verifier check` says what holds its bytes", id, ErrHeld, why)
			}
			return p, nil
		}
		if held(p) == "" {
			cands = append(cands, p.ID())
			only = p
		}
	}
	switch {
	case id != "":
		return nil, fmt.Errorf("the package has no provider %s (it has %s)", id, strings.Join(all, ", "))
	case len(cands) == 1:
		return only, nil
	case len(cands) == 0:
		return nil, fmt.Errorf("no provider of the package downloads its release at install time (%s): %w", strings.Join(all, ", "), ErrHeld)
	}
	return nil, fmt.Errorf("%w: %s", ErrWhichProvider, strings.Join(cands, ", "))
}

// ociReference renders the chart with opts.Values and reads the
// provider's spec.fetchConfig.oci there: the reference the OCI form
// pushes to, which must be under the --to-oci prefix and name the
// release spec.version names.
func (t *target) ociReference(ctx context.Context, opts Options, to *ociTarget) error {
	id := t.provider.ID()
	if len(opts.Values) == 0 {
		return fmt.Errorf("vendor %s: --to-oci pushes to the reference the chart's spec.fetchConfig.oci names, and with its own values the chart gives %s none: give the values file that sets the registry (--values FILE)", t.dir, id)
	}
	pkg, err := loadPackage(ctx, t.dir, opts.Values)
	if err != nil {
		return err
	}
	var p *model.Provider
	for _, q := range pkg.Providers {
		if q.ID() == id {
			p = q
		}
	}
	if p == nil || p.FetchOCI == "" {
		return fmt.Errorf("vendor %s: rendered with %s, the chart gives %s no spec.fetchConfig.oci, so the operator would not install the artifact: template it (e.g. {{ .Values.registry }}/capi/%s-components), or vendor into a ConfigMap (no --to-oci)",
			t.dir, strings.Join(opts.Values, ", "), id, t.provider.RepositoryName())
	}
	if problems := operator.Check(operator.Spec{Kind: p.Kind, Name: p.Name, Version: p.Version, OCI: p.FetchOCI, URL: p.FetchURL, Selector: p.Selector != nil}); hasError(problems) {
		return fmt.Errorf("vendor %s: the operator cannot install %s from %q: %s (%s)", t.dir, id, p.FetchOCI, firstError(problems).Message, firstError(problems).Hint)
	}
	src, err := operator.ParseSource(p.FetchOCI, p.Version)
	if err != nil {
		return fmt.Errorf("vendor %s: %s: %w", t.dir, id, err)
	}
	if p.Version != t.provider.Version {
		return fmt.Errorf("vendor %s: %s has spec.version %s with the values and %s without: vendor one release", t.dir, id, p.Version, t.provider.Version)
	}
	want := to.prefix.String() + "/"
	if !strings.HasPrefix(src.Repository+"/", want) {
		return fmt.Errorf("vendor %s: the chart names %s for %s, which is not under --to-oci %s: give the prefix of that reference, or the values that name your registry", t.dir, src.Ref(), id, to.prefix)
	}
	to.src = src
	return nil
}

func hasError(ps []operator.Problem) bool {
	for _, p := range ps {
		if !p.Warning {
			return true
		}
	}
	return false
}

func firstError(ps []operator.Problem) operator.Problem {
	for _, p := range ps {
		if !p.Warning {
			return p
		}
	}
	return operator.Problem{}
}

// pinnedDigests are the SHA-256 pins.yaml's entry for the provider gives
// the files the operator downloads, by URL: a release pinned already (by
// an earlier vendor --to-oci, moved on by builder bump) is pushed as
// pinned. The entry must pin exactly those files of release spec.version,
// with no patches (the artifact would then hold other bytes than the
// download). Nil when there is no entry.
func (t *target) pinnedDigests(oci bool) (map[string]string, error) {
	e := t.pinned
	if e == nil {
		return nil, nil
	}
	id := t.provider.ID()
	if !oci {
		return nil, fmt.Errorf("vendor %s: %s pins %s already (release %s): `builder build` vendors its files; to install it from the tree, add its ConfigMap and spec.fetchConfig.selector (docs/sources.md), or push it with --to-oci", t.dir, pin.FileName, id, e.Release)
	}
	if len(e.Patches) > 0 {
		return nil, fmt.Errorf("vendor %s: %s patches %s, so its release is not the download: write its ConfigMap package and push that with `builder push`", t.dir, pin.FileName, id)
	}
	out := map[string]string{}
	for _, s := range e.Sources {
		out[s.URL] = s.SHA256
	}
	for _, u := range t.download.URLs {
		if out[u] == "" || e.Release != t.provider.Version || len(e.Sources) != len(t.download.URLs) {
			return nil, fmt.Errorf("vendor %s: %s pins %s at release %s with other files than the operator downloads for spec.version %s (%s): bring them in step (`builder bump`) first", t.dir, pin.FileName, id, e.Release, t.provider.Version, strings.Join(t.download.URLs, ", "))
		}
	}
	return out, nil
}
