//go:build integration

package relocate_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pinseal/pinseal/internal/app/relocate"
	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/pin"
)

// TestIntegrationRelocatedImagesResolve mirrors the images of two packages
// into a real docker-registry on 127.0.0.1 (small images written with
// go-containerregistry, each at the reference the relocation maps its
// upstream one to), relocates the packages to that registry, and resolves
// every image the relocated YAML and blobs name there.
func TestIntegrationRelocatedImagesResolve(t *testing.T) {
	reg := testpeer.StartRegistry(t)
	root := fixture.CleanCopy(t)
	pkgs := map[string]pin.Relocations{
		"packages/system/capi-providers-core": {{From: "registry.k8s.io/cluster-api", To: reg.Host + "/mirror/capi"}},
		"packages/system/capi-providers-infraprovider": {
			{From: "ghcr.io/ionos-cloud", To: reg.Host + "/mirror/ionos"},
			{From: "quay.io/capk", To: reg.Host + "/mirror/capk"},
		},
	}
	ctx := context.Background()
	// Mirror: what a mirroring script does with `builder images --output list`.
	mirrored := 0
	for dir, rs := range pkgs {
		for _, ref := range componentImages(t, filepath.Join(root, dir)) {
			to, ok := rs.Map(ref)
			if !ok {
				t.Fatalf("%s is under no relocated prefix", ref)
			}
			img, err := random.Image(512, 1)
			if err != nil {
				t.Fatal(err)
			}
			r, err := name.ParseReference(to, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(r, img, remote.WithContext(ctx)); err != nil {
				t.Fatalf("push %s: %v", to, err)
			}
			mirrored++
		}
	}
	// Three images, each named in its YAML and inside its blob.
	if mirrored != 6 {
		t.Fatalf("mirrored %d references, want the fixture's 3 images in YAML and blob", mirrored)
	}
	for dir, rs := range pkgs {
		if _, err := relocate.Package(ctx, filepath.Join(root, dir), relocate.Options{Maps: rs}); err != nil {
			t.Fatal(err)
		}
	}
	resolved := 0
	for dir := range pkgs {
		for _, ref := range componentImages(t, filepath.Join(root, dir)) {
			if !strings.HasPrefix(ref, reg.Host+"/") {
				t.Errorf("%s: %s is not on the mirror", dir, ref)
				continue
			}
			r, err := name.ParseReference(ref, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := remote.Head(r, remote.WithContext(ctx)); err != nil {
				t.Errorf("%s: %s does not resolve on the mirror: %v", dir, ref, err)
				continue
			}
			resolved++
		}
	}
	if resolved != mirrored {
		t.Errorf("resolved %d references, want %d", resolved, mirrored)
	}
	// The check can fail: a reference nobody mirrored does not resolve.
	r, _ := name.ParseReference(reg.Host+"/mirror/capi/not-mirrored:v1", name.Insecure)
	if _, err := remote.Head(r, remote.WithContext(ctx)); err == nil {
		t.Error("an image nobody pushed resolves")
	}
}

// componentImages lists the workload images of every vendored components
// YAML and blob of a package.
func componentImages(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "files", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "metadata") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".gz") {
			if data, err = io.ReadAll(blob.Inflated(data, 1<<26)); err != nil {
				t.Fatal(err)
			}
		}
		found, err := images.Scan(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range found {
			out = append(out, fd.Ref)
		}
	}
	return out
}
