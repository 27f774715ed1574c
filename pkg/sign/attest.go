package sign

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/in-toto/in-toto-golang/in_toto"
	"github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/common"
	slsa1 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v1"
	"github.com/opencontainers/go-digest"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/empty"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"github.com/sigstore/sigstore/pkg/signature/options"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
)

// Provenance identifiers.
const (
	// StatementType is the in-toto statement type of the attestations.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateSLSAProvenance is SLSA provenance v1, which
	// `cosign verify-attestation --type slsaprovenance1` selects.
	PredicateSLSAProvenance = slsa1.PredicateSLSAProvenance
	// BuildType names how pinseal builds a provider release.
	BuildType = "https://github.com/pinseal/pinseal/buildtypes/provider-release/v1"
	// predicateAnnotation is the layer annotation cosign sets on attestations.
	predicateAnnotation = "predicateType"
)

// ProvenanceStatement returns the in-toto statement (JSON) of a SLSA
// provenance v1 predicate for the artifact subject (its manifest digest,
// named subjectName, e.g. the repository): buildDefinition holds the
// release's identity and patches (path, SHA-256) as externalParameters and
// its pinned sources (URL and SHA-256) and the images its components run
// (ImageDependency) as resolvedDependencies; runDetails.builder.id is pinseal's builder id, with its
// version. No timestamps: the same release gives the same statement.
func ProvenanceStatement(subjectName string, subject digest.Digest, rel artifact.Release) ([]byte, error) {
	if subject.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("provenance: subject %s is not a sha256 digest", subject)
	}
	deps := make([]slsa1.ResourceDescriptor, 0, len(rel.Pins))
	for _, p := range rel.Pins {
		deps = append(deps, slsa1.ResourceDescriptor{
			URI:    p.URL,
			Digest: common.DigestSet{"sha256": p.SHA256},
			Name:   p.To,
		})
	}
	imgs := releaseImages(rel)
	for _, ref := range imgs {
		d := slsa1.ResourceDescriptor{URI: ImageScheme + ref, Name: ImageDependency}
		if r := images.Parse(ref); strings.HasPrefix(r.Digest, "sha256:") {
			d.Digest = common.DigestSet{"sha256": strings.TrimPrefix(r.Digest, "sha256:")}
		}
		deps = append(deps, d)
	}
	builderVersion := rel.BuilderVersion
	if builderVersion == "" {
		builderVersion = version.Version
	}
	st := in_toto.ProvenanceStatementSLSA1{
		StatementHeader: in_toto.StatementHeader{
			Type:          StatementType,
			PredicateType: PredicateSLSAProvenance,
			Subject: []in_toto.Subject{{
				Name:   subjectName,
				Digest: common.DigestSet{"sha256": subject.Encoded()},
			}},
		},
		Predicate: slsa1.ProvenancePredicate{
			BuildDefinition: slsa1.ProvenanceBuildDefinition{
				BuildType:            BuildType,
				ExternalParameters:   externalParameters(rel, len(imgs)),
				ResolvedDependencies: deps,
			},
			RunDetails: slsa1.ProvenanceRunDetails{
				Builder: slsa1.Builder{
					ID:      version.BuilderID,
					Version: map[string]string{"pinseal": builderVersion},
				},
			},
		},
	}
	return json.Marshal(st)
}

// Image dependencies: beside its pinned sources, a provenance lists every
// container image the release's components run (the workload images
// internal/images finds in the YAML layer) as a resolvedDependency named
// ImageDependency whose URI is ImageScheme + the reference (with its
// sha256 digest when the reference pins one), and counts them in
// externalParameters[ImagesParameter].
const (
	ImageDependency = "image"
	ImageScheme     = "oci://"
	ImagesParameter = "images"
)

// releaseImages are the distinct images the release's components YAML
// runs. A workload document the scan cannot read is left out: image-ref
// reports it in the tree the release is pushed from.
func releaseImages(rel artifact.Release) []string {
	found, _ := images.ScanBytes(rel.YAML)
	return images.Distinct(found)
}

// NoPins is the provenance's externalParameters.pins of a release whose
// package pins no upstream download by SHA-256.
const NoPins = "none: the package pins no upstream download by SHA-256, so there are no materials; the artifact holds the package's vendored files as they stand"

func externalParameters(rel artifact.Release, images int) map[string]any {
	p := map[string]any{
		"kind":     rel.Kind,
		"name":     rel.Name,
		"type":     rel.Type,
		"release":  rel.Release,
		"version":  rel.Version,
		"contract": rel.Contract,
		// How many resolvedDependencies are images: recorded even when
		// none, so a verifier tells "runs no image" from a provenance
		// that predates image dependencies.
		ImagesParameter: images,
	}
	if len(rel.Patches) > 0 {
		p["patches"] = rel.Patches
	}
	if len(rel.VersionPins) > 0 {
		p["versionPins"] = rel.VersionPins
	}
	if len(rel.Pins) == 0 {
		// resolvedDependencies is empty: say why, so that nobody reads it
		// as "built from nothing".
		p["pins"] = NoPins
	}
	return p
}

// Attest signs statement (an in-toto statement about subject, e.g. from
// ProvenanceStatement) with key into a DSSE envelope and stores it as
// cosign does. An attestation already stored for subject that the same key
// signed, with the same predicate type, build definition and builder id,
// counts as present: nothing is written.
func Attest(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, statement []byte, opts Options) (Result, error) {
	var st in_toto.Statement
	if err := json.Unmarshal(statement, &st); err != nil {
		return Result{}, fmt.Errorf("attest: statement is not an in-toto statement: %w", err)
	}
	if st.PredicateType == "" {
		return Result{}, fmt.Errorf("attest: statement has no predicateType")
	}
	if !aboutSubject(st, subject) {
		return Result{}, fmt.Errorf("attest: the statement's subjects do not include %s", subject)
	}
	if opts.Format == FormatBundle {
		return attestBundle(ctx, repo, subject, key, statement, st.PredicateType, opts)
	}
	tag := AttestationTag(subject)
	res := Result{Subject: subject, Format: FormatLegacy, Tag: tag, KeyID: key.pub.ID}
	existing, err := readStored(ctx, repo, tag)
	if err != nil {
		return Result{}, fmt.Errorf("attest %s@%s: %w", repo.Name(), subject, err)
	}
	h, err := v1.NewHash(subject.String())
	if err != nil {
		return Result{}, err
	}
	for _, s := range existing {
		if s.err != nil {
			continue
		}
		c, got := checkAttestation(ctx, s.full, h, []*PublicKey{key.pub}, st.PredicateType)
		if c.Valid && sameClaims(got, statement) {
			res.Status = Present
			return res, nil
		}
	}

	env, err := sigdsse.WrapSigner(key.sv, types.IntotoPayloadType).SignMessage(bytes.NewReader(statement), options.WithContext(ctx))
	if err != nil {
		return Result{}, fmt.Errorf("attest %s@%s: %w", repo.Name(), subject, err)
	}
	layer, err := static.NewAttestation(env,
		static.WithLayerMediaType(types.DssePayloadType),
		static.WithAnnotations(map[string]string{predicateAnnotation: st.PredicateType}))
	if err != nil {
		return Result{}, err
	}
	if _, err := writeStored(ctx, repo, tag, append(raws(existing), layer)); err != nil {
		return Result{}, fmt.Errorf("attest %s@%s: %w", repo.Name(), subject, err)
	}
	res.Status = Signed
	return res, nil
}

// attestBundle stores a bundle-format attestation (cosign v3's) unless
// one by the same key with the same claims is already attached.
func attestBundle(ctx context.Context, repo artifact.Repository, subject digest.Digest, key *PrivateKey, statement []byte, predicateType string, opts Options) (Result, error) {
	res := Result{Subject: subject, Format: FormatBundle, KeyID: key.pub.ID}
	ok, err := bundlePresent(ctx, repo, subject, key, predicateType, func(got []byte) bool { return sameClaims(got, statement) })
	if err != nil {
		return Result{}, fmt.Errorf("attest %s@%s: %w", repo.Name(), subject, err)
	}
	if ok {
		res.Status = Present
		return res, nil
	}
	d, err := writeBundle(ctx, repo, subject, key, statement, predicateType, opts)
	if err != nil {
		return Result{}, fmt.Errorf("attest %s@%s: %w", repo.Name(), subject, err)
	}
	res.Status, res.Referrer = Signed, d.Digest.String()
	return res, nil
}

func aboutSubject(st in_toto.Statement, subject digest.Digest) bool {
	for _, s := range st.Subject {
		if s.Digest[subject.Algorithm().String()] == subject.Encoded() {
			return true
		}
	}
	return false
}

// sameClaims compares two statements on what an attestation claims:
// predicate type, subjects, build definition and builder id (not the
// builder version or run metadata).
func sameClaims(a, b []byte) bool {
	type claims struct {
		PredicateType string            `json:"predicateType"`
		Subject       []in_toto.Subject `json:"subject"`
		Predicate     struct {
			BuildDefinition any `json:"buildDefinition"`
			RunDetails      struct {
				Builder struct {
					ID string `json:"id"`
				} `json:"builder"`
			} `json:"runDetails"`
		} `json:"predicate"`
	}
	var ca, cb claims
	if json.Unmarshal(a, &ca) != nil || json.Unmarshal(b, &cb) != nil {
		return false
	}
	return reflect.DeepEqual(ca, cb)
}

// Dependency is one resolved dependency (material) of a provenance.
type Dependency struct {
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Name   string `json:"name,omitempty"`
}

// Provenance is a verified SLSA provenance v1 statement, decoded.
type Provenance struct {
	PredicateType  string
	Subjects       map[string]string // name -> sha256 hex
	BuildType      string
	BuilderID      string
	BuilderVersion map[string]string
	// ExternalParameters as recorded (for pinseal: kind, name, type,
	// release, version, contract).
	ExternalParameters map[string]any
	// Dependencies are the resolvedDependencies that are not images
	// (the pinned sources).
	Dependencies []Dependency
	// Images are the image references of the image dependencies.
	Images []string
	// Statement is the statement JSON exactly as signed.
	Statement []byte
}

// AttestationVerification is the verdict on the attestations of one digest
// and the provenance of the first valid one.
type AttestationVerification struct {
	Verification
	Provenance *Provenance
}

// VerifyAttestation checks the attestations stored for subject against the
// trusted keys (see VerifyAttestationWith).
func VerifyAttestation(ctx context.Context, repo artifact.Repository, subject digest.Digest, keys []*PublicKey) (*AttestationVerification, error) {
	return VerifyAttestationWith(ctx, repo, subject, Trust{Keys: keys})
}

// VerifyAttestationWith checks the attestations stored for subject, in
// every form (the legacy sha256-<hex>.att image of DSSE envelopes, and
// Sigstore bundles with a DSSE envelope attached as referrers), and returns
// the first valid SLSA provenance v1 (subject digest checked). The
// provenance check (pkg/check) compares its materials with the pins and
// its builder with the policy.
func VerifyAttestationWith(ctx context.Context, repo artifact.Repository, subject digest.Digest, trust Trust) (*AttestationVerification, error) {
	av := &AttestationVerification{Verification: Verification{Repository: repo.Name(), Subject: subject, Tag: AttestationTag(subject)}}
	if trust.Empty() {
		av.Reason, av.Message = model.NoTrustedKeys, "no trusted keys or identities to verify with: set keys (or identities) in the policy"
		return av, nil
	}
	h, err := v1.NewHash(subject.String())
	if err != nil {
		return nil, fmt.Errorf("verify attestation: subject %q: %w", subject, err)
	}
	take := func(c Check, stmt []byte) {
		if c.Valid && av.Provenance == nil {
			p, err := decodeProvenance(stmt)
			if err != nil {
				c = Check{Index: c.Index, Form: c.Form, Referrer: c.Referrer, Reason: model.Malformed, KeyID: c.KeyID, Identity: c.Identity, Detail: err.Error()}
			} else {
				av.Provenance = p
			}
		}
		av.Checks = append(av.Checks, c)
	}
	form := "legacy DSSE attestation in " + av.Tag
	err = eachStored(ctx, repo, av.Tag, func(i int, s stored) {
		var c Check
		var stmt []byte
		if s.err != nil {
			c = Check{Reason: model.Malformed, Detail: s.err.Error()}
		} else {
			c, stmt = checkAttestation(ctx, s.full, h, trust.Keys, PredicateSLSAProvenance)
		}
		c.Index, c.Form = i, form
		take(c, stmt)
	})
	if tooLarge(&av.Verification, err, "attestation") {
		av.Provenance = nil
		return av, nil
	}
	if err != nil {
		return nil, fmt.Errorf("verify attestation %s@%s: %w", repo.Name(), subject, err)
	}
	bs, src, err := readBundles(ctx, repo, subject, func(pt string) bool { return pt != SignPredicateType })
	if err != nil {
		return nil, fmt.Errorf("verify attestation %s@%s: %w", repo.Name(), subject, err)
	}
	av.Referrers = string(src)
	for _, sb := range bs {
		bv := checkBundle(sb, subject, trust)
		if bv.Reason != model.Malformed && (bv.predicateType == SignPredicateType || (bv.predicateType == "" && bv.statement == nil)) {
			continue // a signature, not an attestation
		}
		c := bv.Check
		c.Index, c.Form, c.Referrer = len(av.Checks), sb.form(), sb.referrer.String()
		if c.Valid && bv.predicateType != PredicateSLSAProvenance {
			c = Check{Index: c.Index, Form: c.Form, Referrer: c.Referrer, Reason: model.WrongPredicate, KeyID: c.KeyID, Identity: c.Identity,
				Detail: fmt.Sprintf("predicate type %s, want %s", bv.predicateType, PredicateSLSAProvenance)}
		}
		take(c, bv.statement)
	}
	summarize(&av.Verification, trust, "attestation")
	return av, nil
}

// checkAttestation verifies one DSSE layer with each key, checks that the
// statement is about h and of predicateType, and returns the statement.
func checkAttestation(ctx context.Context, att oci.Signature, h v1.Hash, keys []*PublicKey, predicateType string) (Check, []byte) {
	pl, err := att.Payload()
	if err != nil {
		return Check{Reason: model.Malformed, Detail: err.Error()}, nil
	}
	var env dsse.Envelope
	if err := json.Unmarshal(pl, &env); err != nil || env.PayloadType == "" {
		return Check{Reason: model.Malformed, Detail: "layer is not a DSSE envelope"}, nil
	}
	stmt, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return Check{Reason: model.Malformed, Detail: "DSSE payload is not base64"}, nil
	}
	one, err := mutate.AppendSignatures(empty.Signatures(), false, att)
	if err != nil {
		return Check{Reason: model.Malformed, Detail: err.Error()}, nil
	}
	for _, k := range keys {
		for _, kv := range k.verifiers {
			co := &cosign.CheckOpts{SigVerifier: kv, IgnoreTlog: true}
			if _, _, err := cosign.VerifyImageAttestation(ctx, one, h, co); err != nil {
				continue
			}
			if err := cosign.IntotoSubjectClaimVerifier(att, h, nil); err != nil {
				return Check{Reason: model.WrongDigest, KeyID: k.ID, Detail: fmt.Sprintf("signed by %s, but about another digest: %v", shortID(k.ID), err)}, stmt
			}
			var st in_toto.StatementHeader
			if err := json.Unmarshal(stmt, &st); err != nil {
				return Check{Reason: model.Malformed, KeyID: k.ID, Detail: "statement: " + err.Error()}, stmt
			}
			if st.PredicateType != predicateType {
				return Check{Reason: model.WrongPredicate, KeyID: k.ID, Detail: fmt.Sprintf("predicate type %s, want %s", st.PredicateType, predicateType)}, stmt
			}
			return Check{Valid: true, KeyID: k.ID}, stmt
		}
	}
	return Check{Reason: model.OtherKey, Detail: "no trusted key verifies it"}, stmt
}

func decodeProvenance(stmt []byte) (*Provenance, error) {
	var st in_toto.ProvenanceStatementSLSA1
	if err := json.Unmarshal(stmt, &st); err != nil {
		return nil, fmt.Errorf("SLSA provenance v1 statement: %w", err)
	}
	p := &Provenance{
		PredicateType:  st.PredicateType,
		Subjects:       map[string]string{},
		BuildType:      st.Predicate.BuildDefinition.BuildType,
		BuilderID:      st.Predicate.RunDetails.Builder.ID,
		BuilderVersion: st.Predicate.RunDetails.Builder.Version,
		Statement:      stmt,
	}
	for _, s := range st.Subject {
		p.Subjects[s.Name] = s.Digest["sha256"]
	}
	if ep, ok := st.Predicate.BuildDefinition.ExternalParameters.(map[string]any); ok {
		p.ExternalParameters = ep
	}
	for _, d := range st.Predicate.BuildDefinition.ResolvedDependencies {
		if ref, ok := strings.CutPrefix(d.URI, ImageScheme); ok && d.Name == ImageDependency {
			p.Images = append(p.Images, ref)
			continue
		}
		p.Dependencies = append(p.Dependencies, Dependency{URI: d.URI, SHA256: d.Digest["sha256"], Name: d.Name})
	}
	return p, nil
}

// String summarizes the provenance for messages.
func (p *Provenance) String() string {
	var deps []string
	for _, d := range p.Dependencies {
		deps = append(deps, d.URI)
	}
	return fmt.Sprintf("%s by %s from %s", p.PredicateType, p.BuilderID, strings.Join(deps, ", "))
}
