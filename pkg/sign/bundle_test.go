package sign

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
)

// bundleRepos: a registry that serves the referrers API, one that does not
// (referrers tag schema), and an OCI layout.
func bundleRepos() map[string]func(t *testing.T) artifact.Repository {
	m := repos()
	m["registry-referrers-api"] = func(t *testing.T) artifact.Repository {
		srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)))
		t.Cleanup(srv.Close)
		r, err := artifact.OpenRegistry(strings.TrimPrefix(srv.URL, "http://")+"/capi/core-cluster-api", artifact.Options{PlainHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	return m
}

func referrerCount(t *testing.T, repo artifact.Repository, subject digest.Digest) int {
	t.Helper()
	refs, _, err := artifact.Referrers(context.Background(), repo, ocispec.Descriptor{Digest: subject})
	if err != nil {
		t.Fatal(err)
	}
	return len(refs)
}

func TestBundleSignAttestVerify(t *testing.T) {
	wantSource := map[string]artifact.ReferrersSource{
		"registry": artifact.ReferrersTagSchema, "layout": artifact.ReferrersTagSchema,
		"registry-referrers-api": artifact.ReferrersAPI,
	}
	for name, open := range bundleRepos() {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			repo := open(t)
			rel := release(t, "v1.10.1-core")
			a := push(t, repo, rel)
			k1, k2 := testKey(t), testKey(t)
			opts := Options{Format: FormatBundle}

			res, err := Sign(ctx, repo, a, k1, opts)
			if err != nil || res.Status != Signed || res.Format != FormatBundle || res.Referrer == "" || res.Tag != "" {
				t.Fatalf("Sign = %+v, %v", res, err)
			}
			stmt, err := ProvenanceStatement(repo.Name(), a, rel)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := Attest(ctx, repo, a, k1, stmt, opts); err != nil || res.Status != Signed {
				t.Fatalf("Attest = %+v, %v", res, err)
			}
			v, err := Verify(ctx, repo, a, []*PublicKey{k1.Public()})
			if err != nil || !v.Valid || v.KeyID != k1.Public().ID {
				t.Fatalf("Verify = %+v, %v", v, err)
			}
			if want := "Sigstore bundle v0.3 (DSSE)"; !strings.Contains(v.Form, want) || !strings.Contains(v.Form, string(wantSource[name])) {
				t.Errorf("form %q, want %q via %s", v.Form, want, wantSource[name])
			}
			av, err := VerifyAttestation(ctx, repo, a, []*PublicKey{k1.Public()})
			if err != nil || !av.Valid || av.Provenance == nil || len(av.Provenance.Dependencies) != 2 {
				t.Fatalf("VerifyAttestation = %+v, %v", av, err)
			}
			// The signature bundle is not taken for an attestation, nor the other way round.
			if len(v.Checks) != 1 || len(av.Checks) != 1 {
				t.Errorf("checks: %d signature, %d attestation; want 1 and 1", len(v.Checks), len(av.Checks))
			}

			// No pile-up: signing and attesting again with the same key writes nothing.
			if res, err := Sign(ctx, repo, a, k1, opts); err != nil || res.Status != Present {
				t.Fatalf("second Sign = %+v, %v; want present", res, err)
			}
			if res, err := Attest(ctx, repo, a, k1, stmt, opts); err != nil || res.Status != Present {
				t.Fatalf("second Attest = %+v, %v; want present", res, err)
			}
			if n := referrerCount(t, repo, a); n != 2 {
				t.Fatalf("%d referrers after signing and attesting twice, want 2", n)
			}

			// Another key.
			v, err = Verify(ctx, repo, a, []*PublicKey{k2.Public()})
			if err != nil || v.Valid || v.Reason != model.OtherKey || !strings.Contains(v.Message, "Sigstore bundle") {
				t.Fatalf("Verify with another key = %+v, %v; want other-key naming the form", v, err)
			}
			av, err = VerifyAttestation(ctx, repo, a, []*PublicKey{k2.Public()})
			if err != nil || av.Valid || av.Reason != model.OtherKey {
				t.Fatalf("VerifyAttestation with another key = %+v, %v; want other-key", av, err)
			}
		})
	}
}

// tamperedBundle changes the statement inside a valid bundle, keeping
// its signature.
func tamperedBundle(t *testing.T, bundleJSON []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(bundleJSON, &m); err != nil {
		t.Fatal(err)
	}
	env := m["dsseEnvelope"].(map[string]any)
	var st map[string]any
	payload, _ := decodeB64(env["payload"].(string))
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	st["predicate"] = map[string]any{"tampered": true}
	b, _ := json.Marshal(st)
	env["payload"] = encodeB64(b)
	out, _ := json.Marshal(m)
	return out
}

func TestBundleFindings(t *testing.T) {
	ctx := context.Background()
	for name, open := range bundleRepos() {
		t.Run(name, func(t *testing.T) {
			repo := open(t)
			a := push(t, repo, release(t, "v1.10.1-core"))
			b := push(t, repo, release(t, "v1.10.2-core"))
			c := push(t, repo, release(t, "v1.10.3-core"))
			d := push(t, repo, release(t, "v1.10.4-core"))
			k := testKey(t)
			trust := []*PublicKey{k.Public()}
			stmtA, _ := signStatement(a)
			stmtB, _ := signStatement(b)
			stmtC, _ := signStatement(c)

			// A bundle for another digest (a's) attached to b.
			bundleA, err := keyBundle(ctx, k, stmtA)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := AttachBundle(ctx, repo, b, bundleA, SignPredicateType); err != nil {
				t.Fatal(err)
			}
			if v, err := Verify(ctx, repo, b, trust); err != nil || v.Reason != model.WrongDigest {
				t.Fatalf("bundle for another digest: %+v, %v; want wrong-digest", v, err)
			}
			_ = stmtB

			// A tampered bundle (statement changed after signing).
			bundleC, err := keyBundle(ctx, k, stmtC)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := AttachBundle(ctx, repo, c, tamperedBundle(t, bundleC), SignPredicateType); err != nil {
				t.Fatal(err)
			}
			if v, err := Verify(ctx, repo, c, trust); err != nil || v.Reason != model.BadSignature || !strings.Contains(v.Message, "tampered") {
				t.Fatalf("tampered bundle: %+v, %v; want bad-signature", v, err)
			}
			// Mutation check: the untampered bundle verifies.
			if _, err := AttachBundle(ctx, repo, c, bundleC, SignPredicateType); err != nil {
				t.Fatal(err)
			}
			if v, err := Verify(ctx, repo, c, trust); err != nil || !v.Valid {
				t.Fatalf("untampered bundle beside the tampered one: %+v, %v; want valid", v, err)
			}

			// Not a bundle at all.
			if _, err := AttachBundle(ctx, repo, d, []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`), SignPredicateType); err != nil {
				t.Fatal(err)
			}
			if v, err := Verify(ctx, repo, d, trust); err != nil || v.Reason != model.Malformed {
				t.Fatalf("empty bundle: %+v, %v; want malformed", v, err)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"bundle", "legacy"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("v3"); err == nil || !strings.Contains(err.Error(), "use bundle") {
		t.Errorf("ParseFormat(v3) = %v", err)
	}
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
func encodeB64(b []byte) string          { return base64.StdEncoding.EncodeToString(b) }
