//go:build integration

package sign

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// cosignEnv keeps cosign offline-friendly: no prompts, the key password.
var cosignEnv = []string{"COSIGN_PASSWORD=pw", "COSIGN_YES=true"}

type peerSetup struct {
	cosign string
	reg    *testpeer.Registry
	repo   artifact.Repository
	rel    artifact.Release
	subj   digest.Digest
	ref    string // REPO@DIGEST
}

func setup(t *testing.T) *peerSetup {
	t.Helper()
	t.Setenv("SOURCE_DATE_EPOCH", "")
	s := &peerSetup{cosign: testpeer.Cosign(t), reg: testpeer.StartRegistry(t)}
	var err error
	s.repo, err = artifact.OpenRegistry(s.reg.Host+"/capi/core-cluster-api", artifact.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	s.rel = release(t, "v1.10.1-core")
	s.subj = push(t, s.repo, s.rel)
	s.ref = s.repo.Name() + "@" + s.subj.String()
	return s
}

func (s *peerSetup) run(t *testing.T, args ...string) testpeer.Result {
	t.Helper()
	return testpeer.Run(t, cosignEnv, s.cosign, args...)
}

// keyFiles writes a key pair with our keygen and loads it back.
func keyFiles(t *testing.T) (*PrivateKey, string) {
	t.Helper()
	keyPath, pubPath, err := WriteKeyPair(filepath.Join(t.TempDir(), "cosign"), []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := LoadPrivateKey(keyPath, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	return k, pubPath
}

// TestIntegrationCosignVerifiesOurs: the upstream cosign CLI accepts our
// signature and our SLSA provenance attestation, and rejects them under
// another key or on another digest.
func TestIntegrationCosignVerifiesOurs(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	key, pub := keyFiles(t)
	if _, err := Sign(ctx, s.repo, s.subj, key, Options{}); err != nil {
		t.Fatal(err)
	}
	stmt, err := ProvenanceStatement(s.repo.Name(), s.subj, s.rel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Attest(ctx, s.repo, s.subj, key, stmt, Options{}); err != nil {
		t.Fatal(err)
	}

	r := s.run(t, "verify", "--key", pub, "--insecure-ignore-tlog", "--allow-insecure-registry", s.ref)
	if r.Err != nil {
		t.Fatalf("cosign verify rejected our signature: %v", r.Err)
	}
	if !strings.Contains(r.Stdout, s.subj.String()) {
		t.Fatalf("cosign verify output lacks the digest: %s", r.Stdout)
	}
	r = s.run(t, "verify-attestation", "--type", "slsaprovenance1", "--key", pub, "--insecure-ignore-tlog", "--allow-insecure-registry", s.ref)
	if r.Err != nil {
		t.Fatalf("cosign verify-attestation rejected our attestation: %v", r.Err)
	}
	if !strings.Contains(r.Stdout, `"payloadType":"application/vnd.in-toto+json"`) {
		t.Fatalf("cosign verify-attestation printed no envelope: %s", r.Stdout)
	}

	// Negative controls: another key; a signature copied to another digest.
	_, otherPub := keyFiles(t)
	if r := s.run(t, "verify", "--key", otherPub, "--insecure-ignore-tlog", "--allow-insecure-registry", s.ref); r.Err == nil {
		t.Fatal("cosign verify accepted our signature under another key")
	}
	other := push(t, s.repo, release(t, "v1.10.2-core"))
	copyTag(t, s.repo, SignatureTag(s.subj), SignatureTag(other))
	if r := s.run(t, "verify", "--key", pub, "--insecure-ignore-tlog", "--allow-insecure-registry", s.repo.Name()+"@"+other.String()); r.Err == nil {
		t.Fatal("cosign verify accepted a signature copied from another digest")
	}
	v, err := Verify(ctx, s.repo, other, []*PublicKey{key.Public()})
	if err != nil || v.Valid || v.Reason != model.WrongDigest {
		t.Fatalf("Verify of the copied signature = %+v, %v", v, err)
	}
}

// TestIntegrationVerifyCosignSigned: keys made by `cosign generate-key-pair`
// load, and what `cosign sign` and `cosign attest` store verifies with ours.
func TestIntegrationVerifyCosignSigned(t *testing.T) {
	s := setup(t)
	ctx := context.Background()
	dir := t.TempDir()
	if r := s.run(t, "generate-key-pair", "--output-key-prefix", filepath.Join(dir, "cosign")); r.Err != nil {
		t.Fatal(r.Err)
	}
	keyPath, pubPath := filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	pub, err := LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := LoadPrivateKey(keyPath, []byte("pw"))
	if err != nil {
		t.Fatalf("a cosign generate-key-pair key does not load: %v", err)
	}
	if !priv.Public().Equal(pub) {
		t.Fatal("cosign.key and cosign.pub load as different keys")
	}

	v, err := Verify(ctx, s.repo, s.subj, []*PublicKey{pub})
	if err != nil || v.Valid || v.Reason != model.NoSignature {
		t.Fatalf("before signing: %+v, %v", v, err)
	}
	if r := s.run(t, "sign", "--key", keyPath, "--tlog-upload=false", "--allow-insecure-registry", s.ref); r.Err != nil {
		t.Fatal(r.Err)
	}
	v, err = Verify(ctx, s.repo, s.subj, []*PublicKey{pub})
	if err != nil || !v.Valid || v.KeyID != pub.ID {
		t.Fatalf("Verify of a cosign signature = %+v, %v", v, err)
	}
	// Our Sign sees cosign's signature as present.
	if res, err := Sign(ctx, s.repo, s.subj, priv, Options{}); err != nil || res.Status != Present {
		t.Fatalf("Sign after cosign sign = %+v, %v", res, err)
	}

	// cosign attest of a predicate whose materials differ from the pins.
	stmt, _ := ProvenanceStatement(s.repo.Name(), s.subj, s.rel)
	var st struct {
		Predicate json.RawMessage `json:"predicate"`
	}
	if err := json.Unmarshal(stmt, &st); err != nil {
		t.Fatal(err)
	}
	pred := strings.Replace(string(st.Predicate), strings.Repeat("1", 64), strings.Repeat("f", 64), 1)
	predPath := filepath.Join(dir, "predicate.json")
	if err := os.WriteFile(predPath, []byte(pred), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := s.run(t, "attest", "--key", keyPath, "--type", "slsaprovenance1", "--predicate", predPath, "--tlog-upload=false", "--allow-insecure-registry", s.ref); r.Err != nil {
		t.Fatal(r.Err)
	}
	av, err := VerifyAttestation(ctx, s.repo, s.subj, []*PublicKey{pub})
	if err != nil || !av.Valid || av.Provenance == nil {
		t.Fatalf("VerifyAttestation of a cosign attestation = %+v, %v", av, err)
	}
	// The provenance says what cosign attested: the first pin's digest
	// changed, the second as pinned.
	want := pinLines([]pin.Source{
		{URL: s.rel.Pins[0].URL, SHA256: strings.Repeat("f", 64)},
		s.rel.Pins[1],
	})
	if got := materials(av.Provenance); !slices.Equal(got, want) || slices.Equal(got, pinLines(s.rel.Pins)) {
		t.Fatalf("materials %q, want %q", got, want)
	}
}

// TestIntegrationUnknownKeyType: a key cosign cannot use is a KeyError
// with reason unknown-key-type, and cosign refuses it too.
func TestIntegrationUnknownKeyType(t *testing.T) {
	s := setup(t)
	dir := t.TempDir()
	// An Ed448 public key (RFC 8410, OID 1.3.101.113): neither Go nor cosign
	// verifies with it.
	ed448 := "-----BEGIN PUBLIC KEY-----\nMEMwBQYDK2VxAzoAX9dEm1m0Yf0s54fsYWrUah2hNCSFpw4fig6nXYDpZ3jt8SR2\nm0bHBhvWeD3x5Q9s0foavq/oJWGA\n-----END PUBLIC KEY-----\n"
	path := filepath.Join(dir, "ed448.pub")
	if err := os.WriteFile(path, []byte(ed448), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPublicKey(path)
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Reason != KeyUnknownType || ke.Path != path {
		t.Fatalf("LoadPublicKey(ed448) = %v, want unknown-key-type naming the file", err)
	}
	if r := s.run(t, "verify", "--key", path, "--insecure-ignore-tlog", "--allow-insecure-registry", s.ref); r.Err == nil {
		t.Fatal("cosign accepted an Ed448 key")
	}
}
