//go:build integration

package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// TestIntegrationRelocatePushVerify: the core package relocated to a
// mirror on a real docker-registry, its image mirrored there (written with
// go-containerregistry), then pushed: the provenance lists the mirror's
// reference as an image dependency, that reference resolves on the
// registry, and verifier verify REF passes (the provenance's images are
// the YAML layer's).
func TestIntegrationRelocatePushVerify(t *testing.T) {
	ctx := context.Background()
	reg := testpeer.StartRegistry(t)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	root := fixture.CleanCopy(t)
	core := filepath.Join(root, "packages/system/capi-providers-core")
	mirror := reg.Host + "/mirror/capi"
	if out, _, err := runBuildTestCmd(t, "relocate", core, "--map", "registry.k8s.io/cluster-api="+mirror); err != nil {
		t.Fatalf("relocate: %v\n%s", err, out)
	}
	img := mirror + "/cluster-api-controller:v1.10.1"
	r, err := name.ParseReference(img, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	small, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, small, remote.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}

	keys := testKeys(t)
	stdout, stderr, err := runBuildTestCmd(t, "push", core, "--to", reg.Host+"/capi", "--plain-http", "--key", keys+".key")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	fields := strings.Fields(stdout)
	if len(fields) < 2 || fields[0] != "pushed" {
		t.Fatalf("push output:\n%s", stdout)
	}
	ref := fields[1]
	pub, err := sign.LoadPublicKey(keys + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	regOpts := artifact.Options{PlainHTTP: true}
	repo, err := artifact.OpenRegistry(reg.Host+"/capi/core-cluster-api", regOpts)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := repo.Resolve(ctx, "v1.10.1-core")
	if err != nil {
		t.Fatal(err)
	}
	av, err := sign.VerifyAttestation(ctx, repo, desc.Digest, []*sign.PublicKey{pub})
	if err != nil || !av.Valid || !slices.Equal(av.Provenance.Images, []string{img}) {
		t.Fatalf("provenance images: %+v, %v; want [%s]", av.Provenance, err, img)
	}
	for _, ref := range av.Provenance.Images {
		r, _ := name.ParseReference(ref, name.Insecure)
		if _, err := remote.Head(r, remote.WithContext(ctx)); err != nil {
			t.Errorf("the provenance's image %s does not resolve on the mirror: %v", ref, err)
		}
	}
	rep, _, err := verify.Ref(ctx, ref, verify.RefOptions{Keys: []*sign.PublicKey{pub}, Registry: regOpts})
	if err != nil || !rep.Summary.Passed || len(rep.Findings) != 0 {
		t.Errorf("verifier verify %s: %v %+v", ref, err, rep.Findings)
	}
}
