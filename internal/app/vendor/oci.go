package vendor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/release"
)

// vendorOCI pushes the release, signed and attested when opts.Key is set,
// to the repository and tag the chart's spec.fetchConfig.oci names, then
// records the pins and the vendored files in the package (no ConfigMap:
// the operator installs the artifact). The push goes first; the tree is
// written only once it succeeded.
func (t *target) vendorOCI(ctx context.Context, opts Options, to *ociTarget, got []file, res *Result) error {
	entry, changes, err := t.ociChanges(got)
	if err != nil {
		return fmt.Errorf("vendor %s: %w", res.Package, err)
	}
	gz, err := blob.CompressBytes(got[0].data)
	if err != nil {
		return err
	}
	rel, err := artifact.NewRelease(model.ArtifactConfig{
		Kind: t.provider.Kind, Name: t.provider.Name,
		Release: t.provider.Version, Version: t.download.Release,
		Pins:           entry.Sources,
		BuilderVersion: opts.BuilderVersion,
	}, artifact.ReleaseFiles{Blob: gz, YAML: got[0].data, Metadata: got[1].data, MetadataPath: entry.Sources[1].To})
	if err != nil {
		return fmt.Errorf("vendor %s: %s: %w; nothing was pushed or written", res.Package, t.provider.ID(), err)
	}
	if err := rel.Validate(); err != nil {
		return fmt.Errorf("vendor %s: %w; nothing was pushed or written", res.Package, err)
	}
	reg := opts.Registry
	reg.PlainHTTP = reg.PlainHTTP || to.src.PlainHTTP
	pr, err := release.PushRelease(ctx, res.Package, rel, release.PushOptions{
		Repository: to.src.Repository, Registry: reg,
		Key: opts.Key, Sign: opts.Sign, BuilderVersion: opts.BuilderVersion, Logger: opts.Logger,
	})
	if err != nil {
		return fmt.Errorf("vendor %s: pushing %s to %s: %w; nothing was written", res.Package, rel, to.src.Ref(), err)
	}
	res.Reference, res.Tag, res.Signed = pr.Reference, rel.Release, pr.Signature != nil
	res.Files = []string{}
	if len(changes) == 0 {
		return nil
	}
	if res.Files, err = commit(t.dir, changes); err != nil {
		return fmt.Errorf("%s is pushed, but %w; run the vendor again to record it (the push is not repeated: the same content is in place)", pr.Reference, err)
	}
	return nil
}

// ociChanges are the pin entry the artifact records and the files to
// write once it is pushed: a new entry in pin.yaml and the vendored files
// beside it, or, for a release pin.yaml pins already, the vendored files
// that are missing or differ from the download.
func (t *target) ociChanges(got []file) (pin.Provider, []change, error) {
	if t.pinned == nil {
		n := t.names(got)
		if err := refuseExisting(t.dir, n.components, n.metadata); err != nil {
			return pin.Provider{}, nil, err
		}
		entry := t.pinEntry(n, false, t.checksums)
		pinBytes, err := pinFile(t.dir, entry)
		if err != nil {
			return pin.Provider{}, nil, err
		}
		return entry, []change{{n.components, got[0].data}, {n.metadata, got[1].data}, {pin.FileName, pinBytes}}, nil
	}
	// The artifact records the sources as pinned, components first.
	entry := *t.pinned
	entry.Sources = nil
	var changes []change
	for _, f := range got {
		for _, s := range t.pinned.Sources {
			if s.URL != f.digest.URL {
				continue
			}
			entry.Sources = append(entry.Sources, s)
			if old, err := os.ReadFile(filepath.Join(t.dir, filepath.FromSlash(s.To))); err != nil || !bytes.Equal(old, f.data) {
				changes = append(changes, change{s.To, f.data})
			}
		}
	}
	return entry, changes, nil
}
