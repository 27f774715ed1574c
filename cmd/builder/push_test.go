package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/sign"
)

func writePushTestPkg(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(buildTestYAML))
	w.Close()
	files := map[string][]byte{
		"pin.yaml": []byte(`providers:
- kind: CoreProvider
  name: cluster-api
  version: v1.10.1
  release: v1.10.1-core
  sources:
  - url: https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml
    sha256: aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0aa0a
    to: files/core-components.yaml
  blob: files/components.gz
`),
		"files/core-components.yaml": []byte(buildTestYAML),
		"files/components.gz":        gz.Bytes(),
		"files/metadata.yaml":        []byte("releaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n"),
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testKeys writes a release key pair with the password "pw", which it
// also sets in the environment for the commands that read it, and returns
// the pair's path prefix (PREFIX.key, PREFIX.pub).
func testKeys(t *testing.T) string {
	t.Helper()
	t.Setenv(sign.PasswordEnv, "pw")
	keys := filepath.Join(t.TempDir(), "k")
	if _, stderr, err := runBuildTestCmd(t, "keygen", "--output-key-prefix", keys); err != nil {
		t.Fatalf("keygen: %v\n%s", err, stderr)
	}
	return keys
}

func TestPushCommand(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SOURCE_DATE_EPOCH", "")
	keys := testKeys(t)
	pkg := writePushTestPkg(t)
	out := t.TempDir()

	stdout, stderr, err := runBuildTestCmd(t, "push", pkg, "--to", "oci-layout:"+out, "--key", keys+".key")
	if err != nil {
		t.Fatalf("push: %v\n%s", err, stderr)
	}
	for _, want := range []string{"pushed ", "core-cluster-api@sha256:", "signature   signed", "provenance  signed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("push output lacks %q:\n%s", want, stdout)
		}
	}
	repo, err := artifact.OpenLayout(filepath.Join(out, "core-cluster-api"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := repo.Resolve(ctx, "v1.10.1-core")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sign.LoadPublicKey(keys + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := sign.Verify(ctx, repo, desc.Digest, []*sign.PublicKey{pub}); err != nil || !v.Valid {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	av, err := sign.VerifyAttestation(ctx, repo, desc.Digest, []*sign.PublicKey{pub})
	if err != nil || !av.Valid || len(av.Provenance.Dependencies) != 1 {
		t.Fatalf("VerifyAttestation = %+v, %v", av, err)
	}

	stdout, _, err = runBuildTestCmd(t, "push", pkg, "--to", "oci-layout:"+out, "--key", keys+".key")
	if err != nil || !strings.Contains(stdout, "unchanged") || !strings.Contains(stdout, "signature   present") {
		t.Fatalf("second push: %v\n%s", err, stdout)
	}

	// A wrong password fails and tags nothing.
	t.Setenv(sign.PasswordEnv, "wrong")
	other := t.TempDir()
	_, _, err = runBuildTestCmd(t, "push", pkg, "--to", "oci-layout:"+other, "--key", keys+".key")
	if err == nil || !strings.Contains(err.Error(), "wrong-password") {
		t.Fatalf("push with a wrong password: %v", err)
	}
	repo2, _ := artifact.OpenLayout(filepath.Join(other, "core-cluster-api"))
	if _, err := repo2.Resolve(ctx, "v1.10.1-core"); !errors.Is(err, errdef.ErrNotFound) {
		t.Fatalf("a push with a wrong password tagged the release: %v", err)
	}
}

func TestPushUsage(t *testing.T) {
	for _, args := range [][]string{
		{"push", "."},
		{"push", ".", "--to", "https://ghcr.io/x"},
		{"push", ".", "--to", "oci-layout:x", "--tlog"},
		{"keygen", "extra"},
		{"push", ".", "--to", "oci-layout:x", "--key", "no-such.key"},
		{"push", ".", "--to", "oci-layout:x", "--key", "."},
	} {
		_, _, err := runBuildTestCmd(t, args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error (exit 2)", args, err)
		}
	}
}

// TestPushGate: with no pin file, a provider whose offline checks are red
// is refused and gets no tag (in an OCI layout here); a policy that waives
// the finding lets it through; a bad --policy is a usage error.
func TestPushGate(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	core := fixture.AsItStandsCore
	out := t.TempDir()
	stdout, _, err := runBuildTestCmd(t, "push", core, "--to", "oci-layout:"+out)
	if err == nil || !strings.Contains(stdout, "refused") || !strings.Contains(stdout, "blob-yaml") || !strings.Contains(stdout, "fix: ") {
		t.Fatalf("drifted core: %v\n%s", err, stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "core-cluster-api")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused release left a repository behind: %v", err)
	}

	pol := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(pol, []byte(`apiVersion: pinseal/v1
kind: Policy
waivers:
- package: packages/system/*
  check: blob-yaml
  reason: the YAML edit is reviewed; the blob is rebuilt next release
  expires: "2099-12-31"
`), 0o644)
	stdout, stderr, err := runBuildTestCmd(t, "push", core, "--to", "oci-layout:"+out, "--policy", pol)
	if err != nil || !strings.Contains(stdout, "pushed ") {
		t.Fatalf("waived: %v\n%s\n%s", err, stdout, stderr)
	}
	repo, err := artifact.OpenLayout(filepath.Join(out, "core-cluster-api"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Resolve(ctx, "v1.10.1-core"); err != nil {
		t.Fatal(err)
	}
	var ue usageError
	if _, _, err := runBuildTestCmd(t, "push", core, "--to", "oci-layout:"+out, "--policy", filepath.Join(root, "nope.yaml")); !errors.As(err, &ue) {
		t.Fatalf("missing --policy: %v", err)
	}
}
