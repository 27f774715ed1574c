//go:build integration

package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/sign/signtest"
)

// offlineSigningConfig is a Sigstore signing config that names no CA, no
// transparency log and no timestamp authority: cosign v3 then signs with
// the key alone, without the network.
const offlineSigningConfig = `{"mediaType":"application/vnd.dev.sigstore.signingconfig.v0.2+json","caUrls":[],"oidcUrls":[],"rekorTlogUrls":[],"tsaUrls":[],"rekorTlogConfig":{"selector":"ANY"},"tsaConfig":{"selector":"ANY"}}`

// registries starts the two kinds of registry the bundle tests run on.
var registries = map[string]func(testing.TB) *testpeer.Registry{
	"docker-registry": testpeer.StartRegistry,          // Debian's 2.8: no referrers API, tag schema
	"referrers-api":   testpeer.StartReferrersRegistry, // go-containerregistry with the referrers API
}

var wantSource = map[string]artifact.ReferrersSource{
	"docker-registry": artifact.ReferrersTagSchema,
	"referrers-api":   artifact.ReferrersAPI,
}

// predicateFile writes the SLSA provenance predicate `builder push` would
// attest for r, for `cosign attest --predicate`.
func predicateFile(t *testing.T, dir string, r remotetest.Release) string {
	t.Helper()
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
	p := filepath.Join(dir, r.RepositoryName()+"-"+r.Release.Release+".predicate.json")
	if err := os.WriteFile(p, st.Predicate, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// variant pushes (unsigned) a copy of r under another release: another
// digest in the same repository.
func variant(t *testing.T, prefix artifact.Prefix, r remotetest.Release, suffix string) remotetest.Release {
	t.Helper()
	rel := r.Release
	rel.Release += suffix
	return remotetest.Push(t, prefix, rel)
}

// verifyJSON runs `verifier verify` with --output json and returns the
// exit code and the findings of check.
func verifyJSON(t *testing.T, check string, args ...string) (int, []map[string]any, string) {
	t.Helper()
	out, code, _ := runVerifier(t, append(append([]string{"verify"}, args...), "--plain-http", "--output", "json")...)
	var rep struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verifier verify %v: not a JSON report (exit %d): %v\n%s", args, code, err, out)
	}
	var fs []map[string]any
	for _, f := range rep.Findings {
		if f["check"] == check {
			fs = append(fs, f)
		}
	}
	return code, fs, out
}

// TestIntegrationCosign3Bundles: releases pushed unsigned, then signed and
// attested by the upstream cosign v3.1.3 CLI (Sigstore bundles attached as
// referrers, signing config without a log) pass `verifier verify --key`
// and `verifier check --registry`, on Debian's docker-registry (referrers
// tag schema) and on a registry with the referrers API. A tampered bundle,
// another key, a bundle for another digest and a keyless signature by
// another identity each give their finding.
func TestIntegrationCosign3Bundles(t *testing.T) {
	cosign3 := testpeer.Cosign3(t)
	for kind, start := range registries {
		t.Run(kind, func(t *testing.T) {
			reg := start(t)
			t.Setenv("DOCKER_CONFIG", t.TempDir())
			dir := t.TempDir()
			env := []string{"COSIGN_PASSWORD=pw"}
			run := func(args ...string) {
				t.Helper()
				if r := testpeer.Run(t, env, cosign3, args...); r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			sc := filepath.Join(dir, "signing-config.json")
			if err := os.WriteFile(sc, []byte(offlineSigningConfig), 0o644); err != nil {
				t.Fatal(err)
			}
			run("generate-key-pair", "--output-key-prefix", filepath.Join(dir, "cosign"))
			key, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
			offline := []string{"--key", key, "--signing-config", sc, "--allow-http-registry", "-y"}

			prefix, err := artifact.ParsePrefix(reg.Host + "/capi")
			if err != nil {
				t.Fatal(err)
			}
			root := remotetest.CopyExamples(t)
			rels := remotetest.Publish(t, root, prefix, remotetest.Steps{})
			for _, r := range rels {
				run(append(append([]string{"sign"}, offline...), r.Pinned())...)
				run(append(append([]string{"attest"}, offline...), "--type", "slsaprovenance1", "--predicate", predicateFile(t, dir, r), r.Pinned())...)
			}
			core := rels["v1.10.1-core"]

			// cosign v3 wrote bundles, found through the expected path.
			pk, err := sign.LoadPublicKey(pub)
			if err != nil {
				t.Fatal(err)
			}
			v, err := sign.Verify(t.Context(), core.Repo, core.Digest, []*sign.PublicKey{pk})
			if err != nil || !v.Valid || !strings.Contains(v.Form, "Sigstore bundle v0.3 (DSSE)") || !strings.Contains(v.Form, string(wantSource[kind])) {
				t.Fatalf("cosign v3's signature: %+v, %v; want a valid bundle via %s", v, err, wantSource[kind])
			}

			passesWithKey(t, core, root, prefix, pub)

			// Another key.
			run("generate-key-pair", "--output-key-prefix", filepath.Join(dir, "other"))
			code, fs, out := verifyJSON(t, "signature", core.Ref(), "--key", filepath.Join(dir, "other.pub"))
			if code != 1 || len(fs) != 1 || !strings.Contains(fs[0]["message"].(string), "none of the trusted keys") || !strings.Contains(fs[0]["detail"].(string), "Sigstore bundle") {
				t.Fatalf("verify under another key: exit %d\n%s", code, out)
			}

			// A bundle of cosign v3 for x, tampered, attached to x; the
			// same bundle untampered attached to y (another digest).
			x, y := variant(t, prefix, core, "-x"), variant(t, prefix, core, "-y")
			bx := filepath.Join(dir, "x.bundle.json")
			run(append(append([]string{"sign"}, offline...), "--upload=false", "--bundle", bx, x.Pinned())...)
			good, err := os.ReadFile(bx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sign.AttachBundle(t.Context(), x.Repo, x.Digest, tamper(t, good), sign.SignPredicateType); err != nil {
				t.Fatal(err)
			}
			code, fs, out = verifyJSON(t, "signature", x.Ref(), "--key", pub)
			if code != 1 || len(fs) != 1 || !strings.Contains(fs[0]["message"].(string), "bad-signature") || !strings.Contains(fs[0]["message"].(string), "Sigstore bundle v0.3") {
				t.Fatalf("verify of a tampered bundle: exit %d\n%s", code, out)
			}
			if _, err := sign.AttachBundle(t.Context(), y.Repo, y.Digest, good, sign.SignPredicateType); err != nil {
				t.Fatal(err)
			}
			code, fs, out = verifyJSON(t, "signature", y.Ref(), "--key", pub)
			if code != 1 || len(fs) != 1 || !strings.Contains(fs[0]["message"].(string), "for another digest") {
				t.Fatalf("verify of a bundle for another digest: exit %d\n%s", code, out)
			}

			// Keyless (virtual Sigstore): passes a policy naming the
			// identity, fails one naming another subject.
			z := variant(t, prefix, core, "-z")
			ks := signtest.NewKeyless(t)
			trustedRoot := ks.TrustedRoot(t)
			stmtSig, _ := json.Marshal(map[string]any{
				"_type": sign.StatementType, "predicateType": sign.SignPredicateType, "predicate": map[string]any{},
				"subject": []map[string]any{{"digest": map[string]string{"sha256": z.Digest.Encoded()}}},
			})
			stmtProv, err := sign.ProvenanceStatement(z.Repo.Name(), z.Digest, z.Release)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sign.AttachBundle(t.Context(), z.Repo, z.Digest, ks.Bundle(t, signtest.GitHubIdentity, signtest.GitHubIssuer, stmtSig, signtest.Opts{Timestamp: true}), sign.SignPredicateType); err != nil {
				t.Fatal(err)
			}
			if _, err := sign.AttachBundle(t.Context(), z.Repo, z.Digest, ks.Bundle(t, signtest.GitHubIdentity, signtest.GitHubIssuer, stmtProv, signtest.Opts{Timestamp: true}), sign.PredicateSLSAProvenance); err != nil {
				t.Fatal(err)
			}
			pass := keylessPolicy(t, trustedRoot, signtest.GitHubIdentity)
			out, code, err = runVerifier(t, "verify", z.Ref(), "--policy", pass, "--plain-http")
			if code != 0 || !strings.Contains(out, "PASSED") {
				t.Fatalf("keyless under a policy naming its identity: exit %d (%v)\n%s", code, err, out)
			}
			fail := keylessPolicy(t, trustedRoot, "https://github.com/acme/other/.github/workflows/release.yml@refs/heads/main")
			code, fs, out = verifyJSON(t, "signature", z.Ref(), "--policy", fail)
			if code != 1 || len(fs) != 1 || !strings.Contains(fs[0]["message"].(string), "wrong-identity") {
				t.Fatalf("keyless under a policy naming another subject: exit %d\n%s", code, out)
			}
		})
	}
}

// keylessPolicy writes a policy that trusts one GitHub Actions identity
// under trustedRoot.
func keylessPolicy(t *testing.T, trustedRoot, subject string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	doc := "apiVersion: pinseal/v1\nkind: Policy\nidentities:\n- issuer: " + signtest.GitHubIssuer + "\n  subject: " + subject +
		"\ntrustedRoot: " + trustedRoot + "\nbuilders:\n- https://github.com/pinseal/pinseal/cmd/builder\n"
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tamper changes the statement inside a bundle's DSSE envelope, keeping
// the signature.
func tamper(t *testing.T, bundleJSON []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(bundleJSON, &m); err != nil {
		t.Fatal(err)
	}
	env, ok := m["dsseEnvelope"].(map[string]any)
	if !ok {
		t.Fatalf("cosign's bundle has no DSSE envelope:\n%s", bundleJSON)
	}
	payload, err := base64.StdEncoding.DecodeString(env["payload"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	st["predicate"] = map[string]any{"tampered": true}
	b, _ := json.Marshal(st)
	env["payload"] = base64.StdEncoding.EncodeToString(b)
	out, _ := json.Marshal(m)
	return out
}

// TestIntegrationCosign2BothRegistries: cosign v2.6.5 (legacy .sig/.att
// images) signs and attests releases on both kinds of registry, and
// `verifier verify` accepts them there too.
func TestIntegrationCosign2BothRegistries(t *testing.T) {
	cosign := testpeer.Cosign(t)
	for kind, start := range registries {
		t.Run(kind, func(t *testing.T) {
			reg := start(t)
			t.Setenv("DOCKER_CONFIG", t.TempDir())
			dir := t.TempDir()
			env := []string{"COSIGN_PASSWORD=pw", "COSIGN_YES=true"}
			run := func(args ...string) {
				t.Helper()
				if r := testpeer.Run(t, env, cosign, args...); r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			run("generate-key-pair", "--output-key-prefix", filepath.Join(dir, "cosign"))
			key, pub := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
			prefix, err := artifact.ParsePrefix(reg.Host + "/capi")
			if err != nil {
				t.Fatal(err)
			}
			rels := remotetest.Publish(t, remotetest.CopyExamples(t), prefix, remotetest.Steps{})
			core := rels["v1.10.1-core"]
			run("sign", "--key", key, "--tlog-upload=false", "--allow-insecure-registry", core.Pinned())
			run("attest", "--key", key, "--type", "slsaprovenance1", "--predicate", predicateFile(t, dir, core), "--tlog-upload=false", "--allow-insecure-registry", core.Pinned())
			out, code, err := runVerifier(t, "verify", core.Ref(), "--key", pub, "--plain-http")
			if code != 0 || !strings.Contains(out, "PASSED") {
				t.Fatalf("verifier verify of cosign v2's legacy signature: exit %d (%v)\n%s", code, err, out)
			}
		})
	}
}
