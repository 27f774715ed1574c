package build

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// PinsNone is Result.Pins of a package that pins no download: its blobs
// were rebuilt from the vendored YAML, nothing was fetched.
const PinsNone = "none"

// maxVendoredYAML bounds a vendored components file read to rebuild its blob.
const maxVendoredYAML = 256 << 20

// pinsSources reports whether the package pins at least one download (a
// pin.yaml, or Makefile URL and SHA-256 variables).
func pinsSources(set *pin.Set) bool {
	if set == nil || set.File == nil {
		return false
	}
	for _, p := range set.File.Providers {
		if len(p.Sources) > 0 {
			return true
		}
	}
	return false
}

// buildFromVendored rebuilds every blob of a package that pins no download
// from the vendored components YAML the package layout (internal/layout) pairs
// it with: the package is loaded and rendered as the verifier loads it, and
// for each ConfigMap whose components are a vendored gzip file, that file
// becomes the reproducible gzip of its YAML. The YAML and every other file
// stay as they are; nothing is fetched. Writes are atomic as in Build.
func buildFromVendored(ctx context.Context, dir, abs string, set *pin.Set, opts Options, log *slog.Logger) (*Result, error) {
	pkg, err := load.Package(ctx, abs, load.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	if pkg == nil {
		return nil, noPinsError(dir, set)
	}
	for _, p := range pkg.Problems {
		if p.Check == model.CheckPackageLoad {
			where := p.File
			if where == "" {
				where = dir
			}
			return nil, fmt.Errorf("build %s: the package pins no download, so its blobs are rebuilt from the vendored YAML, but the package cannot be read: %s: %s", dir, where, p.Message)
		}
	}
	if pkg == nil || len(pkg.ConfigMaps) == 0 {
		return nil, noPinsError(dir, set)
	}
	res := &Result{Dir: abs, Pins: PinsNone, FromVendored: true}
	if opts.Provider != "" && !slices.ContainsFunc(pkg.Providers, func(p *model.Provider) bool { return p.ID() == opts.Provider }) {
		var ids []string
		for _, p := range pkg.Providers {
			ids = append(ids, p.ID())
		}
		return nil, fmt.Errorf("build %s: %w", dir, noSuchProvider(opts.Provider, ids))
	}
	outs, err := vendoredBlobs(abs, dir, pkg, func(r *model.LayoutRelease) bool { return releaseOf(r, opts.Provider) }, nil, true, log)
	if err != nil {
		return nil, err
	}
	if len(outs) == 0 {
		return nil, noPinsError(dir, set)
	}
	if err := writeOutputs(abs, dir, outs, opts, res, log); err != nil {
		return nil, err
	}
	return res, nil
}

// releaseID names a release in messages: its providers, else its name.
func releaseID(r *model.LayoutRelease) string {
	var ids []string
	for _, p := range r.Providers {
		ids = append(ids, p.ID())
	}
	if len(ids) == 0 {
		return "ConfigMap " + r.Name
	}
	return strings.Join(ids, ", ")
}

// vendoredBlobs are the blobs of pkg's releases (those want accepts)
// rebuilt from the vendored components YAML the package layout pairs each
// with: its planned content when the build writes that YAML, else the
// file. strict: a release whose blob cannot be rebuilt (gzip that is no
// vendored file, no YAML to rebuild it from, one blob of two YAMLs) is an
// error; otherwise it is left out (a pinned package's other ConfigMaps).
func vendoredBlobs(abs, dir string, pkg *model.Package, want func(*model.LayoutRelease) bool, planned map[string][]byte, strict bool, log *slog.Logger) ([]output, error) {
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	defer root.Close()
	var outs []output
	owner := map[string]string{}
	fail := func(err error) error {
		if strict {
			return err
		}
		log.Info("blob not rebuilt", "reason", err)
		return nil
	}
	for _, r := range pkg.Layout.Releases {
		cm := r.ConfigMap
		if cm == nil || cm.Components == nil || cm.Components.DecodeErr != nil || !want(r) {
			continue
		}
		id := releaseID(r)
		if r.Blob == "" {
			if !cm.Components.Gzip {
				continue // plain YAML in data.components: there is no blob
			}
			if err := fail(fmt.Errorf("build %s: %s: the ConfigMap %s carries gzip components that are no vendored file of the package, so there is no blob file to rebuild; vendor the blob under files/ and read it with .Files.Get", dir, id, cm.Name)); err != nil {
				return nil, err
			}
			continue
		}
		if r.Components == "" {
			if err := fail(fmt.Errorf("build %s: %s: no vendored YAML is the source of %s (nothing inflates to it, and no pin or file name points to one), so it cannot be rebuilt; vendor the upstream components YAML beside it and pin it in %s", dir, id, r.Blob, pin.FileName)); err != nil {
				return nil, err
			}
			continue
		}
		if other, dup := owner[r.Blob]; dup {
			if other == r.Components {
				continue
			}
			if err := fail(fmt.Errorf("build %s: %s is the blob of %s and of %s; give each its own blob", dir, r.Blob, other, r.Components)); err != nil {
				return nil, err
			}
			continue
		}
		owner[r.Blob] = r.Components
		yml, ok := planned[r.Components]
		if !ok {
			if yml, err = layout.ReadFile(root, r.Components, maxVendoredYAML); err != nil {
				return nil, fmt.Errorf("build %s: %s: %w", dir, id, err)
			}
		}
		gz, err := blob.CompressBytes(yml)
		if err != nil {
			return nil, fmt.Errorf("build %s: %s: compress %s: %w", dir, id, r.Components, err)
		}
		log.Info("rebuild blob from vendored YAML", "release", r.Name, "yaml", r.Components, "blob", r.Blob)
		outs = append(outs, output{rel: r.Blob, provider: id, kind: "blob", data: gz, yaml: yml})
	}
	return outs, nil
}
