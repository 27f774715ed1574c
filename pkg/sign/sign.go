package sign

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
)

// Options configure signing and attesting.
type Options struct {
	// Format is how the signature or attestation is stored: FormatLegacy
	// (the zero value: cosign v2's .sig/.att tags) or FormatBundle (a
	// Sigstore bundle attached as an OCI referrer, as cosign v3 does).
	Format Format
	// Subject describes the artifact manifest (media type, size) for the
	// bundle's referrer manifest; when its digest is not the one signed,
	// it is resolved in the repository.
	Subject ocispec.Descriptor
}

// Status says what Sign or Attest did.
type Status string

const (
	Signed  Status = "signed"  // a new signature or attestation was stored
	Present Status = "present" // a valid one by the same key was already there; nothing written
)

// Result is the outcome of Sign or Attest.
type Result struct {
	Subject digest.Digest `json:"subject"`       // the artifact's manifest digest
	Format  Format        `json:"format"`        // legacy or bundle
	Tag     string        `json:"tag,omitempty"` // legacy: where it is stored, sha256-<hex>.sig or .att
	// Referrer is, for the bundle format, the referrer manifest holding the
	// bundle (when Signed; empty when Present).
	Referrer string `json:"referrer,omitempty"`
	Status   Status `json:"status"`
	KeyID    string `json:"keyID"`
}

// Where says where the result is stored, for humans.
func (r Result) Where() string {
	if r.Format == FormatBundle {
		if r.Referrer != "" {
			return "Sigstore bundle, referrer " + r.Referrer
		}
		return "Sigstore bundle referrer"
	}
	return r.Tag
}

// Sign signs the manifest digest subject in repo with key and stores the
// signature as cosign does. If a signature of subject valid under the same
// key is already stored, nothing is written (Status Present): pushing again
// does not pile up signatures.
func Sign(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, opts Options) (Result, error) {
	if err := subject.Validate(); err != nil {
		return Result{}, fmt.Errorf("sign: subject %q: %w", subject, err)
	}
	if opts.Format == FormatBundle {
		return signBundle(ctx, repo, subject, key, opts)
	}
	tag := SignatureTag(subject)
	res := Result{Subject: subject, Format: FormatLegacy, Tag: tag, KeyID: key.pub.ID}
	existing, err := readStored(ctx, repo, tag)
	if err != nil {
		return Result{}, fmt.Errorf("sign %s@%s: %w", repo.Name(), subject, err)
	}
	h, err := v1.NewHash(subject.String())
	if err != nil {
		return Result{}, err
	}
	for _, s := range existing {
		if s.err == nil && checkSignature(ctx, s.full, h, []*PublicKey{key.pub}).Valid {
			res.Status = Present
			return res, nil
		}
	}

	pl, err := json.Marshal(payload.SimpleContainerImage{
		Critical: payload.Critical{
			Identity: payload.Identity{DockerReference: repo.Name()},
			Image:    payload.Image{DockerManifestDigest: subject.String()},
			Type:     payload.CosignSignatureType,
		},
	})
	if err != nil {
		return Result{}, err
	}
	sig, err := key.sv.SignMessage(bytes.NewReader(pl), options.WithContext(ctx))
	if err != nil {
		return Result{}, fmt.Errorf("sign %s@%s: %w", repo.Name(), subject, err)
	}
	layer, err := static.NewSignature(pl, base64.StdEncoding.EncodeToString(sig))
	if err != nil {
		return Result{}, err
	}
	if _, err := writeStored(ctx, repo, tag, append(raws(existing), layer)); err != nil {
		return Result{}, fmt.Errorf("sign %s@%s: %w", repo.Name(), subject, err)
	}
	res.Status = Signed
	return res, nil
}

// signBundle stores a bundle-format signature (cosign v3's): a DSSE
// envelope of the cosign sign statement, unless a valid one by the same
// key is already attached.
func signBundle(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, opts Options) (Result, error) {
	res := Result{Subject: subject, Format: FormatBundle, KeyID: key.pub.ID}
	ok, err := bundlePresent(ctx, repo, subject, key, SignPredicateType, func([]byte) bool { return true })
	if err != nil {
		return Result{}, fmt.Errorf("sign %s@%s: %w", repo.Name(), subject, err)
	}
	if ok {
		res.Status = Present
		return res, nil
	}
	stmt, err := signStatement(subject)
	if err != nil {
		return Result{}, err
	}
	d, err := writeBundle(ctx, repo, subject, key, stmt, SignPredicateType, opts)
	if err != nil {
		return Result{}, fmt.Errorf("sign %s@%s: %w", repo.Name(), subject, err)
	}
	res.Status, res.Referrer = Signed, d.Digest.String()
	return res, nil
}

func raws(s []stored) []oci.Signature {
	out := make([]oci.Signature, len(s))
	for i := range s {
		out[i] = s[i].raw
	}
	return out
}

// Check is the verdict on one stored signature or attestation.
type Check struct {
	// Form is what was found: a legacy simple-signing or DSSE layer in
	// the .sig/.att image, or a Sigstore bundle (version, DSSE or message
	// signature) in a referrer found through the referrers API or the
	// referrers tag schema.
	Form     string `json:"form"`
	Referrer string `json:"referrer,omitempty"` // the referrer manifest holding a bundle
	// Identity is the keyless signer (certificate SAN and issuer), if any.
	Identity string       `json:"identity,omitempty"`
	Index    int          `json:"index"`            // layer index in the legacy image; order of bundles after them
	Valid    bool         `json:"valid"`            // verified by KeyID, for the subject (and, for attestations, the predicate type)
	Reason   model.Reason `json:"reason,omitempty"` // when not Valid
	KeyID    string       `json:"keyID,omitempty"`  // the trusted key that verified the bytes, if any
	Detail   string       `json:"detail,omitempty"`
}

// Verification is the verdict on the signatures (or attestations) of one
// artifact digest.
type Verification struct {
	Repository string        `json:"repository"`
	Subject    digest.Digest `json:"subject"`
	Tag        string        `json:"tag"` // the legacy tag looked up
	// Referrers is how the subject's referrers were listed (referrers API
	// or referrers tag schema); "" when they could not be.
	Referrers string `json:"referrers,omitempty"`
	Valid     bool   `json:"valid"` // at least one Check is Valid
	// Reason is, when not Valid, the most telling reason over all checks:
	// wrong-digest, then wrong-predicate, other-key, malformed; no-signature
	// when nothing is stored.
	Reason  model.Reason `json:"reason,omitempty"`
	Message string       `json:"message"`         // one line for humans
	KeyID   string       `json:"keyID,omitempty"` // the trusted key of the first valid check
	// Identity is the keyless identity of the first valid check.
	Identity string `json:"identity,omitempty"`
	// Form is the form of the first valid check, else of the check that
	// gave Reason.
	Form   string  `json:"form,omitempty"`
	Checks []Check `json:"checks"`
}

// Verify checks the signatures stored for subject in repo against the
// trusted keys, in every form (see VerifyWith).
func Verify(ctx context.Context, repo artifact.Repository, subject digest.Digest, keys []*PublicKey) (*Verification, error) {
	return VerifyWith(ctx, repo, subject, Trust{Keys: keys})
}

// VerifyWith checks the signatures stored for subject in repo, in every
// form: the legacy sha256-<hex>.sig image (simple signing, cosign v2) and
// Sigstore bundles v0.1-v0.3 attached as referrers (listed through the
// referrers API, else the referrers tag schema), signed with a trusted key
// or keylessly by a trusted identity. A registry or layout that cannot be
// read is an error; a missing, foreign or misplaced signature is a
// Verification with Valid false and a Reason.
func VerifyWith(ctx context.Context, repo artifact.Repository, subject digest.Digest, trust Trust) (*Verification, error) {
	v := &Verification{Repository: repo.Name(), Subject: subject, Tag: SignatureTag(subject)}
	if trust.Empty() {
		v.Reason, v.Message = model.NoTrustedKeys, "no trusted keys or identities to verify with: set keys (or identities) in the policy"
		return v, nil
	}
	h, err := v1.NewHash(subject.String())
	if err != nil {
		return nil, fmt.Errorf("verify: subject %q: %w", subject, err)
	}
	form := "legacy simple-signing signature in " + v.Tag
	err = eachStored(ctx, repo, v.Tag, func(i int, s stored) {
		var c Check
		if s.err != nil {
			c = Check{Reason: model.Malformed, Detail: s.err.Error()}
		} else {
			c = checkSignature(ctx, s.full, h, trust.Keys)
		}
		c.Index, c.Form = i, form
		v.Checks = append(v.Checks, c)
	})
	if tooLarge(v, err, "signature") {
		return v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify %s@%s: %w", repo.Name(), subject, err)
	}
	bs, src, err := readBundles(ctx, repo, subject, func(pt string) bool { return pt == SignPredicateType })
	if err != nil {
		return nil, fmt.Errorf("verify %s@%s: %w", repo.Name(), subject, err)
	}
	v.Referrers = string(src)
	for _, sb := range bs {
		bv := checkBundle(sb, subject, trust)
		if bv.Reason != model.Malformed && bv.predicateType != "" && bv.predicateType != SignPredicateType {
			continue // an attestation, not a signature
		}
		c := bv.Check
		c.Index, c.Form, c.Referrer = len(v.Checks), sb.form(), sb.referrer.String()
		v.Checks = append(v.Checks, c)
	}
	summarize(v, trust, "signature")
	return v, nil
}

// tooLarge records, for an image refused by Limits, the too-large
// verdict.
func tooLarge(v *Verification, err error, what string) bool {
	var le *artifact.LimitError
	if !errors.As(err, &le) {
		return false
	}
	v.Checks = nil
	v.Reason = model.TooLarge
	v.Message = fmt.Sprintf("the %s image %s:%s was not read: %v", what, v.Repository, v.Tag, le)
	return true
}

// checkSignature verifies one simple-signing layer with each key.
func checkSignature(ctx context.Context, sig oci.Signature, h v1.Hash, keys []*PublicKey) Check {
	if b64, _ := sig.Base64Signature(); b64 == "" {
		return Check{Reason: model.Malformed, Detail: "layer has no " + static.SignatureAnnotationKey + " annotation"}
	}
	for _, k := range keys {
		for _, kv := range k.verifiers {
			co := &cosign.CheckOpts{SigVerifier: kv, IgnoreTlog: true}
			if _, err := cosign.VerifyImageSignature(ctx, sig, h, co); err != nil {
				continue
			}
			if err := cosign.SimpleClaimVerifier(sig, h, nil); err != nil {
				return Check{Reason: model.WrongDigest, KeyID: k.ID, Detail: fmt.Sprintf("signed by %s, but for another digest: %v", shortID(k.ID), err)}
			}
			return Check{Valid: true, KeyID: k.ID}
		}
	}
	return Check{Reason: model.OtherKey, Detail: "no trusted key verifies it"}
}

// summarize sets Valid, Reason, Message, KeyID, Identity and Form from
// the checks.
func summarize(v *Verification, trust Trust, what string) {
	for _, c := range v.Checks {
		if c.Valid {
			v.Valid, v.KeyID, v.Identity, v.Form = true, c.KeyID, c.Identity, c.Form
			v.Message = fmt.Sprintf("%s of %s verified: %s by %s", what, v.Subject, c.Form, c.signer())
			return
		}
	}
	if len(v.Checks) == 0 {
		v.Reason = model.NoSignature
		looked := v.Repository + ":" + v.Tag
		if v.Referrers != "" {
			looked += " and Sigstore bundles among the digest's referrers (" + v.Referrers + ")"
		}
		v.Message = fmt.Sprintf("no %s stored for %s (looked for %s)", what, v.Subject, looked)
		return
	}
	rank := map[model.Reason]int{model.WrongDigest: 12, model.WrongPredicate: 11, model.WrongIdentity: 10, model.CertExpired: 9, model.NoTimestamp: 8,
		model.TLogMissing: 7, model.UntrustedCert: 6, model.BadSignature: 5, model.OtherKey: 2, model.Malformed: 1}
	best := v.Checks[0]
	for _, c := range v.Checks[1:] {
		if rank[c.Reason] > rank[best.Reason] {
			best = c
		}
	}
	v.Reason, v.Form = best.Reason, best.Form
	switch best.Reason {
	case model.WrongDigest:
		v.Message = fmt.Sprintf("the %s stored for %s (%s) was made by a trusted signer for a different digest (copied from another artifact?): %s", what, v.Subject, best.Form, best.Detail)
	case model.WrongPredicate:
		v.Message = fmt.Sprintf("no %s of the expected predicate type for %s: %s", what, v.Subject, best.Detail)
	case model.OtherKey:
		v.Message = fmt.Sprintf("%d %s(s) stored for %s, none by a trusted key or identity (%s); the last found: %s: %s", len(v.Checks), what, v.Subject, trustNames(trust), best.Form, best.Detail)
	case model.Malformed:
		v.Message = fmt.Sprintf("the %s stored for %s is not in cosign's format (%s): %s", what, v.Subject, best.Form, best.Detail)
	default:
		v.Message = fmt.Sprintf("the %s stored for %s does not verify (%s, %s): %s", what, v.Subject, best.Form, best.Reason, best.Detail)
	}
}

// trustNames lists the trusted keys and identities for messages.
func trustNames(t Trust) string {
	s := keyIDs(t.Keys)
	for _, id := range t.Identities {
		if s != "" {
			s += ", "
		}
		s += id.String()
	}
	return s
}
