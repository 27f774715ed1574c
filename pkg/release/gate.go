package release

import (
	"slices"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
)

// What refuses a push. `builder push` publishes one artifact per provider:
// the components YAML, its blob and the metadata, under the release name,
// with the pins as provenance. An error finding refuses a provider when
// it says that artifact would be wrong; the others do not change what is
// pushed and are reported beside the result as warnings.
//
// Refusing are the checks whose error findings make the artifact wrong:
//
//   - what the artifact holds is not what the tree reviews or installs:
//     blob-yaml (content drift), blob-corrupt, components-valid, and
//     package-load (what was read cannot be trusted);
//   - the release it is pushed under, or the content the operator picks
//     for it, is not the provider's: configmap-version, selector-unique,
//     selector-semver, compressed-annotation, pin-version;
//   - its metadata or contract are wrong: metadata-series, contract;
//   - its provenance would name other bytes than the pins: pin-digest;
//   - the provider's spec.fetchConfig.oci is one the operator cannot
//     install or would install under another release: oci-source (push
//     skips such providers; a value beside a selector refuses the one it
//     would have pushed);
//   - it runs an image on a moving tag with no digest: image-ref (the
//     artifact's bytes are pinned but what the cluster runs is not, so a
//     signed, reproducible artifact would not be reproducible in effect;
//     its warning, a digest whose tag disagrees with the release, is not
//     an error and refuses nothing).
//
// Not refusing are blob-header (the artifact carries the reproducible
// encoding of the YAML whatever header the tree's blob has: see
// blob.ForYAML), release-size (the Helm release of the chart, not the
// artifact), pin-missing (a warning by default; the provenance says which
// pins there are), waiver-expired (the finding it waived is judged on its
// own), the registry checks, which push does not run offline (a
// release tag is never moved by a push: artifact.Push refuses), and
// version-downgrade, which needs a base revision push does not have, and
// the cluster checks, which read a live cluster push never contacts.
//
// A check in neither list refuses: a new check is judged before it can let
// anything through (TestRefusingCoversCatalog names it).
var (
	Refusing = []string{
		model.CheckPackageLoad, check.BlobYAML, model.CheckBlobCorrupt, check.ComponentsValid,
		check.ConfigMapVersion, check.SelectorUnique, check.SelectorSemver, check.ProviderDuplicate, check.CompressedAnnotation,
		check.PinVersion, check.MetadataSeries, check.Contract, model.CheckPinDigest, check.OCISource, check.ImageRef, check.ImageRelocation,
	}
	NotRefusing = []string{
		check.BlobHeader, check.ReleaseSize, check.PinMissing, check.WaiverExpired,
		check.RegistryDigest, check.VersionReused, check.Signature, check.Provenance, check.OCIInstall,
		check.VersionDowngrade,
		check.ClusterInstalled, check.ClusterConfigMap, check.ClusterOCI, check.ClusterWorkload, check.ClusterCRD,
	}
)

// Refuses reports whether an error finding of check id refuses a provider
// at push time: every check but those NotRefusing.
func Refuses(id string) bool {
	return !slices.Contains(NotRefusing, id)
}
