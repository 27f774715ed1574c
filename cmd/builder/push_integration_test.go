//go:build integration

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
)

// TestIntegrationBuilderPushCosignOras: `builder keygen` + `builder push
// --plain-http --key --signature-format legacy` to Debian's
// docker-registry; the upstream cosign v2 CLI
// verifies the signature and the SLSA provenance, the upstream oras CLI
// pulls the three titled files byte-identical to the package's, and a
// second push changes nothing.
func TestIntegrationBuilderPushCosignOras(t *testing.T) {
	cosign, oras := testpeer.Cosign(t), testpeer.Oras(t)
	reg := testpeer.StartRegistry(t)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	keys := testKeys(t)
	pkg := writePushTestPkg(t)
	to := reg.Host + "/capi"
	stdout, stderr, err := runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key", "--signature-format", "legacy")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	fields := strings.Fields(stdout)
	if len(fields) < 2 || fields[0] != "pushed" || !strings.HasPrefix(fields[1], to+"/core-cluster-api@sha256:") {
		t.Fatalf("push output:\n%s", stdout)
	}
	ref := fields[1]

	env := []string{"COSIGN_PASSWORD=pw"}
	if r := testpeer.Run(t, env, cosign, "verify", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-insecure-registry", ref); r.Err != nil {
		t.Fatalf("cosign verify rejects builder push's signature: %v", r.Err)
	}
	if r := testpeer.Run(t, env, cosign, "verify-attestation", "--type", "slsaprovenance1", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-insecure-registry", ref); r.Err != nil {
		t.Fatalf("cosign verify-attestation rejects builder push's provenance: %v", r.Err)
	}

	out := t.TempDir()
	if r := testpeer.Run(t, nil, oras, "pull", "--plain-http", "-o", out, to+"/core-cluster-api:v1.10.1-core"); r.Err != nil {
		t.Fatal(r.Err)
	}
	for name, from := range map[string]string{
		"components.gz":   "files/components.gz",
		"metadata.yaml":   "files/metadata.yaml",
		"components.yaml": "files/core-components.yaml",
	} {
		got, err := os.ReadFile(filepath.Join(out, name))
		want, _ := os.ReadFile(filepath.Join(pkg, from))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("oras pulled %s (%v) that differs from the package's %s", name, err, from)
		}
	}

	stdout, _, err = runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key", "--signature-format", "legacy")
	if err != nil || !strings.Contains(stdout, "unchanged   "+ref) || !strings.Contains(stdout, "signature   present") || !strings.Contains(stdout, "provenance  present") {
		t.Fatalf("second push: %v\n%s", err, stdout)
	}
}

// TestIntegrationBuilderPushBundleCosign3: `builder push --key` writes
// Sigstore bundles as referrers by default; the upstream cosign v3.1.3 CLI
// verifies the signature and the SLSA provenance, on Debian's
// docker-registry (referrers tag schema) and on a registry with the
// referrers API; pushing again adds no referrer.
func TestIntegrationBuilderPushBundleCosign3(t *testing.T) {
	cosign3 := testpeer.Cosign3(t)
	for kind, start := range map[string]func(testing.TB) *testpeer.Registry{
		"docker-registry": testpeer.StartRegistry,
		"referrers-api":   testpeer.StartReferrersRegistry,
	} {
		t.Run(kind, func(t *testing.T) {
			reg := start(t)
			t.Setenv("SOURCE_DATE_EPOCH", "")
			t.Setenv("DOCKER_CONFIG", t.TempDir())
			keys := testKeys(t)
			pkg := writePushTestPkg(t)
			to := reg.Host + "/capi"
			stdout, stderr, err := runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key")
			if err != nil || !strings.Contains(stdout, "signature   signed   Sigstore bundle") || !strings.Contains(stdout, "provenance  signed   Sigstore bundle") {
				t.Fatalf("push: %v\n%s%s", err, stdout, stderr)
			}
			ref := strings.Fields(stdout)[1]

			if r := testpeer.Run(t, nil, cosign3, "verify", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-http-registry", ref); r.Err != nil {
				t.Fatalf("cosign v3 verify rejects builder push's bundle: %v", r.Err)
			}
			if r := testpeer.Run(t, nil, cosign3, "verify-attestation", "--type", "slsaprovenance1", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-http-registry", ref); r.Err != nil {
				t.Fatalf("cosign v3 verify-attestation rejects builder push's provenance bundle: %v", r.Err)
			}
			// Mutation check: another key is refused by cosign too.
			other := testKeys(t)
			if r := testpeer.Run(t, nil, cosign3, "verify", "--key", other+".pub", "--insecure-ignore-tlog", "--allow-http-registry", ref); r.Err == nil {
				t.Fatal("cosign v3 verify accepts builder push's bundle under another key")
			}

			stdout, _, err = runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key")
			if err != nil || !strings.Contains(stdout, "signature   present") || !strings.Contains(stdout, "provenance  present") {
				t.Fatalf("second push: %v\n%s", err, stdout)
			}
			repo, subject, err := artifact.OpenReference(ref, artifact.Options{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			refs, _, err := artifact.Referrers(t.Context(), repo, ocispec.Descriptor{Digest: digest.Digest(subject)})
			if err != nil || len(refs) != 2 {
				t.Fatalf("referrers after two pushes: %d, %v; want 2 (no pile-up)", len(refs), err)
			}
		})
	}
}

// TestIntegrationBuilderPushLegacyCosign2: `builder push --key
// --signature-format legacy` on both kinds of registry; cosign v2.6.5
// verifies the signature and the SLSA provenance.
func TestIntegrationBuilderPushLegacyCosign2(t *testing.T) {
	cosign := testpeer.Cosign(t)
	for kind, start := range map[string]func(testing.TB) *testpeer.Registry{
		"docker-registry": testpeer.StartRegistry,
		"referrers-api":   testpeer.StartReferrersRegistry,
	} {
		t.Run(kind, func(t *testing.T) {
			reg := start(t)
			t.Setenv("SOURCE_DATE_EPOCH", "")
			t.Setenv("DOCKER_CONFIG", t.TempDir())
			keys := testKeys(t)
			stdout, stderr, err := runBuildTestCmd(t, "push", writePushTestPkg(t), "--to", reg.Host+"/capi", "--plain-http", "--key", keys+".key", "--signature-format", "legacy")
			if err != nil || !strings.Contains(stdout, ".sig") {
				t.Fatalf("push: %v\n%s%s", err, stdout, stderr)
			}
			ref := strings.Fields(stdout)[1]
			if r := testpeer.Run(t, nil, cosign, "verify", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-insecure-registry", ref); r.Err != nil {
				t.Fatalf("cosign v2 verify rejects builder push's legacy signature: %v", r.Err)
			}
			if r := testpeer.Run(t, nil, cosign, "verify-attestation", "--type", "slsaprovenance1", "--key", keys+".pub", "--insecure-ignore-tlog", "--allow-insecure-registry", ref); r.Err != nil {
				t.Fatalf("cosign v2 verify-attestation rejects builder push's legacy provenance: %v", r.Err)
			}
		})
	}
}
