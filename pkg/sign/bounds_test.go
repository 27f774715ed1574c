package sign

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
)

// hostileImage stores under tag an image of n layers that all point at
// one blob of size bytes (a 14 KB manifest can name a 16 MiB blob 60
// times).
func hostileImage(t *testing.T, repo artifact.Repository, tag string, n, size int) {
	t.Helper()
	ctx := context.Background()
	blob := bytes.Repeat([]byte{'x'}, size)
	bd := content.NewDescriptorFromBytes("application/vnd.dev.cosign.simplesigning.v1+json", blob)
	bd.Annotations = map[string]string{"dev.cosignproject.cosign/signature": "AAAA"}
	if err := pushBlob(ctx, repo, bd, blob); err != nil {
		t.Fatal(err)
	}
	cfg := []byte("{}")
	cd := content.NewDescriptorFromBytes(ocispec.MediaTypeImageConfig, cfg)
	if err := pushBlob(ctx, repo, cd, cfg); err != nil {
		t.Fatal(err)
	}
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: cd}
	m.SchemaVersion = 2
	for range n {
		m.Layers = append(m.Layers, bd)
	}
	raw, _ := json.Marshal(m)
	md := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, raw)
	if err := pushBlob(ctx, repo, md, raw); err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, md, tag); err != nil {
		t.Fatal(err)
	}
}

// allocated is how many bytes fn allocated on the heap (cumulative, so a
// peak that was freed again still counts).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestVerifyBoundsSignatureImages: a signature or attestation image over
// the bounds is a too-large verdict naming the bound, decided from its
// manifest alone: verifying it allocates a few hundred kilobytes, not the
// ~1 GiB that reading 60 layers of 16 MiB took.
func TestVerifyBoundsSignatureImages(t *testing.T) {
	key := testKey(t)
	for _, tt := range []struct {
		name     string
		n, size  int
		wantText string
	}{
		{"60 layers of one 16 MiB blob", 60, 16 << 20, "layer bytes 16777216 exceeds the verifier's limit of 1048576"},
		{"60 layers of 512 KiB", 60, 512 << 10, "total layer bytes"},
		{"too many layers", Limits.MaxLayers + 1, 300, "layers 65 exceeds the verifier's limit of 64"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo, err := artifact.OpenLayout(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			subject := push(t, repo, release(t, "v1.10.1-core"))
			hostileImage(t, repo, SignatureTag(subject), tt.n, tt.size)
			hostileImage(t, repo, AttestationTag(subject), tt.n, tt.size)
			var v *Verification
			var av *AttestationVerification
			used := allocated(func() {
				if v, err = Verify(context.Background(), repo, subject, []*PublicKey{key.Public()}); err != nil {
					t.Fatal(err)
				}
				if av, err = VerifyAttestation(context.Background(), repo, subject, []*PublicKey{key.Public()}); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("allocated %d KiB", used>>10)
			for _, got := range []*Verification{v, &av.Verification} {
				if got.Valid || got.Reason != model.TooLarge || !strings.Contains(got.Message, tt.wantText) {
					t.Fatalf("verdict %s: %s, want %s naming %q", got.Reason, got.Message, model.TooLarge, tt.wantText)
				}
			}
			if used > 4<<20 {
				t.Fatalf("verifying allocated %d MiB; the bounds must refuse the image from its manifest", used>>20)
			}
		})
	}
}
