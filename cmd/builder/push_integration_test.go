//go:build integration

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testpeer"
	"github.com/pinseal/pinseal/pkg/sign"
)

// TestIntegrationBuilderPushCosignOras: `builder keygen` + `builder push
// --plain-http --key` to Debian's docker-registry; the upstream cosign CLI
// verifies the signature and the SLSA provenance, the upstream oras CLI
// pulls the three titled files byte-identical to the package's, and a
// second push changes nothing.
func TestIntegrationBuilderPushCosignOras(t *testing.T) {
	cosign, oras := testpeer.Cosign(t), testpeer.Oras(t)
	reg := testpeer.StartRegistry(t)
	t.Setenv("SOURCE_DATE_EPOCH", "")
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	t.Setenv(sign.PasswordEnv, "pw")
	keys := filepath.Join(t.TempDir(), "k")
	if _, stderr, err := runBuildTestCmd(t, "keygen", "--output-key-prefix", keys); err != nil {
		t.Fatalf("keygen: %v\n%s", err, stderr)
	}
	pkg := writePushTestPkg(t)
	to := reg.Host + "/capi"
	stdout, stderr, err := runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key")
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

	stdout, _, err = runBuildTestCmd(t, "push", pkg, "--to", to, "--plain-http", "--key", keys+".key")
	if err != nil || !strings.Contains(stdout, "unchanged   "+ref) || !strings.Contains(stdout, "signature   present") || !strings.Contains(stdout, "provenance  present") {
		t.Fatalf("second push: %v\n%s", err, stdout)
	}
}
