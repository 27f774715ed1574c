package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/internal/pin/infer"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// DefaultBlob and DefaultMetadata are the package-relative paths used when a
// pin names no blob or no metadata source.
const (
	DefaultBlob     = "files/components.gz"
	DefaultMetadata = "files/metadata.yaml"
)

// maxFileSize bounds each vendored file LoadReleases reads.
const maxFileSize = MaxLayerSize

// LoadReleases reads the releases of the provider package in dir from its
// pin.yaml: for each provider the vendored blob (pin "blob", else
// files/components.gz), the components YAML (the pinned source whose "to"
// ends in components.yaml), metadata.yaml (the pinned source named
// metadata.yaml, else files/metadata.yaml) and the contract of the
// release's series from it. Files are read inside dir only (a symlink out
// of the package is refused).
func LoadReleases(dir, builderVersion string) ([]Release, error) {
	set, err := infer.LoadDir(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case set.Source == "":
		return nil, fmt.Errorf("%s: no %s: builder push needs a pin file naming each provider's kind, name, release and files (see api/pin.md)", dir, pin.FileName)
	case set.Source != pin.SourcePinFile || set.File == nil:
		return nil, fmt.Errorf("%s: pins come from the %s, which does not name the providers' kind, name and release: write a %s to push this package (see api/pin.md)", dir, set.Source, pin.FileName)
	}
	return PinnedReleases(dir, set.File, builderVersion)
}

// PinnedReleases reads the releases pin file f lists, f being the pin.yaml
// of the package in dir already read (LoadReleases reads it; `builder
// push` passes the one it read): the files of each, as LoadReleases says.
func PinnedReleases(dir string, f *pin.File, builderVersion string) ([]Release, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var out []Release
	for _, p := range f.Providers {
		rel, err := releaseOf(root, dir, p, builderVersion)
		if err != nil {
			return nil, err
		}
		out = append(out, rel)
	}
	return out, nil
}

func releaseOf(root *os.Root, dir string, p pin.Provider, builderVersion string) (Release, error) {
	id := p.Kind + "/" + p.Name
	// Which file is which: the package layout (internal/layout) of the pin.
	blobPath := p.Blob
	if blobPath == "" {
		blobPath = DefaultBlob
	}
	yamlPath, err := layout.PinComponents(p)
	if err != nil {
		return Release{}, fmt.Errorf("%s: %w", dir, err)
	}
	metaPath := layout.PinMetadata(p)
	if metaPath == "" {
		metaPath = DefaultMetadata
	}
	if yamlPath == "" {
		return Release{}, fmt.Errorf("%s: %s: no pinned source is the components file: name it with `components: <to>` in pin.yaml, or pin the upstream *-components.yaml", dir, id)
	}
	read := func(rel string) ([]byte, error) {
		b, err := layout.ReadFile(root, rel, maxFileSize)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, id, err)
		}
		return b, nil
	}
	blob, err := read(blobPath)
	if err != nil {
		return Release{}, fmt.Errorf("%w (run builder build first)", err)
	}
	yml, err := read(yamlPath)
	if err != nil {
		return Release{}, fmt.Errorf("%w (run builder build first)", err)
	}
	meta, err := read(metaPath)
	if err != nil {
		return Release{}, err
	}
	patches, err := HashPatches(p.Patches, read)
	if err != nil {
		return Release{}, err
	}
	cfg := model.ArtifactConfig{
		Kind:           p.Kind,
		Name:           p.Name,
		Release:        p.Release,
		Version:        p.Version,
		Pins:           p.Sources,
		BuilderVersion: builderVersion,
	}
	rel, err := NewRelease(cfg, ReleaseFiles{Blob: blob, YAML: yml, Metadata: meta, MetadataPath: metaPath, Patches: patches})
	if err != nil {
		return Release{}, fmt.Errorf("%s: %s: %w", dir, id, err)
	}
	return rel, nil
}

// ReleaseFiles are the bytes of a release, however they were read.
type ReleaseFiles struct {
	Blob, YAML, Metadata []byte
	MetadataPath         string // where Metadata was read, for errors
	Patches              []Patch
}

// NewRelease is the one place a release is assembled, whoever read its
// files (PinnedReleases from pin.yaml, pkg/release from the package
// layout, a vendored download): cfg with Type from Kind and Contract from
// the series of Version in the metadata. The blob is taken as given, never
// encoded again.
func NewRelease(cfg model.ArtifactConfig, f ReleaseFiles) (Release, error) {
	r := Release{ArtifactConfig: cfg, Blob: f.Blob, YAML: f.YAML, Metadata: f.Metadata, Patches: f.Patches}
	if err := r.Complete(f.MetadataPath); err != nil {
		return Release{}, err
	}
	return r, nil
}

// Complete fills the fields of a release that follow from the others,
// whoever assembled it (LoadReleases from pin.yaml, pkg/release from the
// package as it stands): Type from Kind, and Contract from the series of
// Version in Metadata, the file metaPath (named in the error).
func (r *Release) Complete(metaPath string) error {
	typ, ok := model.ProviderKinds[r.Kind]
	if !ok {
		return fmt.Errorf("kind %q is not a cluster-api-operator provider kind", r.Kind)
	}
	contract, err := metadata.Contract(r.Metadata, r.Version)
	if err != nil {
		return fmt.Errorf("%s: %w", metaPath, err)
	}
	r.Type, r.Contract = typ, contract
	return nil
}

// HashPatches records the patch files of a release, in order, with the
// SHA-256 of their bytes as read reads them (the package's files, inside
// the package). The error is read's, unwrapped.
func HashPatches(paths []string, read func(rel string) ([]byte, error)) ([]Patch, error) {
	var out []Patch
	for _, rel := range paths {
		b, err := read(rel)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		out = append(out, Patch{Path: rel, SHA256: hex.EncodeToString(sum[:])})
	}
	return out, nil
}
