// Package signtest makes keyless Sigstore bundles for tests, with no network.
//
// It makes keyless Sigstore bundles for tests with
// sigstore-go's virtual Sigstore (test Fulcio CA, timestamp authority and
// transparency log): real certificates and signatures, no network.
package signtest

import (
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

// GitHub Actions identity and issuer used across the tests.
const (
	GitHubIdentity = "https://github.com/acme/platform/.github/workflows/release.yml@refs/heads/main"
	GitHubIssuer   = "https://token.actions.githubusercontent.com"
)

const (
	bundleMediaType   = "application/vnd.dev.sigstore.bundle.v0.3+json"
	inTotoPayloadType = "application/vnd.in-toto+json"
)

// Keyless signs like a CI job with a Fulcio certificate from the
// virtual Sigstore (sigstore-go's test CA, TSA and transparency log):
// real certificates and signatures, no network.
type Keyless struct {
	vs *ca.VirtualSigstore
}

// NewKeyless starts a virtual Sigstore.
func NewKeyless(t testing.TB) *Keyless {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &Keyless{vs: vs}
}

// TrustedRoot writes the virtual Sigstore's trusted_root.json.
func (k *Keyless) TrustedRoot(t testing.TB) string {
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
	return p
}

// Opts say what the bundle carries besides the certificate.
type Opts struct {
	Timestamp bool      // add an RFC 3161 timestamp from the virtual TSA
	TLogAt    time.Time // add a transparency-log entry integrated at this time (zero: none)
}

// Bundle signs statement as identity/issuer into a Sigstore bundle v0.3.
func (k *Keyless) Bundle(t testing.TB, identity, issuer string, statement []byte, o Opts) []byte {
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
	if err := json.Unmarshal(envJSON, &env); err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: leaf.Raw}},
	}
	if o.Timestamp {
		tsr, err := k.vs.TimestampResponse(sig)
		if err != nil {
			t.Fatal(err)
		}
		vm.TimestampVerificationData = &protobundle.TimestampVerificationData{
			Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tsr}},
		}
	}
	if !o.TLogAt.IsZero() {
		vm.TlogEntries = []*protorekor.TransparencyLogEntry{k.tlogEntry(t, leaf, &env, sig, o.TLogAt)}
	}
	pb := &protobundle.Bundle{
		MediaType:            bundleMediaType,
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

func (k *Keyless) tlogEntry(t testing.TB, leaf *x509.Certificate, env *dsse.Envelope, sig []byte, at time.Time) *protorekor.TransparencyLogEntry {
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
