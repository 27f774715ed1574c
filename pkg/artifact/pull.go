package artifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
)

// Size limits applied before anything is read from a repository.
const (
	MaxManifestSize int64 = 4 << 20
	MaxConfigSize   int64 = 1 << 20
	MaxLayerSize    int64 = 128 << 20
	MaxTotalSize    int64 = 256 << 20
)

// ErrTampered is wrapped by errors about stored bytes that do not match
// the digest or size that references them.
var ErrTampered = errors.New("stored content does not match its descriptor (corrupt or tampered)")

// Pulled is an artifact read back from a repository, every byte verified
// against its digest.
type Pulled struct {
	Repository string
	// Descriptor is the manifest's descriptor (the digest is what
	// signatures and attestations refer to).
	Descriptor    ocispec.Descriptor
	Manifest      ocispec.Manifest
	ManifestBytes []byte
	// Config is the decoded pinseal config; nil when the artifact's config
	// is not a pinseal config (e.g. pushed by another tool).
	Config      *model.ArtifactConfig
	ConfigBytes []byte
	// Files are the titled layers by title.
	Files map[string][]byte
	// Blob, Metadata and YAML are the components.gz, metadata.yaml and
	// components YAML (ComponentsLayer) layers; nil when absent.
	Blob, Metadata, YAML []byte
	// ComponentsTitle is the title of the YAML layer ("" when absent).
	ComponentsTitle string
}

// Reference is the pulled artifact by digest: "REPO@sha256:…".
func (p *Pulled) Reference() string { return p.Repository + "@" + p.Descriptor.Digest.String() }

// Pull reads the artifact ref (a tag or a digest) from repo: the manifest,
// the config and every layer, refusing anything larger than the limits
// above and verifying each against its digest and size. A tampered layer is
// an error wrapping ErrTampered that names the layer.
func Pull(ctx context.Context, repo Repository, ref string) (*Pulled, error) {
	if ref == "" {
		return nil, fmt.Errorf("pull from %s: no tag or digest given", repo.Name())
	}
	desc, err := resolveManifest(ctx, repo, ref)
	if err != nil {
		return nil, err
	}
	where := repo.Name() + "@" + desc.Digest.String()
	raw, err := fetch(ctx, repo, desc)
	if err != nil {
		return nil, fmt.Errorf("pull %s: manifest: %w", where, err)
	}
	p := &Pulled{Repository: repo.Name(), Descriptor: desc, ManifestBytes: raw, Files: map[string][]byte{}}
	if err := json.Unmarshal(raw, &p.Manifest); err != nil {
		return nil, fmt.Errorf("pull %s: manifest is not JSON: %w", where, err)
	}
	if p.Manifest.MediaType != "" && p.Manifest.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("pull %s: media type %s is not an OCI image manifest", where, p.Manifest.MediaType)
	}
	p.Descriptor.MediaType = ocispec.MediaTypeImageManifest
	p.Descriptor.ArtifactType = p.Manifest.ArtifactType
	if err := p.pullConfig(ctx, repo, where); err != nil {
		return nil, err
	}
	if err := p.pullLayers(ctx, repo, where); err != nil {
		return nil, err
	}
	if p.ComponentsTitle = ComponentsLayer(p.Manifest, p.Config); p.ComponentsTitle != "" {
		p.YAML = p.Files[p.ComponentsTitle]
	}
	return p, nil
}

// resolveManifest resolves ref to a manifest descriptor within the size
// limit; a digest ref must resolve to itself.
func resolveManifest(ctx context.Context, repo Repository, ref string) (ocispec.Descriptor, error) {
	where := repo.Name() + refSep(ref) + ref
	desc, err := repo.Resolve(ctx, ref)
	if err != nil {
		return desc, fmt.Errorf("pull %s: %w", where, err)
	}
	if d, derr := digest.Parse(ref); derr == nil && desc.Digest != d {
		return desc, fmt.Errorf("pull %s: the repository resolved it to %s: %w", where, desc.Digest, ErrTampered)
	}
	switch desc.MediaType {
	case ocispec.MediaTypeImageManifest, "application/octet-stream", "":
	default:
		return desc, fmt.Errorf("pull %s: media type %s is not an OCI image manifest; a pinseal artifact is one manifest per release", where, desc.MediaType)
	}
	if desc.Size > MaxManifestSize {
		return desc, fmt.Errorf("pull %s: manifest of %d bytes exceeds the %d byte limit", where, desc.Size, MaxManifestSize)
	}
	return desc, nil
}

// pullConfig fetches the manifest's config, decoding a pinseal one.
func (p *Pulled) pullConfig(ctx context.Context, repo Repository, where string) error {
	cfg := p.Manifest.Config
	if cfg.Size > MaxConfigSize {
		return fmt.Errorf("pull %s: config of %d bytes exceeds the %d byte limit", where, cfg.Size, MaxConfigSize)
	}
	var err error
	if p.ConfigBytes, err = fetch(ctx, repo, cfg); err != nil {
		return fmt.Errorf("pull %s: config %s: %w", where, cfg.Digest, err)
	}
	if cfg.MediaType == ConfigMediaType {
		var c model.ArtifactConfig
		if err := json.Unmarshal(p.ConfigBytes, &c); err != nil {
			return fmt.Errorf("pull %s: config is not a pinseal config: %w", where, err)
		}
		p.Config = &c
	}
	return nil
}

// pullLayers fetches the titled layers into p.Files, within the size
// limits; an untitled layer is counted, not fetched.
func (p *Pulled) pullLayers(ctx context.Context, repo Repository, where string) error {
	var total int64
	for i, l := range p.Manifest.Layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		name := title
		if name == "" {
			name = fmt.Sprintf("#%d", i)
		}
		if l.Size > MaxLayerSize {
			return fmt.Errorf("pull %s: layer %s of %d bytes exceeds the %d byte limit", where, name, l.Size, MaxLayerSize)
		}
		if total += l.Size; total > MaxTotalSize {
			return fmt.Errorf("pull %s: layers exceed %d bytes in total", where, MaxTotalSize)
		}
		if title == "" {
			continue
		}
		if _, dup := p.Files[title]; dup {
			return fmt.Errorf("pull %s: two layers titled %q", where, title)
		}
		b, err := fetch(ctx, repo, l)
		if err != nil {
			return fmt.Errorf("pull %s: layer %s (%s): %w", where, name, l.Digest, err)
		}
		p.Files[title] = b
		switch title {
		case BlobTitle:
			p.Blob = b
		case MetadataTitle:
			p.Metadata = b
		}
	}
	return nil
}

// ComponentsLayer is the title of the layer of m that is the provider's
// components YAML: the one the cluster-api-operator installs for the
// provider cfg describes (current type name first, then the older ones;
// see internal/operator), else, without a pinseal config or when no operator
// finds one, components.yaml or the first "*-components.yaml". "" when
// there is none.
func ComponentsLayer(m ocispec.Manifest, cfg *model.ArtifactConfig) string {
	titles := map[string]bool{}
	var first string
	for _, l := range m.Layers {
		t := l.Annotations[ocispec.AnnotationTitle]
		if t == "" || l.Size == 0 {
			continue
		}
		titles[t] = true
		if first == "" && strings.HasSuffix(t, "-components.yaml") {
			first = t
		}
	}
	if cfg != nil {
		for _, tn := range operator.Types(cfg.Kind) {
			f, _ := operator.Find(titles, operator.Provider{Type: tn.Type, Name: cfg.Name, Version: cfg.Release})
			if f.Components != "" {
				return f.Components
			}
		}
	}
	if titles[YAMLTitle] {
		return YAMLTitle
	}
	return first
}

// fetch reads desc fully and verifies its size and digest.
func fetch(ctx context.Context, repo Repository, desc ocispec.Descriptor) ([]byte, error) {
	b, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) || errors.Is(err, content.ErrInvalidDescriptorSize) {
			return nil, fmt.Errorf("%w: %w", ErrTampered, err)
		}
		return nil, err
	}
	return b, nil
}

func refSep(ref string) string {
	if _, err := digest.Parse(ref); err == nil {
		return "@"
	}
	return ":"
}
