//go:build integration

package ociimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestIntegrationImagePush builds the real static verifier twice, makes the
// image of each, checks the digests are equal, pushes the image to Debian's
// docker-registry on 127.0.0.1 and reads it back by digest.
func TestIntegrationImagePush(t *testing.T) {
	reg := testpeer.StartRegistry(t)
	build := func() string {
		bin := filepath.Join(t.TempDir(), "verifier")
		// The test run's own settings (make test sets CGO_ENABLED=0), so the
		// build cache holds every package and only the link runs; `make
		// image` adds -trimpath for builds on other machines.
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "github.com/pinseal/pinseal/cmd/verifier")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		return bin
	}
	bin1, bin2 := build(), build()
	img1, err := Build(Options{Binary: bin1, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	img2, err := Build(Options{Binary: bin2, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img1.Digest()
	d2, _ := img2.Digest()
	if d1 != d2 {
		t.Fatalf("two builds of the same source: image digests %s and %s", d1, d2)
	}
	ref, err := name.ParseReference(reg.Host+"/pinseal/verifier:test", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img1); err != nil {
		t.Fatal(err)
	}
	byDigest, _ := name.NewDigest(reg.Host+"/pinseal/verifier@"+d1.String(), name.Insecure)
	got, err := remote.Image(byDigest)
	if err != nil {
		t.Fatal(err)
	}
	if gd, _ := got.Digest(); gd != d1 {
		t.Fatalf("pulled %s, pushed %s", gd, d1)
	}
	layers, _ := got.Layers()
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	t.Logf("pushed %s@%s", ref.Context(), d1)
}
