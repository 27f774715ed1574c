// Package admission decides whether the API server admits a provider object or provider-components ConfigMap the cluster-api-operator would install.
//
// A Decider reads one admission request (admission.k8s.io/v1) and returns
// a Verdict: the problems that keep the object from being installed as a
// release pinseal can vouch for, each naming its rule and the fix. What is
// vouched for comes from a policy (pkg/policy: trusted keys and keyless
// identities, and its admission section: the registries releases are
// published under, the git sources and commits whose trees vouch, and the
// install-time downloads it pins); the registry is behind the Releases
// interface and the git sources behind Trees, so the decisions are pure
// functions of the request, the policy and what those answer. Modes (enforce, warn,
// audit) and the AdmissionReview answer are Respond's.
package admission

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/policy"
)

// IdentityLabel names the provider a components ConfigMap is a release of,
// as <type>-<name> (core-cluster-api, infrastructure-proxmox): the
// repository its release is looked up in under each trusted prefix. It is
// the label internal/app/vendor selects its ConfigMap packages by.
const IdentityLabel = "vendor.pinseal.dev/provider"

// Annotation and keys the operator reads from a components ConfigMap
// (cluster-api-operator v0.28.0 internal/controller/manifests_downloader.go
// and phase_lifecycle.go: configmap repository).
const (
	CompressedAnnotation = "provider.cluster.x-k8s.io/compressed"
	ComponentsKey        = "components"
	MetadataKey          = "metadata"
)

// Group is the API group of the provider kinds.
const Group = "operator.cluster.x-k8s.io"

// Rule names why an object is not admitted.
type Rule string

// The rules.
const (
	// RuleObject: the request or its object cannot be read.
	RuleObject Rule = "object"
	// RuleIdentity: a components ConfigMap does not say which provider it
	// is a release of, so no release can vouch for it.
	RuleIdentity Rule = "identity"
	// RuleVersion: the release name (version label, else the ConfigMap's
	// name) is not a semantic version: the operator cannot install it.
	RuleVersion Rule = "version"
	// RuleComponents: the components or metadata are missing or do not
	// inflate (corrupt, a gzip bomb over the bound).
	RuleComponents Rule = "components"
	// RuleUnsigned: no release pinseal can vouch for exists under the
	// name: none is published, or it is not signed by a trusted key or
	// identity, or its provenance does not verify.
	RuleUnsigned Rule = "unsigned"
	// RuleContent: the components or metadata differ from the signed
	// release of the same name (tampered).
	RuleContent Rule = "content"
	// RuleEdit: an UPDATE changes the components or metadata under the
	// same release name: clusters that installed the name never get it.
	RuleEdit Rule = "in-place-edit"
	// RuleOCI: the operator cannot fetch spec.fetchConfig.oci as written
	// (a digest it cannot parse, a tag other than spec.version, ...), or it
	// points outside the trusted registries.
	RuleOCI Rule = "oci-source"
	// RuleDownload: the operator downloads the provider at install time
	// (spec.fetchConfig.url, or clusterctl's built-in list) and the policy
	// does not pin its bytes.
	RuleDownload Rule = "download"
	// RuleSelector: spec.fetchConfig.selector does not require the
	// identity label, so it can select a ConfigMap the webhook never saw.
	RuleSelector Rule = "selector"
	// RuleUnverified: the release could not be checked (registry down,
	// the webhook's time ran out). Never cached.
	RuleUnverified Rule = "unverified"
)

// Rules lists every rule.
func Rules() []Rule {
	return []Rule{RuleObject, RuleIdentity, RuleVersion, RuleComponents, RuleUnsigned, RuleContent,
		RuleEdit, RuleOCI, RuleDownload, RuleSelector, RuleUnverified}
}

// Problem is one rule an object breaks.
type Problem struct {
	Rule    Rule   `json:"rule"`
	Message string `json:"message"`
	// Fix says what to do instead.
	Fix string `json:"fix"`
}

// Verdict is the decision about one object.
type Verdict struct {
	// Object is "Kind namespace/name".
	Object string `json:"object"`
	// Problems are empty when the object is admitted.
	Problems []Problem `json:"problems,omitempty"`
	// Vouched says which release vouched for it ("" when none needed to:
	// an object that is not a provider release).
	Vouched string `json:"vouched,omitempty"`
	// Key is the content digest the verdict may be cached under; "" when
	// it must not be (RuleUnverified, a request not read).
	Key string `json:"-"`
}

// Allowed reports whether no rule is broken.
func (v Verdict) Allowed() bool { return len(v.Problems) == 0 }

// Release is a release looked up in a registry and verified.
type Release struct {
	// Ref is REPO:TAG looked up; Digest the manifest digest it resolved to.
	Ref    string
	Digest string
	// Kind and Name are the provider the artifact's config names.
	Kind, Name string
	// Components and Metadata are the SHA-256 (hex) of the raw components
	// YAML and metadata.yaml the artifact holds.
	Components, Metadata string
	// Problem says why the release cannot vouch for anything (not found,
	// unsigned, provenance, a layer missing); "" when it can.
	Problem string
	// Fix says what to do about Problem.
	Fix string
}

// Releases looks up releases. An error means the release could not be
// checked (the registry unreachable, ctx done): the decision is not cached.
type Releases interface {
	Lookup(ctx context.Context, ref string) (Release, error)
}

// TreeRelease is a components ConfigMap a git source's tree renders at a
// commit: the release of provider Identity (<type>-<name>) named Release.
type TreeRelease struct {
	Identity, Release string
	// Components (inflated) and Metadata are SHA-256 hex.
	Components, Metadata string
	// File is where the tree renders it (slash path in the tree).
	File string
}

// Trees reads the components ConfigMaps a configured git source's tree
// renders at a commit. An error means the tree could not be read in time
// (fetch failed, ctx done): the decision is not cached.
type Trees interface {
	Releases(ctx context.Context, source, commit string) ([]TreeRelease, error)
}

// Decider decides admission requests.
type Decider struct {
	// Policy holds the trusted keys and identities (applied by Releases)
	// and the admission section.
	Policy *policy.Policy
	// Releases looks releases up; nil: nothing is vouched for.
	Releases Releases
	// Trees reads the trees of the git sources the policy trusts
	// (admission.gitSources); nil: no git source vouches.
	Trees Trees
	// InflateLimit bounds the inflated components of a ConfigMap
	// (blob.DefaultLimit when <= 0).
	InflateLimit int64
	// Fingerprint is folded into every cache key (the policy's), so a
	// changed policy never serves an old verdict.
	Fingerprint string
}

// Decide returns the verdict about req. It never fails: what cannot be
// read is a problem of the verdict.
func (d *Decider) Decide(ctx context.Context, req *admissionv1.AdmissionRequest) Verdict {
	if req == nil {
		return Verdict{Object: "(no request)", Problems: []Problem{{Rule: RuleObject,
			Message: "the AdmissionReview has no request", Fix: "send an admission.k8s.io/v1 AdmissionReview with a request"}}}
	}
	obj := fmt.Sprintf("%s %s", req.Kind.Kind, objectName(req.Namespace, req.Name))
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return Verdict{Object: obj}
	}
	var v Verdict
	switch {
	case req.Kind.Group == "" && req.Kind.Kind == "ConfigMap":
		v = d.configMap(ctx, req)
	case req.Kind.Group == Group && len(operator.Types(req.Kind.Kind)) > 0:
		v = d.provider(ctx, req)
	default:
		v = Verdict{}
	}
	if v.Object == "" {
		v.Object = obj
	}
	return v
}

func objectName(ns, name string) string {
	if name == "" {
		name = "(generated name)"
	}
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// key is the cache key of a verdict: a digest of what the decision read.
func (d *Decider) key(parts ...string) string {
	h := sha256.New()
	h.Write([]byte(d.Fingerprint))
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%d:%s", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (d *Decider) registries() []string {
	if d.Policy == nil || d.Policy.Admission == nil {
		return nil
	}
	return d.Policy.Admission.Registries
}

// vouch finds a release that vouches for components and metadata of
// release of repo (<type>-<name>): a signed artifact <prefix>/<repo>:<release>
// under a trusted prefix, else the same release rendered by a trusted git
// source's tree at a trusted commit. It returns what vouched, or the
// problem: unverified (some voucher could not be checked; never cached)
// before content (a voucher holds the release with other content) before
// unsigned (none holds it).
func (d *Decider) vouch(ctx context.Context, repo, release, components, metadata, what string) (vouched string, p *Problem, unverified bool) {
	prefixes := d.registries()
	var gits []policy.GitVoucher
	if d.Policy != nil && d.Policy.Admission != nil {
		gits = d.Policy.Admission.GitSources
	}
	if (len(prefixes) == 0 || d.Releases == nil) && (len(gits) == 0 || d.Trees == nil) {
		return "", &Problem{Rule: RuleUnsigned,
			Message: fmt.Sprintf("the admission policy trusts no registry and no git source, so nothing can vouch for release %s of %s", release, repo),
			Fix:     "list the registry prefix builder push publishes to under admission.registries in the policy file, or a git source and its reviewed commits under admission.gitSources"}, false
	}
	v := &vouching{repo: repo, release: release, components: components, metadata: metadata, what: what}
	if d.Releases != nil {
		if by := v.bySignedRelease(ctx, d.Releases, prefixes); by != "" {
			return by, nil, false
		}
	}
	if d.Trees != nil {
		if by := v.byGitSources(ctx, d.Trees, gits); by != "" {
			return by, nil, false
		}
	}
	p, unverified = v.problem()
	return "", p, unverified
}

// vouching is one search for a voucher of a release's content: what it
// asks, and the first problem of each kind the vouchers it read gave.
type vouching struct {
	repo, release, components, metadata, what string

	unverified, content, unsigned *Problem
	// read are the git sources at trusted commits read, none of which
	// renders the release.
	read []string
}

// bySignedRelease looks the release up under each trusted registry
// prefix; it returns the signed artifact that holds exactly the content,
// else "" with what each prefix gave noted.
func (v *vouching) bySignedRelease(ctx context.Context, releases Releases, prefixes []string) string {
	for _, prefix := range prefixes {
		ref := prefix + "/" + v.repo + ":" + v.release
		r, err := releases.Lookup(ctx, ref)
		if err != nil {
			v.noteUnverified(fmt.Sprintf("could not check %s: %v", ref, err),
				"retry once the registry answers; if it is slow, raise the webhook's timeoutSeconds (at most 30)")
			continue
		}
		if r.Problem != "" {
			if v.unsigned == nil {
				v.unsigned = &Problem{Rule: RuleUnsigned, Message: fmt.Sprintf("%s: %s", ref, r.Problem), Fix: r.Fix}
			}
			continue
		}
		diffs := differ(v.components, v.metadata, r.Components, r.Metadata, "the signed release")
		if len(diffs) == 0 {
			return r.Ref + "@" + r.Digest
		}
		v.noteContent(fmt.Sprintf("%s is not the signed release %s@%s: %s", v.what, ref, r.Digest, strings.Join(diffs, "; ")),
			"install the release as built (builder push writes it; the ConfigMap's components and metadata must be the artifact's), or build, sign and push a new release under a new name")
	}
	return ""
}

// byGitSources reads the tree of each trusted git source at each trusted
// commit; it returns the one that renders the release with exactly the
// content, else "" with what each gave noted.
func (v *vouching) byGitSources(ctx context.Context, trees Trees, gits []policy.GitVoucher) string {
	for _, g := range gits {
		for _, commit := range g.Commits {
			at := fmt.Sprintf("git source %s at %s", g.Source, short(commit))
			rels, err := trees.Releases(ctx, g.Source, commit)
			if err != nil {
				v.noteUnverified(fmt.Sprintf("could not read %s: %v", at, err),
					"retry once the git server answers (the tree is kept once fetched); if the fetch is slow, raise the webhook's timeoutSeconds (at most 30)")
				continue
			}
			for _, r := range rels {
				if r.Identity != v.repo || r.Release != v.release {
					continue
				}
				diffs := differ(v.components, v.metadata, r.Components, r.Metadata, "the tree's")
				if len(diffs) == 0 {
					return fmt.Sprintf("git source %s at %s (%s)", g.Source, commit, r.File)
				}
				v.noteContent(fmt.Sprintf("%s is not release %s of %s as %s renders it (%s): %s", v.what, v.release, v.repo, at, r.File, strings.Join(diffs, "; ")),
					"install the ConfigMap the trusted commit renders (helm template of the package at that commit), or trust the commit that holds this content under admission.gitSources once it is reviewed")
			}
			v.read = append(v.read, at)
		}
	}
	return ""
}

// noteUnverified keeps the first voucher that could not be checked.
func (v *vouching) noteUnverified(msg, fix string) {
	if v.unverified == nil {
		v.unverified = &Problem{Rule: RuleUnverified, Message: msg, Fix: fix}
	}
}

// noteContent keeps the first voucher that holds the release with other
// content.
func (v *vouching) noteContent(msg, fix string) {
	if v.content == nil {
		v.content = &Problem{Rule: RuleContent, Message: msg, Fix: fix}
	}
}

// problem is why nothing vouched: unverified before content before
// unsigned, where unsigned names the registries' answers and the git
// sources read.
func (v *vouching) problem() (p *Problem, unverified bool) {
	switch {
	case v.unverified != nil:
		return v.unverified, true
	case v.content != nil:
		return v.content, false
	case v.unsigned != nil && len(v.read) == 0:
		return v.unsigned, false
	}
	var where []string
	if v.unsigned != nil {
		where = append(where, v.unsigned.Message)
	}
	if len(v.read) > 0 {
		where = append(where, fmt.Sprintf("no trusted commit renders release %s of %s (read: %s)", v.release, v.repo, strings.Join(v.read, ", ")))
	}
	fix := "build, sign and push the release with builder push"
	if len(v.read) > 0 {
		fix = "commit the release's ConfigMap package to the git source and trust that commit under admission.gitSources once it is reviewed, or " + fix
	}
	return &Problem{Rule: RuleUnsigned, Message: strings.Join(where, "; "), Fix: fix}, false
}

// differ lists how components and metadata differ from a voucher's.
func differ(components, metadata, vc, vm, whose string) []string {
	var diffs []string
	if vc != components {
		diffs = append(diffs, fmt.Sprintf("components sha256:%s, %s has sha256:%s", short(components), whose, short(vc)))
	}
	if vm != metadata {
		diffs = append(diffs, fmt.Sprintf("metadata sha256:%s, %s has sha256:%s", short(metadata), whose, short(vm)))
	}
	return diffs
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(none)"
	}
	return h
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// semver reports whether v is a version the operator accepts.
func semver(v string) bool {
	_, err := version.ParseSemantic(v)
	return err == nil
}

// decode reads raw into v, with a problem naming what failed.
func decode(raw []byte, v any, what string) *Problem {
	if len(raw) == 0 {
		return &Problem{Rule: RuleObject, Message: what + " is empty", Fix: "send the object in the AdmissionReview request"}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &Problem{Rule: RuleObject, Message: fmt.Sprintf("%s cannot be read: %v", what, err), Fix: "send a well-formed object"}
	}
	return nil
}

// errLimit marks an inflate over the bound.
var errLimit = errors.New("over the inflate limit")

// inflated is the SHA-256 (hex) of what the operator installs from a
// compressed components value, inflated at most limit bytes.
func inflated(ctx context.Context, gz []byte, limit int64) (string, error) {
	info := blob.InspectBytes(ctx, gz, limit, nil, nil)
	if info.Err != nil {
		if c, ok := blob.IsCorrupt(info.Err); ok && c.Kind == blob.TooLarge {
			return "", fmt.Errorf("%w (%d bytes): %v", errLimit, limit, info.Err)
		}
		return "", info.Err
	}
	return info.RawSHA256.Hex(), nil
}
