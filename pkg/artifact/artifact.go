// Package artifact packs a provider release into a reproducible OCI
// artifact, pushes and pulls it.
//
// It packs one provider release into a reproducible OCI
// artifact, pushes it to a registry or an OCI image layout without ever
// moving a release tag, and pulls it back with every byte verified.
//
// The artifact is an OCI image manifest (image-spec v1.1) with
// artifactType ArtifactType, a JSON config (Config) and three layers titled
// with org.opencontainers.image.title:
//
//	components.gz    the vendored gzip blob, byte for byte
//	metadata.yaml    clusterctl metadata (release series → contract)
//	components.yaml  the raw YAML; every cluster-api-operator release with
//	                 OCI support installs from it (spec.fetchConfig.oci),
//	                 whatever the provider's kind (see YAMLTitle)
//
// Same Release in, same manifest digest out: nothing in the manifest depends
// on the clock unless SOURCE_DATE_EPOCH says so.
package artifact

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Media types of the artifact.
const (
	// ArtifactType is the manifest's artifactType.
	ArtifactType = "application/vnd.pinseal.provider.v1+json"
	// ConfigMediaType is the media type of the config blob (Config as JSON).
	ConfigMediaType = "application/vnd.pinseal.provider.config.v1+json"
	// BlobMediaType is the media type of the components.gz layer.
	BlobMediaType = "application/vnd.pinseal.provider.components.v1+gzip"
	// YAMLMediaType is the media type of the raw components YAML layer.
	YAMLMediaType = "application/vnd.pinseal.provider.components.v1+yaml"
	// MetadataMediaType is the media type of the metadata.yaml layer.
	MetadataMediaType = "application/vnd.pinseal.provider.metadata.v1+yaml"
)

// Layer titles.
const (
	BlobTitle     = "components.gz"
	MetadataTitle = "metadata.yaml"
)

// Annotation keys set on the manifest beyond the OCI pre-defined ones.
const (
	// AnnotationRelease carries the release (ConfigMap name, spec.version).
	AnnotationRelease = "dev.pinseal.release"
)

// YAMLTitle is the title of the raw YAML layer: "components.yaml", the
// one components title every cluster-api-operator release with OCI support
// (v0.16.0 and later) accepts for every provider kind. A typed title would
// not do: ControlPlaneProvider's type is "controlplane" before operator
// v0.23.0 and "control-plane" since, and a full
// "<type>-<name>-<version>-components.yaml" depends on the type too, on
// the provider object's name and on its spec.version. One YAML layer under
// one title also leaves no doubt which bytes an operator installs
// (internal/operator has the lookup rules).
const YAMLTitle = operator.ComponentsTitle

// Release is one provider release to pack: the identity of the provider
// (its config, the artifact's config blob) and the exact bytes that go into
// the artifact.
type Release struct {
	// ArtifactConfig is the provider's identity, versions, pins and
	// builder: Type is core, bootstrap, control-plane, infrastructure,
	// ipam, addon or runtime-extension; Release the ConfigMap name and
	// spec.version (the tag); VersionPins the version variables the
	// package pins its upstream release with (Makefile
	// CABPT_UPSTREAM_VERSION = v0.6.12, Dockerfile ARG VERSION=v0.19.0):
	// not digests, so not provenance materials, but recorded beside them.
	model.ArtifactConfig
	Blob     []byte // the components.gz layer, packed as is (`builder push` gives blob.ForYAML of the vendored blob)
	YAML     []byte // the raw components YAML
	Metadata []byte // clusterctl metadata.yaml
	// Patches are the package's patches applied to the pinned sources, in
	// order. They are recorded in the provenance, not in the artifact (the
	// YAML layer already holds their result).
	Patches []Patch
}

// Patch is one patch file of a package.
type Patch struct {
	Path   string `json:"path"`   // slash path relative to the package directory
	SHA256 string `json:"sha256"` // lowercase hex of its bytes
}

// Config returns the config blob content of the release.
func (r Release) Config() model.ArtifactConfig {
	c := r.ArtifactConfig
	if c.Pins == nil {
		c.Pins = []pin.Source{}
	}
	return c
}

// RepositoryName is the repository of the release below a prefix
// (model.RepositoryName of its type and name).
func (r Release) RepositoryName() string { return model.RepositoryName(r.Type, r.Name) }

// String names the release for messages: "InfrastructureProvider/proxmox v0.7.7-infraprovider-proxmox".
func (r Release) String() string { return r.Kind + "/" + r.Name + " " + r.Release }

// tagRE is the OCI distribution tag grammar, compiled on first use, not
// at init: every process start (each verifier check, each render child)
// would pay for it, and its counted repetition compiles to some 100 KB.
var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`) })

// repoComponentRE is one path component of an OCI repository name.
var repoComponentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`) })

// Validate reports what makes the release unpackable, naming the field.
func (r Release) Validate() error {
	var problems []string
	if r.Kind == "" {
		problems = append(problems, "kind is empty")
	}
	if r.Name == "" {
		problems = append(problems, "name is empty")
	}
	if types := model.ProviderTypes(); !slices.Contains(types, r.Type) {
		problems = append(problems, fmt.Sprintf("type %q is not one of %s", r.Type, strings.Join(types, ", ")))
	} else if r.Name != "" && !repoComponentRE().MatchString(r.RepositoryName()) {
		problems = append(problems, fmt.Sprintf("repository name %q is not a valid OCI repository name (lowercase letters, digits, '.', '_', '-')", r.RepositoryName()))
	}
	if !tagRE().MatchString(r.Release) {
		problems = append(problems, fmt.Sprintf("release %q is not a valid OCI tag (letters, digits, '_', '.', '-'; at most 128)", r.Release))
	}
	if len(r.Blob) == 0 {
		problems = append(problems, "blob is empty")
	}
	if len(r.YAML) == 0 {
		problems = append(problems, "components YAML is empty")
	}
	if len(r.Metadata) == 0 {
		problems = append(problems, "metadata.yaml is empty")
	}
	if len(problems) > 0 {
		return fmt.Errorf("release %s cannot be packed: %s", r, strings.Join(problems, "; "))
	}
	return nil
}
