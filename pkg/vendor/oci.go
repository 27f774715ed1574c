package vendor

import (
	"context"
	"fmt"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/release"
)

// vendorOCI pushes the release, signed and attested when opts.Key is set,
// to the repository and tag the chart's spec.fetchConfig.oci names, then
// records the pins and the vendored files in the package (no ConfigMap:
// the operator installs the artifact). The push goes first; the tree is
// written only once it succeeded.
func (t *target) vendorOCI(ctx context.Context, opts Options, to *ociTarget, got []file, res *Result) error {
	n := t.names(got)
	if err := refuseExisting(t.dir, n.components, n.metadata); err != nil {
		return fmt.Errorf("vendor %s: %w", res.Package, err)
	}
	entry := t.pinEntry(n, false, t.checksums)
	pinBytes, err := pinFile(t.dir, entry)
	if err != nil {
		return fmt.Errorf("vendor %s: %w", res.Package, err)
	}
	gz, err := blob.CompressBytes(got[0].data)
	if err != nil {
		return err
	}
	rel := artifact.Release{
		Kind: t.provider.Kind, Name: t.provider.Name,
		Release: t.provider.Version, Version: t.download.Release,
		Blob: gz, YAML: got[0].data, Metadata: got[1].data,
		Pins:           entry.Sources,
		BuilderVersion: opts.BuilderVersion,
	}
	if err := rel.Complete(n.metadata); err != nil {
		return fmt.Errorf("vendor %s: %s: %w; nothing was pushed or written", res.Package, t.provider.ID(), err)
	}
	if err := rel.Validate(); err != nil {
		return fmt.Errorf("vendor %s: %w; nothing was pushed or written", res.Package, err)
	}
	reg := opts.Registry
	reg.PlainHTTP = reg.PlainHTTP || to.src.PlainHTTP
	pr, err := release.PushRelease(ctx, res.Package, rel, release.PushOptions{
		Repository: to.src.Repository, Registry: reg,
		Key: opts.Key, Sign: opts.Sign, BuilderVersion: opts.BuilderVersion, Logger: opts.Log,
	})
	if err != nil {
		return fmt.Errorf("vendor %s: pushing %s to %s: %w; nothing was written", res.Package, rel, to.src.Ref(), err)
	}
	res.Reference, res.Tag, res.Signed = pr.Reference, rel.Release, pr.Signature != nil
	changes := []change{
		{n.components, got[0].data},
		{n.metadata, got[1].data},
		{"pin.yaml", pinBytes},
	}
	if res.Files, err = commit(t.dir, changes); err != nil {
		return fmt.Errorf("%s is pushed, but %w; run the vendor again to record it (the push is not repeated: the same content is in place)", pr.Reference, err)
	}
	return nil
}
