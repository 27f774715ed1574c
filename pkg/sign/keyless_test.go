package sign

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/encoding/protojson"
)

const (
	ghIdentity = "https://github.com/acme/platform/.github/workflows/release.yml@refs/heads/main"
	ghIssuer   = "https://token.actions.githubusercontent.com"
)

// keylessSigner signs like a CI job with a Fulcio certificate from the
// virtual Sigstore (sigstore-go's test CA, TSA and transparency log):
// real certificates and signatures, no network.
type keylessSigner struct {
	vs *ca.VirtualSigstore
}

func newKeylessSigner(t testing.TB) *keylessSigner {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &keylessSigner{vs: vs}
}

// trustedRoot writes the virtual Sigstore's trusted_root.json.
func (k *keylessSigner) trustedRoot(t testing.TB) (string, *root.TrustedRoot) {
	// The virtual Sigstore names its log by the hex string of the log id;
	// a trusted_root.json carries the raw id.
	logs := k.vs.RekorLogs()
	for _, l := range logs {
		if raw, err := hex.DecodeString(string(l.ID)); err == nil {
			l.ID = raw
		}
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, k.vs.FulcioCertificateAuthorities(), k.vs.CTLogs(), k.vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadTrustedRoot(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, loaded
}

type keylessOpts struct {
	timestamp bool      // add an RFC 3161 timestamp from the virtual TSA
	tlogAt    time.Time // add a transparency-log entry integrated at this time (zero: none)
}

// bundle signs statement as identity/issuer into a Sigstore bundle v0.3.
func (k *keylessSigner) bundle(t testing.TB, identity, issuer string, statement []byte, o keylessOpts) []byte {
	t.Helper()
	leaf, priv, err := k.vs.GenerateLeafCert(identity, issuer)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadSignerVerifier(priv.(crypto.Signer), crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	envJSON, err := sigdsse.WrapSigner(sv, inTotoPayloadType).SignMessage(strings.NewReader(string(statement)))
	if err != nil {
		t.Fatal(err)
	}
	var env dsse.Envelope
	if err := jsonUnmarshal(envJSON, &env); err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: leaf.Raw}},
	}
	if o.timestamp {
		tsr, err := k.vs.TimestampResponse(sig)
		if err != nil {
			t.Fatal(err)
		}
		vm.TimestampVerificationData = &protobundle.TimestampVerificationData{
			Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tsr}},
		}
	}
	if !o.tlogAt.IsZero() {
		vm.TlogEntries = []*protorekor.TransparencyLogEntry{k.tlogEntry(t, leaf, &env, sig, o.tlogAt)}
	}
	pb := &protobundle.Bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: statement, PayloadType: inTotoPayloadType, Signatures: []*protodsse.Signature{{Sig: sig}},
		}},
	}
	b, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (k *keylessSigner) tlogEntry(t testing.TB, leaf *x509.Certificate, env *dsse.Envelope, sig []byte, at time.Time) *protorekor.TransparencyLogEntry {
	t.Helper()
	e, err := k.vs.GenerateTlogEntry(leaf, env, sig, at.Unix(), true)
	if err != nil {
		t.Fatal(err)
	}
	tle := e.TransparencyLogEntry()
	tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
	set, err := k.vs.RekorSignPayload(tlog.RekorPayload{
		Body:           base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
		IntegratedTime: tle.IntegratedTime,
		LogIndex:       tle.LogIndex,
		LogID:          hex.EncodeToString(tle.LogId.KeyId),
	})
	if err != nil {
		t.Fatal(err)
	}
	tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	return tle
}

func TestKeylessBundles(t *testing.T) {
	ctx := context.Background()
	signer := newKeylessSigner(t)
	_, tr := signer.trustedRoot(t)
	_, otherRoot := newKeylessSigner(t).trustedRoot(t)
	trusted := []Identity{{Issuer: ghIssuer, Subject: ghIdentity}}

	now := time.Now()
	cases := []struct {
		name      string
		identity  string
		opts      keylessOpts
		trust     Trust
		want      Reason // "" = valid
		inMessage string
	}{
		{"timestamp and log", ghIdentity, keylessOpts{timestamp: true, tlogAt: now}, Trust{Identities: trusted, Root: tr}, "", ""},
		{"timestamp only", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: trusted, Root: tr}, "", ""},
		{"log required and present", ghIdentity, keylessOpts{timestamp: true, tlogAt: now}, Trust{Identities: trusted, Root: tr, TLog: TLogRequired}, "", ""},
		{"tlog off, timestamp", ghIdentity, keylessOpts{timestamp: true, tlogAt: now}, Trust{Identities: trusted, Root: tr, TLog: TLogOff}, "", ""},
		{"subject by regexp", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: []Identity{{Issuer: ghIssuer, SubjectRegExp: `^https://github\.com/acme/platform/\.github/workflows/release\.yml@refs/heads/.*$`}}, Root: tr}, "", ""},

		{"another subject", "https://github.com/evil/fork/.github/workflows/release.yml@refs/heads/main", keylessOpts{timestamp: true}, Trust{Identities: trusted, Root: tr}, WrongIdentity, "evil/fork"},
		{"another issuer", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: []Identity{{Issuer: "https://accounts.google.com", Subject: ghIdentity}}, Root: tr}, WrongIdentity, "accounts.google.com"},
		{"policy names another subject", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: []Identity{{Issuer: ghIssuer, Subject: "https://github.com/acme/other/.github/workflows/release.yml@refs/heads/main"}}, Root: tr}, WrongIdentity, "acme/other"},
		{"missing timestamp", ghIdentity, keylessOpts{}, Trust{Identities: trusted, Root: tr}, NoTimestamp, "neither a signed timestamp"},
		{"tlog off and only a log entry", ghIdentity, keylessOpts{tlogAt: now}, Trust{Identities: trusted, Root: tr, TLog: TLogOff}, NoTimestamp, "no signed timestamp"},
		{"expired certificate (log entry after it expired)", ghIdentity, keylessOpts{tlogAt: now.Add(30 * time.Minute)}, Trust{Identities: trusted, Root: tr}, CertExpired, "not valid"},
		{"log required and absent", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: trusted, Root: tr, TLog: TLogRequired}, TLogMissing, "transparency-log"},
		{"another trusted root", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: trusted, Root: otherRoot}, NoTimestamp, ""},
		{"no trusted root", ghIdentity, keylessOpts{timestamp: true}, Trust{Identities: trusted}, UntrustedCert, "trustedRoot"},
		{"keys only", ghIdentity, keylessOpts{timestamp: true}, Trust{Keys: []*PublicKey{testKey(t).Public()}, Root: tr}, OtherKey, "trusts no identities"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo := repos()["layout"](t)
			a := push(t, repo, release(t, "v1.10.1-core"))
			stmt, err := signStatement(a)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := AttachBundle(ctx, repo, a, signer.bundle(t, tc.identity, ghIssuer, stmt, tc.opts), SignPredicateType); err != nil {
				t.Fatal(err)
			}
			v, err := VerifyWith(ctx, repo, a, tc.trust)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if !v.Valid || !strings.Contains(v.Identity, ghIdentity) || !strings.Contains(v.Identity, ghIssuer) {
					t.Fatalf("want valid by %s: %+v", ghIdentity, v)
				}
				return
			}
			if v.Valid || v.Reason != tc.want || !strings.Contains(v.Message, tc.inMessage) || !strings.Contains(v.Message, "Sigstore bundle v0.3") {
				t.Fatalf("want %s mentioning %q and the form:\n%+v", tc.want, tc.inMessage, v)
			}
		})
	}
}

// TestKeylessWrongDigestAndAttestation: a keyless attestation verifies as
// provenance; the same identity's bundle for another digest is wrong-digest.
func TestKeylessAttestationAndWrongDigest(t *testing.T) {
	ctx := context.Background()
	signer := newKeylessSigner(t)
	_, tr := signer.trustedRoot(t)
	trust := Trust{Identities: []Identity{{Issuer: ghIssuer, Subject: ghIdentity}}, Root: tr}
	repo := repos()["layout"](t)
	rel := release(t, "v1.10.1-core")
	a := push(t, repo, rel)
	b := push(t, repo, release(t, "v1.10.2-core"))
	stmt, err := ProvenanceStatement(repo.Name(), a, rel)
	if err != nil {
		t.Fatal(err)
	}
	bundle := signer.bundle(t, ghIdentity, ghIssuer, stmt, keylessOpts{timestamp: true, tlogAt: time.Now()})
	if _, err := AttachBundle(ctx, repo, a, bundle, PredicateSLSAProvenance); err != nil {
		t.Fatal(err)
	}
	av, err := VerifyAttestationWith(ctx, repo, a, trust)
	if err != nil || !av.Valid || av.Provenance == nil || av.Provenance.BuilderID == "" {
		t.Fatalf("keyless provenance: %+v, %v", av, err)
	}
	if _, err := AttachBundle(ctx, repo, b, bundle, PredicateSLSAProvenance); err != nil {
		t.Fatal(err)
	}
	av, err = VerifyAttestationWith(ctx, repo, b, trust)
	if err != nil || av.Valid || av.Reason != WrongDigest {
		t.Fatalf("provenance of a attached to b: %+v, %v; want wrong-digest", av, err)
	}
	var _ digest.Digest
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
