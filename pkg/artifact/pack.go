package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
)

// DefaultCreated is the creation time stamped on every manifest when
// SOURCE_DATE_EPOCH is not set: a constant, so the digest depends on the
// content only.
const DefaultCreated = "1970-01-01T00:00:00Z"

// Created is the value of the manifest's org.opencontainers.image.created
// annotation: SOURCE_DATE_EPOCH (seconds since the epoch, see
// reproducible-builds.org) in RFC 3339 UTC, else DefaultCreated.
func Created() (string, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || v == "" {
		return DefaultCreated, nil
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil || sec < 0 {
		return "", fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a non-negative number of seconds since 1970-01-01: unset it or set it to e.g. $(git log -1 --format=%%ct)", v)
	}
	return time.Unix(sec, 0).UTC().Format(time.RFC3339), nil
}

// Pack writes the release's config, layers and manifest to pusher (a memory
// store, an OCI layout, a repository) and returns the manifest descriptor.
// The same release packs to the same digest.
func Pack(ctx context.Context, pusher content.Pusher, rel Release) (ocispec.Descriptor, error) {
	if err := rel.Validate(); err != nil {
		return ocispec.Descriptor{}, err
	}
	created, err := Created()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	cfg, err := json.Marshal(rel.Config())
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("encode config of %s: %w", rel, err)
	}
	configDesc := content.NewDescriptorFromBytes(ConfigMediaType, cfg)
	if err := PushIfAbsent(ctx, pusher, configDesc, cfg); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pack %s: config: %w", rel, err)
	}

	layers := []struct {
		mediaType, title string
		data             []byte
	}{
		{BlobMediaType, BlobTitle, rel.Blob},
		{MetadataMediaType, MetadataTitle, rel.Metadata},
		{YAMLMediaType, YAMLTitle, rel.YAML},
	}
	descs := make([]ocispec.Descriptor, 0, len(layers))
	for _, l := range layers {
		d := content.NewDescriptorFromBytes(l.mediaType, l.data)
		d.Annotations = map[string]string{ocispec.AnnotationTitle: l.title}
		if err := PushIfAbsent(ctx, pusher, d, l.data); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("pack %s: layer %s: %w", rel, l.title, err)
		}
		descs = append(descs, d)
	}

	desc, err := oras.PackManifest(ctx, pusher, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{
		Layers:           descs,
		ConfigDescriptor: &configDesc,
		ManifestAnnotations: map[string]string{
			ocispec.AnnotationCreated: created,
			ocispec.AnnotationVersion: rel.Version,
			AnnotationRelease:         rel.Release,
		},
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pack %s: manifest: %w", rel, err)
	}
	return desc, nil
}

// PushIfAbsent pushes data as desc unless the store already has it (when it
// can tell: a content.ReadOnlyStorage), and takes the store's "already
// exists" for success, so a push that lost a race is not an error.
func PushIfAbsent(ctx context.Context, pusher content.Pusher, desc ocispec.Descriptor, data []byte) error {
	if st, ok := pusher.(content.ReadOnlyStorage); ok {
		exists, err := st.Exists(ctx, desc)
		if err != nil {
			return err
		}
		if exists {
			return nil
		}
	}
	if err := pusher.Push(ctx, desc, bytes.NewReader(data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return err
	}
	return nil
}
