//go:build integration

package vendor_test

import (
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"
)

// pinnedMetadataLoaded: the loader parsed the metadata.yaml vendor
// --to-oci pinned and vendored for fp (no ConfigMap holds it), with a
// contract for the release, where the contract check reads it.
func pinnedMetadataLoaded(t *testing.T, tree *model.Tree, fp fixture.FetchedProvider) {
	t.Helper()
	for _, pkg := range tree.Packages {
		for _, r := range pkg.Layout.Releases {
			if r.Pin == nil || r.Pin.Kind+"/"+r.Pin.Name != fp.ID() || r.Pin.Release != fp.Version {
				continue
			}
			md := r.PinnedMetadata
			if r.ConfigMap != nil || md == nil || md.Err != nil || len(md.ReleaseSeries) == 0 {
				t.Fatalf("release %s of %s: ConfigMap %v, pinned metadata %+v (file %q), want the vendored metadata.yaml parsed", r.Name, fp.ID(), r.ConfigMap, md, r.Metadata)
			}
			return
		}
	}
	t.Fatalf("no pinned release %s of %s in the tree", fp.Version, fp.ID())
}
