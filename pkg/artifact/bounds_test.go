package artifact

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

func TestImageLimitsCheckLayers(t *testing.T) {
	l := ImageLimits{MaxManifestBytes: 100, MaxLayers: 3, MaxLayerBytes: 10, MaxTotalBytes: 25}
	layer := func(n int64) ocispec.Descriptor { return ocispec.Descriptor{Size: n} }
	for _, tt := range []struct {
		name   string
		layers []ocispec.Descriptor
		want   string // "" = allowed
	}{
		{"within", []ocispec.Descriptor{layer(10), layer(10), layer(5)}, ""},
		{"none", nil, ""},
		{"too many", []ocispec.Descriptor{layer(1), layer(1), layer(1), layer(1)}, "layers 4 exceeds the verifier's limit of 3"},
		{"one too large", []ocispec.Descriptor{layer(1), layer(11)}, "x layer 1: layer bytes 11 exceeds the verifier's limit of 10"},
		{"total", []ocispec.Descriptor{layer(10), layer(10), layer(6)}, "total layer bytes 26 exceeds the verifier's limit of 25"},
		{"negative", []ocispec.Descriptor{layer(-1)}, "negative"},
	} {
		err := l.CheckLayers("x", tt.layers)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an ErrLimit naming %q", tt.name, err, tt.want)
		}
	}
	if err := l.CheckManifest("x", ocispec.Descriptor{Size: 101}); err == nil || !errors.Is(err, ErrLimit) {
		t.Errorf("manifest over the bound: %v", err)
	}
	if err := l.CheckManifest("x", ocispec.Descriptor{Size: 100}); err != nil {
		t.Errorf("manifest at the bound: %v", err)
	}
}

// lyingFetcher serves data whatever the descriptor says.
type lyingFetcher struct{ data []byte }

func (f lyingFetcher) Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(f.data)), nil
}

func TestFetchBounded(t *testing.T) {
	ctx := context.Background()
	good := []byte("hello")
	desc := content.NewDescriptorFromBytes("x", good)
	if b, err := FetchBounded(ctx, lyingFetcher{good}, desc, 5); err != nil || string(b) != "hello" {
		t.Fatalf("within the bound: %q, %v", b, err)
	}
	if _, err := FetchBounded(ctx, lyingFetcher{good}, desc, 4); !errors.Is(err, ErrLimit) {
		t.Fatalf("descriptor over the bound: %v, want ErrLimit", err)
	}
	// A registry that sends more than the descriptor says (a stream
	// without end): refused after size+1 bytes, as tampering.
	if _, err := FetchBounded(ctx, lyingFetcher{bytes.Repeat([]byte("a"), 1<<20)}, desc, 1<<30); !errors.Is(err, ErrTampered) {
		t.Fatalf("longer stream: %v, want ErrTampered", err)
	}
	if _, err := FetchBounded(ctx, lyingFetcher{[]byte("hellO")}, desc, 5); !errors.Is(err, ErrTampered) {
		t.Fatalf("other bytes: %v, want ErrTampered", err)
	}
}

func TestBoundedReader(t *testing.T) {
	b, err := io.ReadAll(BoundedReader(strings.NewReader("12345"), 5, "r"))
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the bound: %q, %v", b, err)
	}
	b, err = io.ReadAll(BoundedReader(strings.NewReader("123456"), 5, "r"))
	if !errors.Is(err, ErrLimit) || len(b) != 5 || !strings.Contains(err.Error(), "r: bytes 6 exceeds the verifier's limit of 5") {
		t.Fatalf("over the bound: %q, %v", b, err)
	}
}
