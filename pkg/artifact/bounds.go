package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// ImageLimits bound what is read of one small image that rides along an
// artifact — a cosign signature (.sig) or attestation (.att) image, a
// Sigstore bundle or referrer — before any of its layers is fetched. Its
// manifest is untrusted: anyone who can push a tag can make it list many
// layers, or one huge blob many times, so every layer counts, duplicates
// included.
type ImageLimits struct {
	// MaxManifestBytes bounds the image manifest.
	MaxManifestBytes int64
	// MaxLayers bounds the number of layers.
	MaxLayers int
	// MaxLayerBytes bounds one layer.
	MaxLayerBytes int64
	// MaxTotalBytes bounds the sum of the layers' sizes.
	MaxTotalBytes int64
}

// SignatureLimits are the bounds on one signature or attestation image.
// A cosign signature layer is a few hundred bytes and a SLSA provenance
// attestation a few kilobytes; every signing key adds one layer.
var SignatureLimits = ImageLimits{
	MaxManifestBytes: 1 << 20,
	MaxLayers:        64,
	MaxLayerBytes:    1 << 20,
	MaxTotalBytes:    8 << 20,
}

// ErrLimit is wrapped by every *LimitError (errors.Is).
var ErrLimit = errors.New("size limit exceeded")

// LimitError is content refused for exceeding a bound, before it was
// read.
type LimitError struct {
	Where string // what was refused: "REPO:TAG", "REPO:TAG layer 3"
	What  string // "manifest", "layers", "layer bytes", "total layer bytes"
	Got   int64
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: %s %d exceeds the verifier's limit of %d; nothing of it was read", e.Where, e.What, e.Got, e.Limit)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// CheckManifest refuses a manifest descriptor over MaxManifestBytes.
func (l ImageLimits) CheckManifest(where string, desc ocispec.Descriptor) error {
	if l.MaxManifestBytes > 0 && desc.Size > l.MaxManifestBytes {
		return &LimitError{Where: where, What: "manifest bytes", Got: desc.Size, Limit: l.MaxManifestBytes}
	}
	return nil
}

// CheckLayers refuses, before anything is fetched, a layer list over
// MaxLayers, a layer over MaxLayerBytes, or layers over MaxTotalBytes in
// sum (a blob listed twice counts twice). Zero limits are not checked.
func (l ImageLimits) CheckLayers(where string, layers []ocispec.Descriptor) error {
	if l.MaxLayers > 0 && len(layers) > l.MaxLayers {
		return &LimitError{Where: where, What: "layers", Got: int64(len(layers)), Limit: int64(l.MaxLayers)}
	}
	var total int64
	for i, d := range layers {
		if d.Size < 0 {
			return &LimitError{Where: fmt.Sprintf("%s layer %d", where, i), What: "layer bytes (negative)", Got: d.Size, Limit: l.MaxLayerBytes}
		}
		if l.MaxLayerBytes > 0 && d.Size > l.MaxLayerBytes {
			return &LimitError{Where: fmt.Sprintf("%s layer %d", where, i), What: "layer bytes", Got: d.Size, Limit: l.MaxLayerBytes}
		}
		total += d.Size
		if l.MaxTotalBytes > 0 && total > l.MaxTotalBytes {
			return &LimitError{Where: where, What: "total layer bytes", Got: total, Limit: l.MaxTotalBytes}
		}
	}
	return nil
}

// FetchBounded reads desc (at most max bytes, refused before reading
// when its descriptor says more) and verifies its size and digest while
// reading: a registry that sends more or other bytes is an error wrapping
// ErrTampered, and never more than max+1 bytes are read.
func FetchBounded(ctx context.Context, f content.Fetcher, desc ocispec.Descriptor, max int64) ([]byte, error) {
	if desc.Size < 0 {
		return nil, fmt.Errorf("%s: %w: negative size %d in its descriptor", desc.Digest, ErrTampered, desc.Size)
	}
	if max > 0 && desc.Size > max {
		return nil, &LimitError{Where: desc.Digest.String(), What: "bytes", Got: desc.Size, Limit: max}
	}
	rc, err := f.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
	if err != nil {
		if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) || errors.Is(err, content.ErrInvalidDescriptorSize) {
			return nil, fmt.Errorf("%w: %w", ErrTampered, err)
		}
		return nil, err
	}
	return b, nil
}

// BoundedReader reads r until max bytes were read; reading more is an
// error wrapping ErrLimit (not a silent truncation).
func BoundedReader(r io.Reader, max int64, where string) io.Reader {
	return &boundedReader{r: r, left: max, max: max, where: where}
}

type boundedReader struct {
	r         io.Reader
	left, max int64
	where     string
	over      bool
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.over {
		return 0, &LimitError{Where: b.where, What: "bytes", Got: b.max + 1, Limit: b.max}
	}
	if b.left <= 0 {
		// At the bound: one more byte means too much.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.over = true
			return 0, &LimitError{Where: b.where, What: "bytes", Got: b.max + 1, Limit: b.max}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
