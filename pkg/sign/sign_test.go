package sign

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/opencontainers/go-digest"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/signature/payload"
	"oras.land/oras-go/v2/content"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

const yamlDoc = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n"

func release(t testing.TB, rel string) artifact.Release {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	io.WriteString(w, yamlDoc)
	w.Close()
	return artifact.Release{
		ArtifactConfig: model.ArtifactConfig{
			Kind:     "CoreProvider",
			Name:     "cluster-api",
			Release:  rel,
			Version:  "v1.10.1",
			Contract: "v1beta1",
			Type:     "core",
			Pins: []pin.Source{
				{URL: "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml", SHA256: strings.Repeat("1", 64), To: "files/core-components.yaml"},
				{URL: "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/metadata.yaml", SHA256: strings.Repeat("2", 64), To: "files/metadata.yaml"},
			},
			BuilderVersion: version.Version,
		},
		Blob:     b.Bytes(),
		YAML:     []byte(yamlDoc),
		Metadata: []byte("releaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n"),
	}
}

// testKey is a fresh ECDSA P-256 key (unencrypted: cosign's scrypt key
// encryption costs about a second; TestKeyPairRoundTrip covers it).
func testKey(t testing.TB) *PrivateKey {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func registryHost(t testing.TB) string {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// repos returns a fresh registry and layout repository per call.
func repos() map[string]func(t *testing.T) artifact.Repository {
	return map[string]func(t *testing.T) artifact.Repository{
		"registry": func(t *testing.T) artifact.Repository {
			r, err := artifact.OpenRegistry(registryHost(t)+"/capi/core-cluster-api", artifact.Options{PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
		"layout": func(t *testing.T) artifact.Repository {
			r, err := artifact.OpenLayout(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return r
		},
	}
}

func push(t *testing.T, repo artifact.Repository, rel artifact.Release) digest.Digest {
	t.Helper()
	res, err := artifact.Push(context.Background(), repo, rel, artifact.PushOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Descriptor.Digest
}

func layerCount(t *testing.T, repo artifact.Repository, tag string) int {
	t.Helper()
	s, err := readStored(context.Background(), repo, tag)
	if err != nil {
		t.Fatal(err)
	}
	return len(s)
}

func TestSignVerify(t *testing.T) {
	for name, open := range repos() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			repo := open(t)
			a := push(t, repo, release(t, "v1.10.1-core"))
			b := push(t, repo, release(t, "v1.10.2-core"))
			k1, k2, k3 := testKey(t), testKey(t), testKey(t)

			v, err := Verify(ctx, repo, a, []*PublicKey{k1.Public()})
			if err != nil || v.Valid || v.Reason != model.NoSignature {
				t.Fatalf("unsigned: %+v, %v; want no-signature", v, err)
			}

			res, err := Sign(ctx, repo, a, k1, Options{})
			if err != nil || res.Status != Signed || res.Tag != SignatureTag(a) {
				t.Fatalf("Sign = %+v, %v", res, err)
			}
			v, err = Verify(ctx, repo, a, []*PublicKey{k1.Public()})
			if err != nil || !v.Valid || v.KeyID != k1.Public().ID {
				t.Fatalf("Verify = %+v, %v; want valid by k1", v, err)
			}

			// Idempotent: the same key does not add a second signature.
			res, err = Sign(ctx, repo, a, k1, Options{})
			if err != nil || res.Status != Present {
				t.Fatalf("second Sign = %+v, %v; want present", res, err)
			}
			if n := layerCount(t, repo, SignatureTag(a)); n != 1 {
				t.Fatalf("%d signatures after signing twice with one key, want 1", n)
			}

			// Another key adds its own, keeping the first.
			if res, err = Sign(ctx, repo, a, k2, Options{}); err != nil || res.Status != Signed {
				t.Fatalf("Sign with k2 = %+v, %v", res, err)
			}
			if n := layerCount(t, repo, SignatureTag(a)); n != 2 {
				t.Fatalf("%d signatures, want 2", n)
			}
			for _, k := range []*PrivateKey{k1, k2} {
				if v, err := Verify(ctx, repo, a, []*PublicKey{k.Public()}); err != nil || !v.Valid {
					t.Fatalf("Verify with %s = %+v, %v", k.Public().ID, v, err)
				}
			}

			// A key that signed nothing.
			v, err = Verify(ctx, repo, a, []*PublicKey{k3.Public()})
			if err != nil || v.Valid || v.Reason != model.OtherKey || !strings.Contains(v.Message, "none by a trusted key") {
				t.Fatalf("Verify with k3 = %+v, %v; want other-key", v, err)
			}

			// The signature image of a copied onto b's tag: valid bytes, wrong digest.
			copyTag(t, repo, SignatureTag(a), SignatureTag(b))
			v, err = Verify(ctx, repo, b, []*PublicKey{k1.Public()})
			if err != nil || v.Valid || v.Reason != model.WrongDigest {
				t.Fatalf("Verify of a copied signature = %+v, %v; want wrong-digest", v, err)
			}

			if v, err := Verify(ctx, repo, a, nil); err != nil || v.Valid || v.Reason != model.NoTrustedKeys {
				t.Fatalf("Verify without keys = %+v, %v", v, err)
			}
		})
	}
}

// copyTag points tag "to" at the manifest tagged "from" (an attacker
// copying a signature image).
func copyTag(t *testing.T, repo artifact.Repository, from, to string) {
	t.Helper()
	ctx := context.Background()
	desc, err := repo.Resolve(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, to); err != nil {
		t.Fatal(err)
	}
}

func TestAttestVerify(t *testing.T) {
	for name, open := range repos() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			repo := open(t)
			rel := release(t, "v1.10.1-core")
			a := push(t, repo, rel)
			b := push(t, repo, release(t, "v1.10.2-core"))
			k1, k2 := testKey(t), testKey(t)

			stmt, err := ProvenanceStatement(repo.Name(), a, rel)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Attest(ctx, repo, a, k1, stmt, Options{})
			if err != nil || res.Status != Signed || res.Tag != AttestationTag(a) {
				t.Fatalf("Attest = %+v, %v", res, err)
			}
			av, err := VerifyAttestation(ctx, repo, a, []*PublicKey{k1.Public()})
			if err != nil || !av.Valid || av.Provenance == nil {
				t.Fatalf("VerifyAttestation = %+v, %v", av, err)
			}
			p := av.Provenance
			if p.BuilderID != version.BuilderID || p.PredicateType != "https://slsa.dev/provenance/v1" || p.Subjects[repo.Name()] != a.Encoded() {
				t.Fatalf("provenance %+v", p)
			}
			if got, want := materials(p), pinLines(rel.Pins); !slices.Equal(got, want) {
				t.Fatalf("materials %q differ from the pins they were made from %q", got, want)
			}

			// Idempotent for the same key and claims.
			if res, err = Attest(ctx, repo, a, k1, stmt, Options{}); err != nil || res.Status != Present {
				t.Fatalf("second Attest = %+v, %v; want present", res, err)
			}
			if n := layerCount(t, repo, AttestationTag(a)); n != 1 {
				t.Fatalf("%d attestations, want 1", n)
			}

			// Another key.
			av, err = VerifyAttestation(ctx, repo, a, []*PublicKey{k2.Public()})
			if err != nil || av.Valid || av.Reason != model.OtherKey || av.Provenance != nil {
				t.Fatalf("VerifyAttestation with another key = %+v, %v", av, err)
			}

			// Copied onto another digest.
			copyTag(t, repo, AttestationTag(a), AttestationTag(b))
			av, err = VerifyAttestation(ctx, repo, b, []*PublicKey{k1.Public()})
			if err != nil || av.Valid || av.Reason != model.WrongDigest {
				t.Fatalf("VerifyAttestation of a copied attestation = %+v, %v; want wrong-digest", av, err)
			}

			// A statement about another digest is refused up front.
			if _, err := Attest(ctx, repo, b, k1, stmt, Options{}); err == nil {
				t.Fatal("Attest accepted a statement about another subject")
			}
		})
	}
}

func TestVerifyAttestationWrongPredicate(t *testing.T) {
	ctx := context.Background()
	repo, err := artifact.OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := push(t, repo, release(t, "v1.10.1-core"))
	k := testKey(t)
	stmt, _ := json.Marshal(map[string]any{
		"_type":         StatementType,
		"predicateType": "https://cosign.sigstore.dev/attestation/v1",
		"subject":       []map[string]any{{"name": "x", "digest": map[string]string{"sha256": a.Encoded()}}},
		"predicate":     map[string]any{"Data": "hello"},
	})
	if _, err := Attest(ctx, repo, a, k, stmt, Options{}); err != nil {
		t.Fatal(err)
	}
	av, err := VerifyAttestation(ctx, repo, a, []*PublicKey{k.Public()})
	if err != nil || av.Valid || av.Reason != model.WrongPredicate {
		t.Fatalf("VerifyAttestation = %+v, %v; want wrong-predicate", av, err)
	}
}

func TestProvenanceStatementReproducible(t *testing.T) {
	d := digest.FromString("x")
	s1, err := ProvenanceStatement("r", d, release(t, "v1.10.1-core"))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := ProvenanceStatement("r", d, release(t, "v1.10.1-core"))
	if !bytes.Equal(s1, s2) {
		t.Fatal("the same release gave two statements")
	}
	var m map[string]any
	if err := json.Unmarshal(s1, &m); err != nil {
		t.Fatal(err)
	}
	deps := m["predicate"].(map[string]any)["buildDefinition"].(map[string]any)["resolvedDependencies"].([]any)
	first := deps[0].(map[string]any)
	if first["uri"] == "" || first["digest"].(map[string]any)["sha256"] != strings.Repeat("1", 64) {
		t.Fatalf("resolvedDependencies[0] = %v", first)
	}
	if _, err := ProvenanceStatement("r", digest.Digest("sha512:"+strings.Repeat("a", 128)), release(t, "v")); err == nil {
		t.Fatal("a sha512 subject was accepted")
	}
}

// TestCosignLibraryReadsOurs checks what we store with cosign's own
// registry readers (the code behind `cosign verify`).
func TestCosignLibraryReadsOurs(t *testing.T) {
	ctx := context.Background()
	host := registryHost(t)
	repo, err := artifact.OpenRegistry(host+"/capi/core-cluster-api", artifact.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	rel := release(t, "v1.10.1-core")
	d := push(t, repo, rel)
	k := testKey(t)
	if _, err := Sign(ctx, repo, d, k, Options{}); err != nil {
		t.Fatal(err)
	}
	stmt, _ := ProvenanceStatement(repo.Name(), d, rel)
	if _, err := Attest(ctx, repo, d, k, stmt, Options{}); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(repo.Name()+"@"+d.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	co := &cosign.CheckOpts{SigVerifier: k.Public().verifiers[0], IgnoreTlog: true, ClaimVerifier: cosign.SimpleClaimVerifier}
	sigs, _, err := cosign.VerifyImageSignatures(ctx, ref, co)
	if err != nil || len(sigs) != 1 {
		t.Fatalf("cosign.VerifyImageSignatures = %d, %v", len(sigs), err)
	}
	co.ClaimVerifier = cosign.IntotoSubjectClaimVerifier
	atts, _, err := cosign.VerifyImageAttestations(ctx, ref, co)
	if err != nil || len(atts) != 1 {
		t.Fatalf("cosign.VerifyImageAttestations = %d, %v", len(atts), err)
	}
}

// TestVerifyAcceptsCosignLibrarySignature signs with cosign's own code path
// (what `cosign sign --key` runs) and verifies with ours.
func TestVerifyAcceptsCosignLibrarySignature(t *testing.T) {
	ctx := context.Background()
	host := registryHost(t)
	repo, err := artifact.OpenRegistry(host+"/capi/core-cluster-api", artifact.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	d := push(t, repo, release(t, "v1.10.1-core"))
	k := testKey(t)
	ref, err := name.NewDigest(repo.Name()+"@"+d.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := (&payload.Cosign{Image: ref}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := k.sv.SignMessage(bytes.NewReader(pl))
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := static.NewSignature(pl, base64.StdEncoding.EncodeToString(raw))
	se, err := mutate.AttachSignatureToEntity(ociremote.SignedUnknown(ref), sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := ociremote.WriteSignatures(ref.Repository, se); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(ctx, repo, d, []*PublicKey{k.Public()})
	if err != nil || !v.Valid {
		t.Fatalf("Verify of a cosign-written signature = %+v, %v", v, err)
	}
	// And Sign sees it as present instead of adding another.
	if res, err := Sign(ctx, repo, d, k, Options{}); err != nil || res.Status != Present {
		t.Fatalf("Sign over a cosign signature = %+v, %v", res, err)
	}
}

// TestSignKeepsForeignLayersIntact: adding a signature rewrites the image;
// existing layers (with their annotations) must come back byte-identical.
func TestSignKeepsForeignLayersIntact(t *testing.T) {
	ctx := context.Background()
	repo, err := artifact.OpenLayout(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := push(t, repo, release(t, "v1.10.1-core"))
	k1, k2 := testKey(t), testKey(t)
	if _, err := Sign(ctx, repo, d, k1, Options{}); err != nil {
		t.Fatal(err)
	}
	before := manifestLayers(t, repo, SignatureTag(d))
	if _, err := Sign(ctx, repo, d, k2, Options{}); err != nil {
		t.Fatal(err)
	}
	after := manifestLayers(t, repo, SignatureTag(d))
	if len(after) != 2 {
		t.Fatalf("%d layers", len(after))
	}
	b1, _ := json.Marshal(before[0])
	a1, _ := json.Marshal(after[0])
	if !bytes.Equal(b1, a1) {
		t.Fatalf("first layer changed:\n%s\n%s", b1, a1)
	}
	if _, err := v1.NewHash(d.String()); err != nil {
		t.Fatal(err)
	}
}

func manifestLayers(t *testing.T, repo artifact.Repository, tag string) []map[string]any {
	t.Helper()
	ctx := context.Background()
	desc, err := repo.Resolve(ctx, tag)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Layers []map[string]any `json:"layers"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.Layers
}

// materials are the provenance's resolved dependencies as sorted "URL
// sha256" lines (the provenance check in pkg/check compares them with the
// pins; these tests only read them).
func materials(p *Provenance) []string {
	var out []string
	for _, d := range p.Dependencies {
		out = append(out, d.URI+" "+d.SHA256)
	}
	slices.Sort(out)
	return out
}

// pinLines are pins as materials lists them.
func pinLines(pins []pin.Source) []string {
	var out []string
	for _, s := range pins {
		out = append(out, s.URL+" "+s.SHA256)
	}
	slices.Sort(out)
	return out
}
