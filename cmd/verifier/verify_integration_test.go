//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/sign"
)

// TestIntegrationVerifyCosignSigned: releases pushed to Debian's
// docker-registry and signed and attested by the upstream cosign CLI
// (`cosign sign --key k --tlog-upload=false`, `cosign attest --type
// slsaprovenance1`) are accepted by `verifier verify` and `verifier check
// --registry`; a layer tampered in the registry's storage is not.
func TestIntegrationVerifyCosignSigned(t *testing.T) {
	cosign := testpeer.Cosign(t)
	reg := testpeer.StartRegistry(t)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	env := []string{"COSIGN_PASSWORD=pw", "COSIGN_YES=true"}
	run := func(args ...string) {
		t.Helper()
		if r := testpeer.Run(t, env, cosign, args...); r.Err != nil {
			t.Fatal(r.Err)
		}
	}

	dir := t.TempDir()
	run("generate-key-pair", "--output-key-prefix", filepath.Join(dir, "cosign"))
	keyPath, pubPath := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")

	prefix, err := artifact.ParsePrefix(reg.Host + "/capi")
	if err != nil {
		t.Fatal(err)
	}
	root := remotetest.CopyExamples(t)
	rels := remotetest.Publish(t, root, prefix, remotetest.Steps{})
	for _, r := range rels {
		run("sign", "--key", keyPath, "--tlog-upload=false", "--allow-insecure-registry", r.Pinned())
		// The predicate `builder push` would attest, attested by cosign.
		stmt, err := sign.ProvenanceStatement(r.Repo.Name(), r.Digest, r.Release)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Predicate json.RawMessage `json:"predicate"`
		}
		if err := json.Unmarshal(stmt, &st); err != nil {
			t.Fatal(err)
		}
		pred := filepath.Join(dir, r.RepositoryName()+".predicate.json")
		if err := os.WriteFile(pred, st.Predicate, 0o644); err != nil {
			t.Fatal(err)
		}
		run("attest", "--key", keyPath, "--type", "slsaprovenance1", "--predicate", pred, "--tlog-upload=false", "--allow-insecure-registry", r.Pinned())
	}

	core := rels["v1.10.1-core"]
	passesWithKey(t, core, root, prefix, pubPath)

	// Another key: rejected.
	run("generate-key-pair", "--output-key-prefix", filepath.Join(dir, "other"))
	out, code, _ := runVerifier(t, "verify", core.Ref(), "--key", filepath.Join(dir, "other.pub"), "--plain-http")
	if code != 1 || !strings.Contains(out, "none of the trusted keys") {
		t.Fatalf("verify under another key: exit %d\n%s", code, out)
	}

	// A layer tampered in the registry's storage: a registry-digest finding.
	p, err := artifact.Pull(t.Context(), core.Repo, core.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	var blobDigest string
	for _, l := range p.Manifest.Layers {
		if l.Annotations["org.opencontainers.image.title"] == artifact.BlobTitle {
			blobDigest = l.Digest.String()
		}
	}
	file := reg.BlobPath(blobDigest)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, remotetest.Flip(b), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, _ = runVerifier(t, "verify", core.Ref(), "--key", pubPath, "--plain-http")
	if code != 1 || !strings.Contains(out, "registry-digest") || !strings.Contains(out, "do not match the digests in its manifest") {
		t.Fatalf("verify of a tampered layer: exit %d\n%s", code, out)
	}
}

// passesWithKey: `verifier verify` of rel by tag and by digest, and
// `verifier check --registry` of root, pass with the public key pub.
func passesWithKey(t *testing.T, rel remotetest.Release, root string, prefix artifact.Prefix, pub string) {
	t.Helper()
	for _, ref := range []string{rel.Ref(), rel.Pinned()} {
		out, code, err := runVerifier(t, "verify", ref, "--key", pub, "--plain-http")
		if code != 0 || !strings.Contains(out, "PASSED") {
			t.Fatalf("verifier verify %s: exit %d (%v)\n%s", ref, code, err, out)
		}
	}
	out, code, err := runVerifier(t, "check", root, "--registry", prefix.String(), "--key", pub, "--plain-http")
	if code != 0 {
		t.Fatalf("verifier check --registry: exit %d (%v)\n%s", code, err, out)
	}
}
