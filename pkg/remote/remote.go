// Package remote attaches the registry artifacts of a tree's providers to
// the model.
//
// It is the registry edge of the verifier: for the providers of
// a loaded tree (or for one reference) it resolves the release artifact in
// a registry or OCI image layout, pulls its manifest, config and layers
// (bounded, every byte checked against its digest), verifies its
// signatures and provenance attestations against the trusted keys with
// pkg/sign, and records everything as plain data in the model
// (model.Provider.Artifact). The registry checks in pkg/check then judge
// that data without any I/O.
package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/sign"
)

// DefaultWorkers is how many artifacts Attach reads at once by default.
const DefaultWorkers = 4

// Options configure how artifacts are read and verified.
type Options struct {
	// Registry says how registries are reached (plain HTTP, credentials
	// from the docker config, transport, timeouts, retries).
	Registry artifact.Options
	// Keys are the trusted public keys signatures and attestations are
	// verified with. None: every signature and attestation verdict is
	// "no-trusted-keys".
	Keys []*sign.PublicKey
	// Trust adds keyless identities, the trusted root and the
	// transparency-log rule; its Keys are used when Keys is empty.
	Trust sign.Trust
	// Workers is how many artifacts Attach reads at once; <= 0 means
	// DefaultWorkers.
	Workers int
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
	// Allow are the registries (HOST[:PORT]) or repository prefixes
	// (HOST[:PORT]/PATH) a provider's spec.fetchConfig.oci may be read
	// from. A provider fetching from anywhere else is not contacted: its
	// Artifact is Refused, saying how to allow it.
	Allow []string
}

func (o Options) trust() sign.Trust {
	t := o.Trust
	if len(o.Keys) > 0 {
		t.Keys = o.Keys
	}
	return t
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Attach looks up, for every provider of t, the artifact tagged with its
// release (spec.version) in PREFIX/<type>-<name> and sets p.Artifact to
// what it found. A provider with spec.fetchConfig.oci is looked up where
// that says instead ([http://]HOST/REPO[:TAG], no tag meaning
// spec.version, as the cluster-api-operator reads it), and only when the
// repository is within opts.Allow; otherwise its Artifact is Refused and
// nothing is contacted. With a zero prefix only such providers are
// looked up. Nothing about an artifact is an error: a missing tag is Found
// false, a registry failure or a tampered layer is Artifact.Err, a bad
// signature is a verdict. The error is non-nil only when ctx ends.
func Attach(ctx context.Context, t *model.Tree, prefix artifact.Prefix, opts Options) error {
	type job struct {
		ref string
		p   *model.Provider
	}
	var jobs []job
	for _, pkg := range t.Packages {
		for _, p := range pkg.Providers {
			switch {
			case p.FetchOCI != "":
				jobs = append(jobs, job{p: p})
			case prefix != (artifact.Prefix{}):
				jobs = append(jobs, job{ref: p.RepositoryName() + ":" + p.Version, p: p})
			}
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	// One lookup per distinct repository and release, and per distinct
	// spec.fetchConfig.oci and release (what attachOCI depends on).
	var (
		mu    sync.Mutex
		found = map[string]*model.Artifact{}
		once  = map[string]*sync.Once{}
	)
	lookup := func(p *model.Provider) *model.Artifact {
		key, attach := p.RepositoryName()+":"+p.Version, func() *model.Artifact { return attachOne(ctx, prefix, p, opts) }
		if p.FetchOCI != "" {
			key, attach = "oci\x00"+p.FetchOCI+"\x00"+p.Version, func() *model.Artifact { return attachOCI(ctx, p, opts) }
		}
		mu.Lock()
		o := once[key]
		if o == nil {
			o = &sync.Once{}
			once[key] = o
		}
		mu.Unlock()
		o.Do(func() {
			a := attach()
			mu.Lock()
			found[key] = a
			mu.Unlock()
		})
		mu.Lock()
		defer mu.Unlock()
		return found[key]
	}

	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(j job) {
			defer wg.Done()
			defer func() { <-sem }()
			j.p.Artifact = lookup(j.p)
		}(j)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("registry lookups in %s: %w", prefix, err)
	}
	return nil
}

// attachOne reads the artifact of one provider; it never returns nil.
func attachOne(ctx context.Context, prefix artifact.Prefix, p *model.Provider, opts Options) *model.Artifact {
	name := p.RepositoryName()
	a := &model.Artifact{Ref: joinRef(prefix.String()+"/"+name, p.Version), Repository: prefix.String() + "/" + name}
	defer func() { a.PlainHTTP = opts.Registry.PlainHTTP && !prefix.IsLayout() }()
	if p.Type() == "" {
		a.Err = fmt.Sprintf("%s: kind %q is not a provider kind, so it has no repository", p.ID(), p.Kind)
		return a
	}
	if p.Version == "" {
		a.Err = fmt.Sprintf("%s has no spec.version, so there is no release tag to look up in %s", p.ID(), a.Repository)
		return a
	}
	repo, err := prefix.Repository(name, opts.Registry)
	if err != nil {
		a.Err = err.Error()
		return a
	}
	got, _, err := Fetch(ctx, repo, p.Version, opts)
	if got != nil {
		a = got
	}
	switch {
	case err == nil:
	case !a.Found && errors.Is(err, errdef.ErrNotFound):
		// Not pushed: Found false says it.
	case a.Err == "":
		a.Err = err.Error()
	}
	opts.logger().Debug("registry artifact", "provider", p.ID(), "ref", a.Ref, "found", a.Found, "digest", a.Digest, "err", a.Err)
	return a
}

// attachOCI reads the artifact a provider's spec.fetchConfig.oci names, if
// its registry is allowed; it never returns nil.
func attachOCI(ctx context.Context, p *model.Provider, opts Options) *model.Artifact {
	a := &model.Artifact{Ref: p.FetchOCI, OCISource: true}
	src, err := operator.ParseSource(p.FetchOCI, p.Version)
	if err != nil {
		a.Refused = err.Error()
		return a
	}
	a.Ref, a.Repository = src.Ref(), src.Repository
	if !Allowed(src.Repository, opts.Allow) {
		a.Refused = fmt.Sprintf("registry %s is not allowed: pinseal contacts only the registry it checks against and the allowed registries", src.Host)
		return a
	}
	ropts := opts.Registry
	ropts.PlainHTTP = ropts.PlainHTTP || src.PlainHTTP
	repo, err := artifact.OpenRegistry(src.Repository, ropts)
	if err != nil {
		a.Refused = err.Error()
		return a
	}
	got, _, err := Fetch(ctx, repo, src.Reference, Options{Registry: ropts, Keys: opts.Keys, Trust: opts.Trust, Logger: opts.Logger})
	if got != nil {
		a = got
		a.OCISource = true
	}
	a.PlainHTTP = ropts.PlainHTTP
	switch {
	case err == nil:
	case !a.Found && errors.Is(err, errdef.ErrNotFound):
	case a.Err == "":
		a.Err = err.Error()
	}
	opts.logger().Debug("fetchConfig.oci artifact", "provider", p.ID(), "ref", a.Ref, "found", a.Found, "digest", a.Digest, "err", a.Err)
	return a
}

// Allowed reports whether repository (HOST[:PORT]/PATH) lies within allow:
// its host equals an entry's host (without case) and its path equals or is
// below the entry's path, if the entry has one.
func Allowed(repository string, allow []string) bool {
	host, path, _ := strings.Cut(repository, "/")
	if host == "" {
		return false
	}
	for _, entry := range allow {
		eh, ep, _ := strings.Cut(strings.TrimSuffix(entry, "/"), "/")
		if !strings.EqualFold(host, eh) {
			continue
		}
		if ep == "" || path == ep || strings.HasPrefix(path, ep+"/") {
			return true
		}
	}
	return false
}

func joinRef(repo, ref string) string {
	if _, err := digest.Parse(ref); err == nil {
		return repo + "@" + ref
	}
	return repo + ":" + ref
}

// Fetch reads the artifact ref (a tag or a digest) of repo and verifies its
// signatures and provenance attestations with opts.Keys. It returns what it
// learnt (never nil) and the pulled artifact (nil when it could not be
// read).
//
// The error is non-nil when the repository could not be talked to: ref
// does not resolve (wrapping errdef.ErrNotFound when it is not there), the
// registry failed or refused, ctx ended. Anything wrong with the stored
// artifact itself — a layer whose bytes do not match the manifest, a size
// limit exceeded, not an image manifest — is recorded in Artifact.Err with
// a nil error, and the signatures are still verified: they are about the
// manifest digest, which did resolve.
func Fetch(ctx context.Context, repo artifact.Repository, ref string, opts Options) (*model.Artifact, *artifact.Pulled, error) {
	a := &model.Artifact{Ref: joinRef(repo.Name(), ref), Repository: repo.Name()}
	if ref == "" {
		return a, nil, fmt.Errorf("%s: no tag or digest to look up", repo.Name())
	}
	desc, err := repo.Resolve(ctx, ref)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return a, nil, fmt.Errorf("%s does not exist: %w", a.Ref, errdef.ErrNotFound)
	case err != nil:
		return a, nil, fmt.Errorf("look up %s: %w", a.Ref, err)
	}
	a.Found = true
	a.Digest = desc.Digest.String()
	if d, derr := digest.Parse(ref); derr == nil && d != desc.Digest {
		a.Err = fmt.Sprintf("%s resolved to %s: %v", a.Ref, desc.Digest, artifact.ErrTampered)
		a.Tampered = true
		a.Digest = d.String()
	}

	var pulled *artifact.Pulled
	if a.Err == "" {
		pulled, err = artifact.Pull(ctx, repo, desc.Digest.String())
		switch {
		case err == nil:
			record(a, pulled)
		case transportError(ctx, err):
			return a, nil, err
		default:
			a.Err = err.Error()
			a.Tampered = errors.Is(err, artifact.ErrTampered)
			recordManifest(ctx, repo, desc, a)
		}
	}

	subject, _ := digest.Parse(a.Digest)
	if err := verifySignature(ctx, repo, subject, a, opts.trust()); err != nil {
		return a, pulled, err
	}
	if err := verifyProvenance(ctx, repo, subject, a, opts.trust()); err != nil {
		return a, pulled, err
	}
	return a, pulled, nil
}

// record copies what the pulled artifact says into a.
func record(a *model.Artifact, p *artifact.Pulled) {
	a.ConfigMediaType = p.Manifest.Config.MediaType
	// The pulled config is decoded for this pull alone: a keeps it.
	a.Config = p.Config
	// The YAML layer is the one the cluster-api-operator installs for the
	// provider the config names (artifact.ComponentsLayer).
	yamlTitle := artifact.ComponentsLayer(p.Manifest, p.Config)
	a.Layers = map[string]string{}
	for _, l := range p.Manifest.Layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		if title != "" && l.Size > 0 {
			a.Layers[title] = l.Digest.String()
		}
		switch {
		case title == artifact.BlobTitle:
			a.BlobSHA256 = l.Digest.String()
		case title == artifact.MetadataTitle:
			a.MetadataSHA256 = l.Digest.String()
		case title == yamlTitle && title != "":
			a.YAMLSHA256, a.YAMLTitle = l.Digest.String(), title
		}
	}
	if a.BlobSHA256 == "" {
		a.Missing = append(a.Missing, artifact.BlobTitle)
	}
	if a.MetadataSHA256 == "" {
		a.Missing = append(a.Missing, artifact.MetadataTitle)
	}
	if a.YAMLSHA256 == "" {
		a.Missing = append(a.Missing, artifact.YAMLTitle)
	}
}

// recordManifest records, for an artifact that did not pull, what its
// manifest and config say (best effort, same limits as Pull): which
// release it claims to be and the layer digests the signed manifest names.
func recordManifest(ctx context.Context, repo artifact.Repository, desc ocispec.Descriptor, a *model.Artifact) {
	if desc.Size > artifact.MaxManifestSize {
		return
	}
	raw, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return
	}
	p := &artifact.Pulled{Files: map[string][]byte{}}
	if json.Unmarshal(raw, &p.Manifest) != nil {
		return
	}
	if c := p.Manifest.Config; c.MediaType == artifact.ConfigMediaType && c.Size <= artifact.MaxConfigSize {
		if b, err := content.FetchAll(ctx, repo, c); err == nil {
			var cfg model.ArtifactConfig
			if json.Unmarshal(b, &cfg) == nil {
				p.Config = &cfg
			}
		}
	}
	record(a, p)
}

// verifySignature records the signature verdict; the error is a registry
// that could not be read.
func verifySignature(ctx context.Context, repo artifact.Repository, subject digest.Digest, a *model.Artifact, trust sign.Trust) error {
	v, err := sign.VerifyWith(ctx, repo, subject, trust)
	a.Signature.Checked = true
	if err != nil {
		a.Signature.Reason, a.Signature.Message = model.ReadError, err.Error()
		if transportError(ctx, err) {
			return err
		}
		return nil
	}
	a.Signature.Valid = v.Valid
	a.Signature.Reason = v.Reason
	a.Signature.Message = v.Message
	a.Signature.KeyID = v.KeyID
	a.Signature.Identity = v.Identity
	a.Signature.Form = v.Form
	return nil
}

// verifyProvenance records the attestation verdict and, when one is
// valid, what its statement says.
func verifyProvenance(ctx context.Context, repo artifact.Repository, subject digest.Digest, a *model.Artifact, trust sign.Trust) error {
	av, err := sign.VerifyAttestationWith(ctx, repo, subject, trust)
	pr := &a.Provenance
	pr.Checked = true
	if err != nil {
		pr.Reason, pr.Message = model.ReadError, err.Error()
		if transportError(ctx, err) {
			return err
		}
		return nil
	}
	pr.Found = len(av.Checks) > 0
	pr.Valid = av.Valid && av.Provenance != nil
	pr.Reason, pr.Message, pr.KeyID = av.Reason, av.Message, av.KeyID
	pr.Identity, pr.Form = av.Identity, av.Form
	if p := av.Provenance; p != nil {
		pr.BuilderID, pr.BuildType = p.BuilderID, p.BuildType
		param := func(k string) string { s, _ := p.ExternalParameters[k].(string); return s }
		pr.Kind, pr.Name, pr.Release = param("kind"), param("name"), param("release")
		for _, d := range p.Dependencies {
			pr.Materials = append(pr.Materials, pin.Source{URL: d.URI, SHA256: d.SHA256, To: d.Name})
		}
		pr.Images = p.Images
		_, pr.ImagesRecorded = p.ExternalParameters[sign.ImagesParameter]
	}
	if av.Valid && av.Provenance == nil {
		pr.Reason = model.Malformed
		pr.Message = "the valid attestation's statement is not SLSA provenance v1"
	}
	return nil
}

// transportError reports whether err is about reaching the registry (the
// network, an HTTP error other than 404, ctx) rather than about what it
// stores.
func transportError(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var er *errcode.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode != http.StatusNotFound
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne)
}
