package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
)

// TestReferrersBounds: a tag-schema index listing more than MaxReferrers
// referrers is refused, not truncated; a blob larger than its limit is
// refused before it is read.
func TestReferrersBounds(t *testing.T) {
	ctx := context.Background()
	repo, err := OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	subject := digest.FromString("subject")
	build := func(n int) {
		t.Helper()
		var refs []ocispec.Descriptor
		for i := 0; i < n; i++ {
			refs = append(refs, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString(strings.Repeat("r", i+1)), Size: 2})
		}
		b, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex, Manifests: refs})
		d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, b)
		if err := repo.Push(ctx, d, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, d, ReferrersTag(subject)); err != nil {
			t.Fatal(err)
		}
	}
	build(MaxReferrers)
	if refs, src, err := Referrers(ctx, repo, ocispec.Descriptor{Digest: subject}); err != nil || len(refs) != MaxReferrers || src != ReferrersTagSchema {
		t.Fatalf("Referrers at the limit = %d, %q, %v", len(refs), src, err)
	}
	build(MaxReferrers + 1)
	if _, _, err := Referrers(ctx, repo, ocispec.Descriptor{Digest: subject}); !errors.Is(err, ErrTooManyReferrers) {
		t.Fatalf("Referrers over the limit: %v, want ErrTooManyReferrers", err)
	}

	big := bytes.Repeat([]byte("x"), 100)
	d := content.NewDescriptorFromBytes("application/octet-stream", big)
	if err := repo.Push(ctx, d, bytes.NewReader(big)); err != nil {
		t.Fatal(err)
	}
	if _, err := FetchBounded(ctx, repo, d, 99); !errors.Is(err, ErrLimit) {
		t.Fatalf("FetchBounded over the limit: %v", err)
	}
	if b, err := FetchBounded(ctx, repo, d, 100); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("FetchBounded at the limit: %v", err)
	}
}
