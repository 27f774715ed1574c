package sign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sync/singleflight"

	ggtypes "github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/cosign/v2/pkg/cosign/bundle"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/empty"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"

	"github.com/pinseal/pinseal/pkg/artifact"
)

// Limits is what is read back of a signature or attestation image at
// most (artifact.SignatureLimits): its manifest, layer count, each layer
// and all layers together are checked before any layer is fetched.
var Limits = artifact.SignatureLimits

// SignatureTag is the tag cosign stores the signatures of subject under:
// "sha256-<hex>.sig".
func SignatureTag(subject digest.Digest) string { return tagFor(subject, "sig") }

// AttestationTag is the tag cosign stores the attestations of subject
// under: "sha256-<hex>.att".
func AttestationTag(subject digest.Digest) string { return tagFor(subject, "att") }

func tagFor(d digest.Digest, suffix string) string {
	return d.Algorithm().String() + "-" + d.Encoded() + "." + suffix
}

// stored is one layer of a signature or attestation image.
type stored struct {
	// raw keeps the layer's annotations only, so that writing it back
	// reproduces the layer exactly.
	raw oci.Signature
	// full also carries the parsed certificate, chain, bundle and
	// timestamp, for verification.
	full oci.Signature
	// err is set when the layer is unusable (missing signature annotation,
	// unparsable bundle); such layers are kept when writing back.
	err error
}

// readStored reads every layer of the image tagged tag in repo (see
// eachStored).
func readStored(ctx context.Context, repo artifact.Repository, tag string) ([]stored, error) {
	var out []stored
	err := eachStored(ctx, repo, tag, func(_ int, s stored) { out = append(out, s) })
	return out, err
}

// eachStored reads the image tagged tag in repo and calls fn with each of
// its layers in order, one at a time (a verifier keeps only its verdict,
// so one layer is in memory at a time). A missing tag is no layers and no
// error. An image over Limits is an error wrapping a *artifact.LimitError,
// returned before any layer is fetched.
func eachStored(ctx context.Context, repo artifact.Repository, tag string, fn func(i int, s stored)) error {
	where := repo.Name() + ":" + tag
	desc, err := repo.Resolve(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up %s: %w", where, err)
	}
	if err := Limits.CheckManifest(where, desc); err != nil {
		return err
	}
	raw, err := artifact.FetchBounded(ctx, repo, desc, Limits.MaxManifestBytes)
	if err != nil {
		return fmt.Errorf("read %s: %w", where, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: not an image manifest: %w", where, err)
	}
	if err := Limits.CheckLayers(where, m.Layers); err != nil {
		return err
	}
	for i, l := range m.Layers {
		payload, err := artifact.FetchBounded(ctx, repo, l, Limits.MaxLayerBytes)
		if err != nil {
			return fmt.Errorf("read %s layer %d (%s): %w", where, i, l.Digest, err)
		}
		fn(i, newStored(payload, l))
	}
	return nil
}

func newStored(payload []byte, l ocispec.Descriptor) stored {
	ann := make(map[string]string, len(l.Annotations))
	for k, v := range l.Annotations {
		ann[k] = v
	}
	b64 := ann[static.SignatureAnnotationKey]
	mt := static.WithLayerMediaType(ggtypes.MediaType(l.MediaType))
	raw, _ := static.NewSignature(payload, b64, mt, static.WithAnnotations(copyMap(ann)))
	s := stored{raw: raw}

	opts := []static.Option{mt, static.WithAnnotations(copyMap(ann))}
	if cert, ok := ann[static.CertificateAnnotationKey]; ok && cert != "" {
		opts = append(opts, static.WithCertChain([]byte(cert), []byte(ann[static.ChainAnnotationKey])))
	}
	if b, ok := ann[static.BundleAnnotationKey]; ok && b != "" {
		var rb bundle.RekorBundle
		if err := json.Unmarshal([]byte(b), &rb); err != nil {
			s.err = fmt.Errorf("bundle annotation: %w", err)
		} else {
			opts = append(opts, static.WithBundle(&rb))
		}
	}
	if ts, ok := ann[static.RFC3161TimestampAnnotationKey]; ok && ts != "" {
		var t bundle.RFC3161Timestamp
		if err := json.Unmarshal([]byte(ts), &t); err != nil {
			s.err = fmt.Errorf("timestamp annotation: %w", err)
		} else {
			opts = append(opts, static.WithRFC3161Timestamp(&t))
		}
	}
	full, err := static.NewSignature(payload, b64, opts...)
	if err != nil && s.err == nil {
		s.err = err
	}
	s.full = full
	return s
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// writeStored writes an image of layers (existing ones first, in order)
// under tag, exactly as cosign builds it: blobs first, the manifest with
// the tag last.
func writeStored(ctx context.Context, repo artifact.Repository, tag string, layers []oci.Signature) (ocispec.Descriptor, error) {
	img, err := mutate.AppendSignatures(empty.Signatures(), false, layers...)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	mt, err := img.MediaType()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return ocispec.Descriptor{}, err
	}
	where := repo.Name() + ":" + tag
	if err := pushBlob(ctx, repo, m.Config, cfg); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("write %s: config: %w", where, err)
	}
	for i, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		if err := pushBlob(ctx, repo, m.Layers[i], b); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("write %s: layer %d: %w", where, i, err)
		}
	}
	desc := content.NewDescriptorFromBytes(string(mt), manifest)
	if rp, ok := repo.(registry.ReferencePusher); ok {
		if err := rp.PushReference(ctx, desc, bytes.NewReader(manifest), tag); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("write %s: %w", where, err)
		}
		return desc, nil
	}
	if err := pushBlob(ctx, repo, desc, manifest); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("write %s: manifest: %w", where, err)
	}
	if err := repo.Tag(ctx, desc, tag); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("write %s: tag: %w", where, err)
	}
	return desc, nil
}

// blobPushes joins concurrent pushes of one blob into one repository:
// signing and attesting run at once and both store the empty config blob,
// and two uploads of the same blob racing in docker-registry can leave the
// second manifest referring to a blob the registry says it does not know.
var blobPushes singleflight.Group

// pushBlob stores data as desc in repo unless it is there already; pushes
// of the same blob to the same repository at the same time are made once.
func pushBlob(ctx context.Context, repo artifact.Repository, desc ocispec.Descriptor, data []byte) error {
	_, err, _ := blobPushes.Do(repo.Name()+"@"+desc.Digest.String(), func() (any, error) {
		return nil, artifact.PushIfAbsent(ctx, repo, desc, data)
	})
	return err
}
