package verify

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// RefOptions tune the verification of one artifact. The zero value
// verifies a TLS registry's artifact with the built-in policy (which
// trusts no key: give Keys or a policy with keys).
type RefOptions struct {
	// Policy decides severities, waivers, trusted keys and allowed
	// builders; nil means policy.Default().
	Policy *policy.Policy
	// Keys are trusted on top of the policy's keys.
	Keys []*sign.PublicKey
	// Registry says how registries are reached (plain HTTP, credentials).
	Registry artifact.Options
	// Limit bounds the inflated size of components.gz (blob.DefaultLimit
	// when <= 0).
	Limit int64
	// Tag is the release tag ref was resolved from when ref is pinned by
	// digest (the service resolves HOST/REPO:TAG first): the release the
	// artifact must be, as if ref were REPO:TAG. Ignored when ref is a tag.
	Tag string
	// Now decides waiver expiry; zero means time.Now().
	Now time.Time
	// Tool names the program in the report; zero means verifier.
	Tool report.Tool
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
}

// Ref verifies the artifact at ref (HOST[:PORT]/REPO:TAG, REPO@sha256:…,
// or oci-layout:DIR:TAG) before it is deployed: its signature and SLSA
// provenance under the trusted keys (subject digest; materials equal to
// the pins in the artifact's config; builder allowed by the policy), every
// layer against the manifest, and its inside (components.gz is one clean,
// reproducible gzip stream that inflates to exactly the raw
// components YAML layer; every operator release finds it and
// metadata.yaml (oci-install); metadata.yaml has a release series for
// the release, with the config's contract).
//
// The report has Root = ref and one package, the repository, with one
// provider whose Artifact is the verified REPO@DIGEST; digest is that
// digest. The error is non-nil only when nothing could be verified: the
// reference is malformed, names no tag or digest, does not resolve (wraps
// errdef.ErrNotFound), the registry cannot be reached, a key cannot be
// read, or no key is trusted (ErrNoTrustedKeys) while the signature or
// provenance check is on. Everything wrong with the artifact is a finding.
func Ref(ctx context.Context, ref string, opts RefOptions) (*report.Report, string, error) {
	r, a, err := RefArtifact(ctx, ref, opts)
	if a == nil {
		return r, "", err
	}
	return r, a.Digest, err
}

// RefArtifact is Ref that also returns the artifact as read (nil when the
// reference could not be looked up at all): for a caller that compares
// its content with a copy elsewhere (a cluster's cache of it).
func RefArtifact(ctx context.Context, ref string, opts RefOptions) (*report.Report, *model.Artifact, error) {
	pol := opts.Policy
	if pol == nil {
		pol = policy.Default()
	}
	trust, err := TrustedBy(pol, opts.Keys)
	if err != nil {
		return nil, nil, err
	}
	repo, tag, err := artifact.OpenReference(ref, opts.Registry)
	if err != nil {
		return nil, nil, err
	}
	if tag == "" {
		return nil, nil, fmt.Errorf("reference %q names no tag or digest: write REPO:TAG or REPO@sha256:<hex>", ref)
	}
	a, pulled, err := remote.Fetch(ctx, repo, tag, remote.Options{Registry: opts.Registry, Trust: trust, Logger: opts.Logger})
	if err != nil {
		return nil, a, err
	}
	byTag := ""
	if _, derr := digest.Parse(tag); derr != nil {
		byTag = tag
	}
	if byTag == "" && opts.Tag != "" {
		byTag = opts.Tag
		a.Ref = repo.Name() + ":" + opts.Tag
	}
	if pulled != nil {
		remote.Inspect(a, pulled, byTag, opts.Limit)
	}

	t := artifactTree(ref, repo.Name(), byTag, a)
	r, err := Evaluate(ctx, t, refOptions(pol, t, opts))
	if err != nil {
		return nil, a, err
	}
	r.Root = ref
	return r, a, nil
}

// ResolveRef returns the manifest digest ("sha256:<hex>") ref points at.
func ResolveRef(ctx context.Context, ref string, opts artifact.Options) (string, error) {
	repo, tag, err := artifact.OpenReference(ref, opts)
	if err != nil {
		return "", err
	}
	if tag == "" {
		return "", fmt.Errorf("reference %q names no tag or digest: write REPO:TAG or REPO@sha256:<hex>", ref)
	}
	desc, err := repo.Resolve(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	return desc.Digest.String(), nil
}

// artifactTree models one artifact as a package (the repository) with one
// provider (kind and name from the artifact's config, version = the tag,
// else the config's release) that fetches from the artifact.
func artifactTree(ref, repo, tag string, a *model.Artifact) *model.Tree {
	p := &model.Provider{Version: tag, FetchOCI: a.Pinned(), Artifact: a}
	if c := a.Config; c != nil {
		p.Kind, p.Name = c.Kind, c.Name
		if p.Version == "" {
			p.Version = c.Release
		}
	}
	pkg := &model.Package{
		Path:      repo,
		Pins:      &pin.Set{},
		Providers: []*model.Provider{p},
		Files:     map[string]*model.File{},
	}
	return &model.Tree{Root: ref, Packages: []*model.Package{pkg}}
}

// refOptions evaluate the model t of an artifact: its checks alone
// (check.ArtifactChecks, the one list of them; the tree's other checks do
// not apply to it) under pol narrowed to its package.
func refOptions(pol *policy.Policy, t *model.Tree, opts RefOptions) Options {
	return Options{
		Options:   load.Options{Logger: opts.Logger},
		Policy:    refPolicy(pol, t.Packages[0].Path),
		Now:       opts.Now,
		Tool:      opts.Tool,
		Extra:     check.ArtifactChecks(pol.Builders),
		OnlyExtra: true,
	}
}

// refPolicy is pol narrowed to an artifact: only the waivers that name
// the artifact's package (its repository).
func refPolicy(pol *policy.Policy, pkg string) *policy.Policy {
	p := *pol
	p.Waivers = nil
	for _, w := range pol.Waivers {
		if ok, _ := path.Match(w.Package, pkg); ok || w.Package == pkg {
			p.Waivers = append(p.Waivers, w)
		}
	}
	return &p
}
