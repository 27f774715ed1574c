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
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/pinseal/pinseal/pkg/artifact"
)

// Options configure signing and attesting.
type Options struct {
	// TLog uploads signatures to a transparency log (Rekor). Not supported
	// by this build: signing is offline, and Sign/Attest return
	// ErrTLogUnsupported when it is set.
	TLog bool
}

// ErrTLogUnsupported is returned when a transparency log upload is asked for.
var ErrTLogUnsupported = errors.New("transparency log upload is not supported: pinseal signs offline with a key (verify with --insecure-ignore-tlog); to also log to Rekor, run `cosign sign --key cosign.key REPO@DIGEST` on the pushed digest")

// Status says what Sign or Attest did.
type Status string

const (
	Signed  Status = "signed"  // a new signature or attestation was stored
	Present Status = "present" // a valid one by the same key was already there; nothing written
)

// Result is the outcome of Sign or Attest.
type Result struct {
	Subject digest.Digest `json:"subject"` // the artifact's manifest digest
	Tag     string        `json:"tag"`     // where it is stored: sha256-<hex>.sig or .att
	Status  Status        `json:"status"`
	KeyID   string        `json:"keyID"`
}

// Sign signs the manifest digest subject in repo with key and stores the
// signature as cosign does. If a signature of subject valid under the same
// key is already stored, nothing is written (Status Present): pushing again
// does not pile up signatures.
func Sign(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, opts Options) (Result, error) {
	if opts.TLog {
		return Result{}, ErrTLogUnsupported
	}
	if err := subject.Validate(); err != nil {
		return Result{}, fmt.Errorf("sign: subject %q: %w", subject, err)
	}
	tag := SignatureTag(subject)
	res := Result{Subject: subject, Tag: tag, KeyID: key.pub.ID}
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

func raws(s []stored) []oci.Signature {
	out := make([]oci.Signature, len(s))
	for i := range s {
		out[i] = s[i].raw
	}
	return out
}

// Reason says why a signature or attestation does not verify.
type Reason string

const (
	NoSignature     Reason = "no-signature"     // nothing stored for the digest
	OtherKey        Reason = "other-key"        // signed, but by none of the trusted keys
	WrongDigest     Reason = "wrong-digest"     // a trusted key signed a different digest (copied signature)
	Malformed       Reason = "malformed"        // a layer that is not a cosign signature or attestation
	WrongPredicate  Reason = "wrong-predicate"  // a valid attestation of another predicate type
	NoTrustedKeys   Reason = "no-trusted-keys"  // the caller passed no keys
	UnknownKeyType  Reason = "unknown-key-type" // see KeyError; reported by key loading
	TooLarge        Reason = "too-large"        // the image exceeds Limits; nothing of it was verified
	MaterialsDiffer Reason = "materials-differ" // see Provenance.CompareMaterials
)

// Check is the verdict on one stored signature or attestation.
type Check struct {
	Index  int    `json:"index"`            // layer index in the image
	Valid  bool   `json:"valid"`            // verified by KeyID, for the subject (and, for attestations, the predicate type)
	Reason Reason `json:"reason,omitempty"` // when not Valid
	KeyID  string `json:"keyID,omitempty"`  // the trusted key that verified the bytes, if any
	Detail string `json:"detail,omitempty"`
}

// Verification is the verdict on the signatures (or attestations) of one
// artifact digest.
type Verification struct {
	Repository string        `json:"repository"`
	Subject    digest.Digest `json:"subject"`
	Tag        string        `json:"tag"`   // where they were looked up
	Valid      bool          `json:"valid"` // at least one Check is Valid
	// Reason is, when not Valid, the most telling reason over all checks:
	// wrong-digest, then wrong-predicate, other-key, malformed; no-signature
	// when nothing is stored.
	Reason  Reason  `json:"reason,omitempty"`
	Message string  `json:"message"`         // one line for humans
	KeyID   string  `json:"keyID,omitempty"` // the trusted key of the first valid check
	Checks  []Check `json:"checks"`
}

// Verify checks the signatures stored for subject in repo against the
// trusted keys. A registry or layout that cannot be read is an error; a
// missing, foreign or misplaced signature is a Verification with Valid
// false and a Reason.
func Verify(ctx context.Context, repo artifact.Repository, subject digest.Digest, keys []*PublicKey) (*Verification, error) {
	v := &Verification{Repository: repo.Name(), Subject: subject, Tag: SignatureTag(subject)}
	if len(keys) == 0 {
		v.Reason, v.Message = NoTrustedKeys, "no trusted keys to verify with: pass --key or set keys in the policy"
		return v, nil
	}
	h, err := v1.NewHash(subject.String())
	if err != nil {
		return nil, fmt.Errorf("verify: subject %q: %w", subject, err)
	}
	err = eachStored(ctx, repo, v.Tag, func(i int, s stored) {
		var c Check
		if s.err != nil {
			c = Check{Reason: Malformed, Detail: s.err.Error()}
		} else {
			c = checkSignature(ctx, s.full, h, keys)
		}
		c.Index = i
		v.Checks = append(v.Checks, c)
	})
	if tooLarge(v, err, "signature") {
		return v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify %s@%s: %w", repo.Name(), subject, err)
	}
	summarize(v, keys, "signature")
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
	v.Reason = TooLarge
	v.Message = fmt.Sprintf("the %s image %s:%s was not read: %v", what, v.Repository, v.Tag, le)
	return true
}

// checkSignature verifies one simple-signing layer with each key.
func checkSignature(ctx context.Context, sig oci.Signature, h v1.Hash, keys []*PublicKey) Check {
	if b64, _ := sig.Base64Signature(); b64 == "" {
		return Check{Reason: Malformed, Detail: "layer has no " + static.SignatureAnnotationKey + " annotation"}
	}
	for _, k := range keys {
		for _, kv := range k.verifiers {
			co := &cosign.CheckOpts{SigVerifier: kv, IgnoreTlog: true}
			if _, err := cosign.VerifyImageSignature(ctx, sig, h, co); err != nil {
				continue
			}
			if err := cosign.SimpleClaimVerifier(sig, h, nil); err != nil {
				return Check{Reason: WrongDigest, KeyID: k.ID, Detail: fmt.Sprintf("signed by %s, but for another digest: %v", shortID(k.ID), err)}
			}
			return Check{Valid: true, KeyID: k.ID}
		}
	}
	return Check{Reason: OtherKey, Detail: "no trusted key verifies it"}
}

// summarize sets Valid, Reason, Message and KeyID from the checks.
func summarize(v *Verification, keys []*PublicKey, what string) {
	for _, c := range v.Checks {
		if c.Valid {
			v.Valid, v.KeyID = true, c.KeyID
			v.Message = fmt.Sprintf("%s of %s verified by key %s", what, v.Subject, shortID(c.KeyID))
			return
		}
	}
	if len(v.Checks) == 0 {
		v.Reason = NoSignature
		v.Message = fmt.Sprintf("no %s stored for %s (looked for %s:%s)", what, v.Subject, v.Repository, v.Tag)
		return
	}
	rank := map[Reason]int{WrongDigest: 4, WrongPredicate: 3, OtherKey: 2, Malformed: 1}
	best := v.Checks[0]
	for _, c := range v.Checks[1:] {
		if rank[c.Reason] > rank[best.Reason] {
			best = c
		}
	}
	v.Reason = best.Reason
	switch best.Reason {
	case WrongDigest:
		v.Message = fmt.Sprintf("the %s stored for %s was made by a trusted key for a different digest (copied from another artifact?)", what, v.Subject)
	case WrongPredicate:
		v.Message = fmt.Sprintf("no %s of the expected predicate type for %s: %s", what, v.Subject, best.Detail)
	case OtherKey:
		v.Message = fmt.Sprintf("%d %s(s) stored for %s, none by a trusted key (%s)", len(v.Checks), what, v.Subject, keyIDs(keys))
	default:
		v.Message = fmt.Sprintf("the %s stored for %s is not in cosign's format: %s", what, v.Subject, best.Detail)
	}
}
