package sign

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/options"
	"golang.org/x/mod/semver"
	"google.golang.org/protobuf/encoding/protojson"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
)

// Sigstore bundle identifiers, as cosign v3 stores them.
const (
	// BundleMediaType is the media type pinseal writes (bundle v0.3).
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// bundleMediaTypePrefix matches every bundle version's media type
	// (v0.1 and v0.2 are "application/vnd.dev.sigstore.bundle+json;version=0.x").
	bundleMediaTypePrefix = "application/vnd.dev.sigstore.bundle"
	// SignPredicateType is the predicate type of the in-toto statement
	// cosign v3 signs for `cosign sign` in the bundle format.
	SignPredicateType = "https://sigstore.dev/cosign/sign/v1"
	// annBundleContent and annBundlePredicate are the referrer manifest
	// annotations cosign sets.
	annBundleContent   = "dev.sigstore.bundle.content"
	annBundlePredicate = "dev.sigstore.bundle.predicateType"
	inTotoPayloadType  = "application/vnd.in-toto+json"
	emptyConfigType    = "application/vnd.oci.empty.v1+json"
)

// Bounds on reading bundles.
const (
	// maxBundleSize bounds one bundle layer.
	maxBundleSize = 4 << 20
	// maxBundleBytes bounds all bundle layers read for one subject.
	maxBundleBytes = 32 << 20
	// maxBundleLayers bounds the bundle layers looked at per referrer.
	maxBundleLayers = 4
)

// Format is how signatures and attestations are written.
type Format string

const (
	// FormatBundle: Sigstore bundles (v0.3, DSSE) attached as OCI referrers
	// of the artifact, as cosign v3 writes them.
	FormatBundle Format = "bundle"
	// FormatLegacy: cosign v2's sha256-<hex>.sig / .att tags.
	FormatLegacy Format = "legacy"
)

// ParseFormat reads bundle or legacy.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatBundle, FormatLegacy:
		return f, nil
	}
	return "", fmt.Errorf("signature format %q: use bundle (Sigstore bundles as OCI referrers, cosign v3) or legacy (.sig/.att tags, cosign v2)", s)
}

// storedBundle is one Sigstore bundle found among the subject's referrers.
type storedBundle struct {
	referrer  digest.Digest // the referrer manifest
	source    artifact.ReferrersSource
	predicate string // the referrer's predicateType annotation, if any
	version   string // v0.1 .. v0.3
	b         *bundle.Bundle
	err       error
}

func (s storedBundle) form() string {
	what := "Sigstore bundle"
	if s.version != "" {
		what += " " + s.version
	}
	if s.b != nil {
		if _, ok := s.b.Content.(*protobundle.Bundle_DsseEnvelope); ok {
			what += " (DSSE)"
		} else {
			what += " (message signature)"
		}
	}
	return fmt.Sprintf("%s in referrer %s (%s)", what, shortDigest(s.referrer), s.source)
}

func shortDigest(d digest.Digest) string {
	s := d.String()
	if len(s) > 19 {
		return s[:19]
	}
	return s
}

// readBundles lists the referrers of subject and reads the Sigstore
// bundles among them whose predicate type annotation (when there is one)
// want accepts. Every read is bounded: MaxReferrers referrers, manifests
// of MaxReferrersIndexSize, maxBundleLayers layers of maxBundleSize each,
// maxBundleBytes in all.
func readBundles(ctx context.Context, repo artifact.Repository, subject digest.Digest, want func(predicateType string) bool) ([]storedBundle, artifact.ReferrersSource, error) {
	refs, src, err := artifact.Referrers(ctx, repo, ocispec.Descriptor{Digest: subject})
	if err != nil {
		return nil, src, err
	}
	var out []storedBundle
	budget := int64(maxBundleBytes)
	for _, r := range refs {
		if r.ArtifactType != "" && r.ArtifactType != emptyConfigType && !strings.HasPrefix(r.ArtifactType, bundleMediaTypePrefix) {
			continue // another kind of referrer (SBOM, ...)
		}
		if pt := r.Annotations[annBundlePredicate]; pt != "" && !want(pt) {
			continue
		}
		sb := storedBundle{referrer: r.Digest, source: src, predicate: r.Annotations[annBundlePredicate]}
		raw, err := artifact.FetchBounded(ctx, repo, r, artifact.MaxReferrersIndexSize)
		if err != nil {
			if transportErr(ctx, err) {
				return nil, src, fmt.Errorf("read referrer %s@%s: %w", repo.Name(), r.Digest, err)
			}
			sb.err = fmt.Errorf("referrer manifest: %w", err)
			out = append(out, sb)
			continue
		}
		var m ocispec.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			continue // not a manifest: not ours to judge
		}
		if m.Subject == nil || m.Subject.Digest != subject {
			continue // a stale tag-schema entry or a referrer of something else
		}
		if sb.predicate == "" {
			sb.predicate = m.Annotations[annBundlePredicate]
			if sb.predicate != "" && !want(sb.predicate) {
				continue
			}
		}
		n := 0
		for _, l := range m.Layers {
			if !strings.HasPrefix(l.MediaType, bundleMediaTypePrefix) {
				continue
			}
			if n++; n > maxBundleLayers {
				break
			}
			one := sb
			if l.Size > budget {
				one.err = fmt.Errorf("bundle layer of %d bytes exceeds what is left of the %d byte budget for one artifact's bundles", l.Size, maxBundleBytes)
				out = append(out, one)
				continue
			}
			b, err := artifact.FetchBounded(ctx, repo, l, maxBundleSize)
			if err != nil {
				if transportErr(ctx, err) {
					return nil, src, fmt.Errorf("read bundle %s@%s: %w", repo.Name(), l.Digest, err)
				}
				one.err = fmt.Errorf("bundle layer: %w", err)
				out = append(out, one)
				continue
			}
			budget -= int64(len(b))
			one.b, one.version, one.err = parseBundle(b)
			out = append(out, one)
		}
	}
	return out, src, nil
}

// transportErr: the registry could not be talked to (not: a bad blob).
func transportErr(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	return !errors.Is(err, errdef.ErrNotFound) && !errors.Is(err, content.ErrMismatchedDigest) &&
		!errors.Is(err, content.ErrTrailingData) && !strings.Contains(err.Error(), "byte limit")
}

// parseBundle decodes a bundle of any version v0.1..v0.3 (certificate
// chains allowed from v0.3 on, as cosign writes them with --cert-chain).
func parseBundle(b []byte) (*bundle.Bundle, string, error) {
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(b, &pb); err != nil {
		return nil, "", fmt.Errorf("not a Sigstore bundle: %w", err)
	}
	probe := &bundle.Bundle{Bundle: &pb}
	version, err := probe.Version()
	if err != nil {
		return nil, "", fmt.Errorf("bundle media type %q: %w", pb.MediaType, err)
	}
	var opts []bundle.Option
	if semver.Compare(version, "v0.3") >= 0 {
		opts = append(opts, bundle.AllowCertificateChain())
	}
	bb, err := bundle.NewBundle(&pb, opts...)
	if err != nil {
		return nil, version, fmt.Errorf("invalid Sigstore bundle %s: %w", version, err)
	}
	return bb, version, nil
}

// bundleVerdict is the outcome of verifying one bundle.
type bundleVerdict struct {
	Check
	predicateType string // of the DSSE statement; "" for a message signature
	statement     []byte // the DSSE payload
}

// checkBundle verifies one bundle against the trust for subject.
func checkBundle(sb storedBundle, subject digest.Digest, trust Trust) bundleVerdict {
	if sb.err != nil {
		return bundleVerdict{Check: Check{Reason: model.Malformed, Detail: sb.err.Error()}}
	}
	b := sb.b
	var v bundleVerdict
	want, _ := hex.DecodeString(subject.Encoded())
	var claimed []byte // the digest a message signature claims
	switch c := b.Content.(type) {
	case *protobundle.Bundle_DsseEnvelope:
		v.statement = c.DsseEnvelope.GetPayload()
		var st struct {
			PredicateType string `json:"predicateType"`
		}
		if c.DsseEnvelope.GetPayloadType() != inTotoPayloadType || json.Unmarshal(v.statement, &st) != nil {
			v.Check = Check{Reason: model.Malformed, Detail: fmt.Sprintf("DSSE payload of type %q is not an in-toto statement", c.DsseEnvelope.GetPayloadType())}
			return v
		}
		v.predicateType = st.PredicateType
	case *protobundle.Bundle_MessageSignature:
		claimed = c.MessageSignature.GetMessageDigest().GetDigest()
		if c.MessageSignature.GetMessageDigest().GetAlgorithm() != protocommon.HashAlgorithm_SHA2_256 {
			v.Check = Check{Reason: model.Malformed, Detail: "message signature over a digest that is not SHA-256"}
			return v
		}
	}
	vc, err := b.VerificationContent()
	if err != nil {
		v.Check = Check{Reason: model.Malformed, Detail: err.Error()}
		return v
	}
	var res *verify.VerificationResult
	if vc.Certificate() != nil {
		res, v.Check = verifyKeyless(b, vc, trust, claimed)
	} else {
		res, v.Check = verifyKeyed(b, vc, trust, claimed)
	}
	if res == nil {
		return v
	}
	// The signature verifies: is it about subject?
	if claimed != nil {
		if !bytes.Equal(claimed, want) {
			v.Check = Check{Reason: model.WrongDigest, KeyID: v.KeyID, Identity: v.Identity,
				Detail: fmt.Sprintf("signed by %s, but over sha256:%x", v.signer(), claimed)}
		}
		return v
	}
	if !statementAbout(v.statement, subject) {
		v.Check = Check{Reason: model.WrongDigest, KeyID: v.KeyID, Identity: v.Identity,
			Detail: fmt.Sprintf("signed by %s, but the statement's subjects do not include %s", v.signer(), subject)}
	}
	return v
}

func (c Check) signer() string {
	if c.Identity != "" {
		return c.Identity
	}
	return shortID(c.KeyID)
}

func statementAbout(stmt []byte, subject digest.Digest) bool {
	var st struct {
		Subject []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if json.Unmarshal(stmt, &st) != nil {
		return false
	}
	for _, s := range st.Subject {
		if s.Digest[subject.Algorithm().String()] == subject.Encoded() {
			return true
		}
	}
	return false
}

// sigPolicy verifies the signature alone: over the claimed digest for a
// message signature, over the DSSE envelope otherwise.
func sigPolicy(claimed []byte, opts ...verify.PolicyOption) verify.PolicyBuilder {
	if claimed != nil {
		return verify.NewPolicy(verify.WithArtifactDigest("sha256", claimed), opts...)
	}
	return verify.NewPolicy(verify.WithoutArtifactUnsafe(), opts...)
}

// keyHint is cosign's bundle hint of a key: base64(sha256(PKIX DER)).
func keyHint(k *PublicKey) string {
	raw, err := hex.DecodeString(strings.TrimPrefix(k.ID, "sha256:"))
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func verifyKeyed(b *bundle.Bundle, vc verify.VerificationContent, trust Trust, claimed []byte) (*verify.VerificationResult, Check) {
	hint := ""
	if pk, ok := vc.PublicKey().(*bundle.PublicKey); ok {
		hint = pk.Hint()
	}
	if len(trust.Keys) == 0 {
		return nil, Check{Reason: model.OtherKey, Detail: "signed with a key, but the policy trusts no keys (only identities)"}
	}
	tl := trust.tlog()
	var lastErr error
	for _, k := range trust.Keys {
		for _, kv := range k.verifiers {
			km := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
				return root.NewExpiringKey(kv, time.Time{}, time.Time{}), nil
			})
			var tm root.TrustedMaterial = km
			var vopts []verify.VerifierOption
			if tl == TLogRequired {
				if trust.Root == nil {
					return nil, Check{Reason: model.TLogMissing, Detail: "the policy requires transparency-log entries but names no trustedRoot to verify them with"}
				}
				if entries, _ := b.TlogEntries(); len(entries) == 0 {
					return nil, Check{Reason: model.TLogMissing, KeyID: k.ID, Detail: "the policy requires a transparency-log entry; the bundle has none"}
				}
				tm = root.TrustedMaterialCollection{km, trust.Root}
				vopts = append(vopts, verify.WithTransparencyLog(1), verify.WithIntegratedTimestamps(1))
			} else {
				vopts = append(vopts, verify.WithNoObserverTimestamps())
			}
			ver, err := verify.NewVerifier(tm, vopts...)
			if err != nil {
				return nil, Check{Reason: model.Malformed, Detail: err.Error()}
			}
			res, err := ver.Verify(b, sigPolicy(claimed, verify.WithKey()))
			if err == nil {
				return res, Check{Valid: true, KeyID: k.ID}
			}
			lastErr = err
			if tl == TLogRequired && strings.Contains(err.Error(), "log inclusion") && hint == keyHint(k) {
				return nil, Check{Reason: model.TLogMissing, KeyID: k.ID, Detail: err.Error()}
			}
		}
		if hint != "" && hint == keyHint(k) {
			// It names this trusted key, but the signature does not verify:
			// the bundle was changed after signing.
			return nil, Check{Reason: model.BadSignature, KeyID: k.ID, Detail: fmt.Sprintf("names trusted key %s, but its signature does not verify (tampered?): %v", shortID(k.ID), lastErr)}
		}
	}
	return nil, Check{Reason: model.OtherKey, Detail: "no trusted key verifies it"}
}

func verifyKeyless(b *bundle.Bundle, vc verify.VerificationContent, trust Trust, claimed []byte) (*verify.VerificationResult, Check) {
	cert := vc.Certificate()
	sum, err := certificate.SummarizeCertificate(cert)
	if err != nil {
		return nil, Check{Reason: model.Malformed, Detail: "certificate: " + err.Error()}
	}
	who := fmt.Sprintf("%s (issuer %s)", sum.SubjectAlternativeName, sum.Extensions.Issuer)
	fail := func(r model.Reason, format string, args ...any) (*verify.VerificationResult, Check) {
		return nil, Check{Reason: r, Identity: who, Detail: fmt.Sprintf(format, args...)}
	}
	if len(trust.Identities) == 0 {
		return fail(model.OtherKey, "signed keylessly by %s, but the policy trusts no identities", who)
	}
	if trust.Root == nil {
		return fail(model.UntrustedCert, "signed keylessly by %s, but the policy has no trusted root to check its certificate with (set trustedRoot)", who)
	}
	vopts, r, why := timeProofs(b, trust.tlog(), who)
	if r != "" {
		return fail(r, "%s", why)
	}
	ver, err := verify.NewVerifier(trust.Root, vopts...)
	if err != nil {
		return fail(model.Malformed, "%v", err)
	}
	res, err := ver.Verify(b, sigPolicy(claimed, verify.WithoutIdentitiesUnsafe()))
	if err != nil {
		r, why := unverified(err, ver, b, cert, who, trust.RootSource)
		return fail(r, "%s", why)
	}
	for _, id := range trust.Identities {
		if id.matches(sum.SubjectAlternativeName, sum.Extensions.Issuer) {
			return res, Check{Valid: true, Identity: who}
		}
	}
	var ids []string
	for _, id := range trust.Identities {
		ids = append(ids, id.String())
	}
	return fail(model.WrongIdentity, "signed by %s, which is none of the policy's identities: %s", who, strings.Join(ids, "; "))
}

// timeProofs are the verifier options that make a keyless signature
// prove when it was made, as the policy's tlog mode asks: a
// transparency-log entry, a signed timestamp, or either. When b lacks
// what the mode needs, r says why (and why in words) instead.
func timeProofs(b *bundle.Bundle, tl TLogMode, who string) (vopts []verify.VerifierOption, r model.Reason, why string) {
	entries, _ := b.TlogEntries()
	stamps, _ := b.Timestamps()
	switch tl {
	case TLogRequired:
		if len(entries) == 0 {
			return nil, model.TLogMissing, fmt.Sprintf("signed by %s; the policy requires a transparency-log entry and the bundle has none", who)
		}
		vopts = append(vopts, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	case TLogOptional:
		if len(entries) == 0 && len(stamps) == 0 {
			return nil, model.NoTimestamp, fmt.Sprintf("signed by %s, but the bundle has neither a signed timestamp nor a transparency-log entry to prove the certificate was valid when it signed", who)
		}
		if len(entries) > 0 {
			vopts = append(vopts, verify.WithTransparencyLog(1))
		}
		vopts = append(vopts, verify.WithObserverTimestamps(1))
	case TLogOff:
		if len(stamps) == 0 {
			return nil, model.NoTimestamp, fmt.Sprintf("signed by %s, but the bundle has no signed timestamp (tlog is off, so a log entry's time does not count)", who)
		}
		vopts = append(vopts, verify.WithSignedTimestamps(1))
	}
	return vopts, "", ""
}

// unverified names the reason sigstore-go's err gives for refusing the
// keyless signature of who, with the words a finding shows.
func unverified(err error, ver *verify.Verifier, b *bundle.Bundle, cert *x509.Certificate, who, rootSource string) (model.Reason, string) {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "outside certificate validity"):
		return model.CertExpired, fmt.Sprintf("the certificate of %s (valid %s to %s) was not valid when its transparency-log entry was made: %v", who,
			cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339), err)
	case strings.Contains(msg, "leaf certificate") && outsideValidity(ver, b, cert):
		return model.CertExpired, fmt.Sprintf("the certificate of %s (valid %s to %s) was not valid when it signed: %v", who,
			cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339), err)
	case strings.Contains(msg, "log inclusion"):
		return model.TLogMissing, fmt.Sprintf("signed by %s; its transparency-log entry does not verify: %v", who, err)
	case strings.Contains(msg, "verify timestamps"):
		return model.NoTimestamp, fmt.Sprintf("signed by %s; no timestamp verifies: %v", who, err)
	case strings.Contains(msg, "leaf certificate"):
		return model.UntrustedCert, fmt.Sprintf("the certificate of %s does not chain to the trusted root (%s): %v", who, rootSource, err)
	case strings.Contains(msg, "verify signature"):
		return model.BadSignature, fmt.Sprintf("the certificate of %s does not verify the signature (tampered?): %v", who, err)
	}
	return model.Malformed, err.Error()
}

// outsideValidity reports whether a verified timestamp of b falls outside
// the certificate's validity (sigstore-go reports an expired certificate
// like an untrusted one).
func outsideValidity(ver *verify.Verifier, b *bundle.Bundle, cert *x509.Certificate) bool {
	logTimes, err := ver.VerifyTransparencyLogInclusion(b)
	if err != nil {
		return false
	}
	times, err := ver.VerifyObserverTimestamps(b, logTimes)
	if err != nil {
		return false
	}
	for _, t := range times {
		if t.Timestamp.Before(cert.NotBefore) || t.Timestamp.After(cert.NotAfter) {
			return true
		}
	}
	return false
}

// bundlePresent finds a bundle of subject already stored that key signed
// and that present accepts.
func bundlePresent(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, predicateType string, present func(stmt []byte) bool) (bool, error) {
	bs, _, err := readBundles(ctx, repo, subject, func(pt string) bool { return pt == predicateType })
	if err != nil {
		return false, err
	}
	trust := Trust{Keys: []*PublicKey{key.pub}, TLog: TLogOff}
	for _, sb := range bs {
		v := checkBundle(sb, subject, trust)
		if v.Valid && v.predicateType == predicateType && present(v.statement) {
			return true, nil
		}
	}
	return false, nil
}

// writeBundle signs statement into a DSSE envelope with key, wraps it in
// a Sigstore bundle v0.3 (public key hint, no log entry, no timestamp) and
// attaches it to subject as a referrer, as cosign v3 does. It returns the
// referrer manifest's descriptor and where it was indexed.
func writeBundle(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, statement []byte, predicateType string, opts Options) (ocispec.Descriptor, error) {
	bundleJSON, err := keyBundle(ctx, key, statement)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	subjDesc := opts.Subject
	if subjDesc.Digest != subject {
		if subjDesc, err = repo.Resolve(ctx, subject.String()); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("resolve %s@%s: %w", repo.Name(), subject, err)
		}
	}
	return attachBundle(ctx, repo, subjDesc, bundleJSON, predicateType)
}

// keyBundle signs statement into a DSSE envelope with key and wraps it in
// a Sigstore bundle v0.3 naming the key by cosign's hint.
func keyBundle(ctx context.Context, key *PrivateKey, statement []byte) ([]byte, error) {
	envJSON, err := sigdsse.WrapSigner(key.sv, inTotoPayloadType).SignMessage(bytes.NewReader(statement), options.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	var env struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
		Signatures  []struct {
			Sig string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(envJSON, &env); err != nil || len(env.Signatures) != 1 {
		return nil, fmt.Errorf("DSSE envelope: unexpected shape (%v)", err)
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		return nil, err
	}
	pb := &protobundle.Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: keyHint(key.pub)}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload:     statement,
			PayloadType: inTotoPayloadType,
			Signatures:  []*protodsse.Signature{{Sig: sig}},
		}},
	}
	return protojson.Marshal(pb)
}

// AttachBundle attaches a Sigstore bundle (its JSON, v0.3) to subject as
// cosign v3 does: a referrer manifest (artifactType and layer of the
// bundle media type, empty config, annotations naming the DSSE content
// and predicateType) stored through the referrers API or the referrers tag
// schema. It checks nothing about the bundle.
func AttachBundle(ctx context.Context, repo artifact.Repository, subject digest.Digest, bundleJSON []byte, predicateType string) (ocispec.Descriptor, error) {
	subjDesc, err := repo.Resolve(ctx, subject.String())
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("resolve %s@%s: %w", repo.Name(), subject, err)
	}
	return attachBundle(ctx, repo, subjDesc, bundleJSON, predicateType)
}

// attachBundle is AttachBundle for a subject described by subjDesc, which
// need not be stored yet (builder push signs before it tags).
func attachBundle(ctx context.Context, repo artifact.Repository, subjDesc ocispec.Descriptor, bundleJSON []byte, predicateType string) (ocispec.Descriptor, error) {
	empty := []byte("{}")
	cfg := content.NewDescriptorFromBytes(emptyConfigType, empty)
	layer := content.NewDescriptorFromBytes(BundleMediaType, bundleJSON)
	for _, blob := range []struct {
		d ocispec.Descriptor
		b []byte
	}{{cfg, empty}, {layer, bundleJSON}} {
		if err := pushBlob(ctx, repo, blob.d, blob.b); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("write bundle to %s: %w", repo.Name(), err)
		}
	}
	ann := map[string]string{
		ocispec.AnnotationCreated: time.Now().UTC().Format(time.RFC3339),
		annBundleContent:          "dsse-envelope",
	}
	if predicateType != "" {
		ann[annBundlePredicate] = predicateType
	}
	m := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: BundleMediaType,
		Config:       cfg,
		Layers:       []ocispec.Descriptor{layer},
		Subject:      &ocispec.Descriptor{MediaType: subjDesc.MediaType, Digest: subjDesc.Digest, Size: subjDesc.Size},
		Annotations:  ann,
	}
	mb, err := json.Marshal(m)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	return artifact.PushReferrer(ctx, repo, subjDesc.Digest, ocispec.MediaTypeImageManifest, mb)
}

// signStatement is the in-toto statement cosign v3 signs for `cosign
// sign`: subject = the digest, predicate type SignPredicateType, empty
// predicate.
func signStatement(subject digest.Digest) ([]byte, error) {
	return json.Marshal(map[string]any{
		"_type":         StatementType,
		"subject":       []map[string]any{{"digest": map[string]string{subject.Algorithm().String(): subject.Encoded()}}},
		"predicateType": SignPredicateType,
		"predicate":     map[string]any{},
	})
}
