package model

import (
	"strings"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Artifact is what a registry (or OCI image layout) holds for one provider
// release, as pkg/remote read it: plain data, so that the registry checks
// (registry-digest, version-reused, signature, provenance) stay pure
// functions of the model. Digests are "sha256:<hex>".
type Artifact struct {
	// Ref is where the artifact was looked up: "REPO:TAG" or "REPO@DIGEST"
	// (REPO is HOST[:PORT]/PATH or oci-layout:DIR).
	Ref string
	// Repository is REPO of Ref.
	Repository string
	// Found: the tag (or digest) resolved to a manifest.
	Found bool
	// Refused says why the artifact was not looked up at all: the
	// provider's spec.fetchConfig.oci names a registry the operator of
	// pinseal did not allow (--registry, --allow-registry), or is a value
	// the cluster-api-operator cannot read either. "" when it was looked up.
	Refused string
	// PlainHTTP: the registry was reached over plain HTTP (--plain-http,
	// or an http:// fetchConfig.oci), so commands in hints need it too.
	PlainHTTP bool
	// OCISource: the artifact is the one the provider's
	// spec.fetchConfig.oci names (not PREFIX/<type>-<name>:<release>).
	OCISource bool
	// Err says why the artifact could not be looked up or read: the
	// registry failed, a stored layer does not match the manifest's digest
	// (Tampered), a limit was exceeded, the manifest is not an image
	// manifest. "" when everything was read and verified.
	Err string
	// Tampered: Err is about stored bytes that do not match the digest
	// the manifest gives them.
	Tampered bool
	// Digest is the manifest digest the tag resolved to (what signatures
	// and attestations are about); "" when not Found.
	Digest string

	// Layer digests, "" when the artifact has no such layer: components.gz,
	// metadata.yaml and the raw components YAML (titled YAMLTitle: the
	// layer the cluster-api-operator installs, components.yaml in what
	// builder push writes).
	BlobSHA256     string
	MetadataSHA256 string
	YAMLSHA256     string
	YAMLTitle      string
	// Layers maps the title of every titled, non-empty layer to its digest:
	// what the operator's OCI lookup chooses from (the oci-install check).
	Layers map[string]string
	// Missing lists the titles of layers a provider release must have
	// but the artifact lacks (components.gz, metadata.yaml and a
	// components YAML the cluster-api-operator looks for).
	Missing []string

	// Config is the artifact's pinseal config; nil when the manifest's
	// config is not one (ConfigMediaType says what it is).
	Config          *ArtifactConfig
	ConfigMediaType string

	Signature  Signature
	Provenance Provenance

	// Content is what is inside the layers; set only when they were
	// inspected (verifier verify REF), nil for the tree comparison.
	Content *ArtifactContent
}

// Pinned is the artifact by digest, "REPO@sha256:…"; "" when not found.
func (a *Artifact) Pinned() string {
	if a == nil || a.Digest == "" {
		return ""
	}
	return a.Repository + "@" + a.Digest
}

// ArtifactConfig is the artifact's config blob, as pkg/artifact writes it
// (Release.Config) and reads it back. Field names are a stable contract.
type ArtifactConfig struct {
	Kind           string       `json:"kind"`
	Name           string       `json:"name"`
	Type           string       `json:"type"`
	Release        string       `json:"release"`
	Version        string       `json:"version"`
	Contract       string       `json:"contract"`
	Pins           []pin.Source `json:"pins"`
	VersionPins    []VersionPin `json:"versionPins,omitempty"`
	BuilderVersion string       `json:"builderVersion"`
}

// VersionPin is one version variable of a package.
type VersionPin struct {
	File  string `json:"file"` // slash path relative to the package directory
	Line  int    `json:"line,omitempty"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Reason says why a signature or attestation does not verify. pkg/sign
// decides it, pkg/remote records it in Signature and Provenance, pkg/check
// words the findings about it.
type Reason string

// The reasons, spelled here once.
const (
	NoSignature    Reason = "no-signature"    // nothing stored for the digest
	OtherKey       Reason = "other-key"       // signed, but by none of the trusted keys
	WrongDigest    Reason = "wrong-digest"    // a trusted key signed a different digest (copied signature)
	Malformed      Reason = "malformed"       // a layer that is not a cosign signature or attestation
	WrongPredicate Reason = "wrong-predicate" // a valid attestation of another predicate type
	NoTrustedKeys  Reason = "no-trusted-keys" // the caller passed no keys
	TooLarge       Reason = "too-large"       // the image exceeds sign.Limits; nothing of it was verified
	// Bundle and keyless reasons.
	BadSignature  Reason = "bad-signature"         // it names a trusted key or certificate whose signature does not verify: tampered
	WrongIdentity Reason = "wrong-identity"        // a valid keyless signature by an identity the policy does not trust
	CertExpired   Reason = "certificate-expired"   // the certificate was not valid at the signing time its timestamps prove
	UntrustedCert Reason = "untrusted-certificate" // the certificate does not chain to the trusted root (or there is none)
	NoTimestamp   Reason = "no-timestamp"          // a keyless signature with no verified timestamp or log entry time
	TLogMissing   Reason = "tlog-missing"          // the policy requires a transparency-log entry; none verifies
	// ReadError: the signatures or attestations could not be read at all
	// (pkg/remote; the registry failed), so there is no verdict.
	ReadError Reason = "error"
)

// Signature is the verdict on the signatures stored for the artifact's
// digest under the trusted keys.
type Signature struct {
	// Checked: a verification was attempted (false when the artifact was
	// not found).
	Checked bool
	Valid   bool
	// Reason, when not Valid: pkg/sign's verdict, or ReadError when the
	// signatures could not be read (Message says why).
	Reason  Reason
	Message string
	// KeyID is the trusted key ("sha256:<hex>" of its DER) that verified it.
	KeyID string
	// Identity is the keyless signer (certificate SAN and issuer) that
	// verified it, or that the failing reason is about.
	Identity string
	// Form is what was found: legacy .sig/.att layer or a Sigstore bundle
	// (version, DSSE or message signature, referrers API or tag schema).
	Form string
}

// Provenance is the verdict on the SLSA provenance attestations stored for
// the artifact's digest, and what the first valid one says.
type Provenance struct {
	Checked bool
	// Found: at least one attestation is stored for the digest (valid or
	// not).
	Found bool
	// Valid: a trusted key signed a SLSA provenance v1 statement whose
	// subject is the artifact's digest.
	Valid   bool
	Reason  Reason // as Signature.Reason (also WrongPredicate)
	Message string
	KeyID   string
	// Identity and Form as in Signature.
	Identity string
	Form     string
	// What the valid statement says.
	BuilderID string
	BuildType string
	// Materials are its resolvedDependencies (URL, SHA-256, name as To)
	// but the images.
	Materials []pin.Source
	// Images are the image references its image dependencies name;
	// ImagesRecorded says the statement records them (a provenance from
	// before image dependencies does not, and is not compared).
	Images         []string
	ImagesRecorded bool
	// Kind, Name and Release are the provider release its
	// externalParameters name ("" when it names none).
	Kind, Name, Release string
}

// ArtifactContent is what verify REF finds inside an artifact's layers.
type ArtifactContent struct {
	// Blob is the components.gz layer inspected (nil when absent).
	Blob *blob.Info
	// YAMLSize and YAMLDigest describe the raw YAML layer.
	YAMLSize   int64
	YAMLDigest blob.Digest
	// Diff is where gunzip(components.gz) first differs from the raw YAML
	// layer; nil when they are equal (or either is missing or the blob
	// does not inflate: Blob.Err says why).
	Diff *blob.Diff
	// Images are the distinct workload images the raw YAML layer runs.
	Images []string
	// Metadata is the metadata.yaml layer parsed; nil when absent.
	Metadata *Metadata
	// Version is the upstream version the release series is looked up for
	// (the config's version, else the version part of the release).
	Version string
}

// SameSHA256 compares two "sha256:<hex>" (or bare hex) digests, ignoring
// case; empty digests are never the same.
func SameSHA256(a, b string) bool {
	a, b = strings.TrimPrefix(a, "sha256:"), strings.TrimPrefix(b, "sha256:")
	return a != "" && strings.EqualFold(a, b)
}
