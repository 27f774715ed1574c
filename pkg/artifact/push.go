package artifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"

	"github.com/pinseal/pinseal/pkg/model"
)

// Status says what Push did.
type Status string

const (
	// Pushed: the release was not in the repository; it is now, tagged.
	Pushed Status = "pushed"
	// Unchanged: the tag already points at exactly this manifest.
	Unchanged Status = "unchanged"
	// Equivalent: the tag points at a manifest with the same layers and
	// the same config apart from the builder version and creation time
	// (built by another pinseal version or SOURCE_DATE_EPOCH). Nothing was
	// written; Result.Descriptor is the existing manifest.
	Equivalent Status = "equivalent"
)

// Result is the outcome of Push for one release.
type Result struct {
	Repository string // Repository.Name()
	Tag        string // the release
	// Descriptor is the manifest the tag points at after Push: the one
	// pushed, or the existing one when Status is Unchanged or Equivalent.
	Descriptor ocispec.Descriptor
	// Built is the digest this build packed (differs from
	// Descriptor.Digest only when Status is Equivalent).
	Built  digest.Digest
	Status Status
}

// Reference is the pushed artifact by digest: "REPO@sha256:…".
func (r Result) Reference() string { return r.Repository + "@" + r.Descriptor.Digest.String() }

// ImmutableError refuses to move a release tag to different content.
type ImmutableError struct {
	Repository string
	Tag        string
	Existing   digest.Digest
	New        digest.Digest
	// Differences name what differs ("layer components.gz", "config contract"),
	// when the existing artifact could be read.
	Differences []string
}

func (e *ImmutableError) Error() string {
	msg := fmt.Sprintf("release %s is already in %s as %s, this build is %s", e.Tag, e.Repository, e.Existing, e.New)
	if len(e.Differences) > 0 {
		msg += " (differs in " + strings.Join(e.Differences, ", ") + ")"
	}
	return msg + ": releases are immutable; bump the release (ConfigMap name and spec.version) instead of overwriting it"
}

// PushOptions tune Push.
type PushOptions struct {
	// BeforeTag, if set, runs once every blob is stored and before the
	// manifest and its tag are written, with the manifest's descriptor. An
	// error aborts the push with no tag written (the uploaded blobs stay
	// unreferenced). builder push signs and attests the manifest digest
	// here, so that a wrong password or a failed signature never leaves an
	// unsigned release tag behind.
	BeforeTag func(ctx context.Context, manifest ocispec.Descriptor) error
}

// Push packs rel and stores it in repo under the tag rel.Release:
//
//   - tag absent: blobs and config first, then the manifest together with
//     the tag (one request on a registry, index.json last in a layout), so
//     a failure part way never writes or moves a tag and a retry completes;
//   - tag present with the same digest, or with equivalent content: no-op;
//   - tag present with other content: *ImmutableError, nothing written.
//
// The check and the tag write are two requests; a registry offers no
// compare-and-swap on tags, so two concurrent pushers of one release can
// still race.
func Push(ctx context.Context, repo Repository, rel Release, opts PushOptions) (Result, error) {
	mem := memory.New()
	desc, err := Pack(ctx, mem, rel)
	if err != nil {
		return Result{}, err
	}
	res := Result{Repository: repo.Name(), Tag: rel.Release, Descriptor: desc, Built: desc.Digest}

	existing, err := repo.Resolve(ctx, rel.Release)
	switch {
	case err == nil:
		if existing.Digest == desc.Digest {
			res.Status = Unchanged
			return res, nil
		}
		diffs, cerr := compareExisting(ctx, repo, existing, mem, desc)
		if cerr != nil {
			return Result{}, fmt.Errorf("push %s to %s: tag %s holds %s, this build is %s, and the existing artifact could not be read to compare them: %w",
				rel, repo.Name(), rel.Release, existing.Digest, desc.Digest, cerr)
		}
		if len(diffs) == 0 {
			res.Descriptor = existing
			res.Status = Equivalent
			return res, nil
		}
		return Result{}, &ImmutableError{
			Repository: repo.Name(), Tag: rel.Release,
			Existing: existing.Digest, New: desc.Digest, Differences: diffs,
		}
	case errors.Is(err, errdef.ErrNotFound):
	default:
		return Result{}, fmt.Errorf("push %s to %s: look up tag %s: %w", rel, repo.Name(), rel.Release, err)
	}

	if err := mem.Tag(ctx, desc, rel.Release); err != nil {
		return Result{}, err
	}
	dst := oras.Target(repo)
	if opts.BeforeTag != nil {
		dst = gate(repo, opts.BeforeTag)
	}
	if _, err := oras.Copy(ctx, mem, rel.Release, dst, rel.Release, oras.CopyOptions{}); err != nil {
		return Result{}, fmt.Errorf("push %s to %s: %w (the tag was not written; run the push again to complete it)", rel, repo.Name(), err)
	}
	res.Status = Pushed
	return res, nil
}

// Compare lists what differs between the artifact ref (tag or digest) in
// repo and what rel packs to, ignoring what does not change the content
// (builder version, creation time): "layer components.gz", "config
// contract", .... Empty means the same content. For the verifier's
// registry-digest and version-reused checks.
func Compare(ctx context.Context, repo Repository, ref string, rel Release) ([]string, error) {
	existing, err := repo.Resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s%s%s: %w", rel, repo.Name(), refSep(ref), ref, err)
	}
	mem := memory.New()
	desc, err := Pack(ctx, mem, rel)
	if err != nil {
		return nil, err
	}
	if existing.Digest == desc.Digest {
		return nil, nil
	}
	diffs, err := compareExisting(ctx, repo, existing, mem, desc)
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s@%s: %w", rel, repo.Name(), existing.Digest, err)
	}
	return diffs, nil
}

// compareExisting lists what differs between the artifact in repo and the
// one just packed, ignoring what does not change the content (builder
// version, creation time). An error means the existing one could not be
// read or is not a pinseal artifact.
func compareExisting(ctx context.Context, repo Repository, existing ocispec.Descriptor, mem content.Fetcher, built ocispec.Descriptor) ([]string, error) {
	if existing.Size > MaxManifestSize {
		return nil, fmt.Errorf("manifest too large")
	}
	oldRaw, err := fetch(ctx, repo, existing)
	if err != nil {
		return nil, err
	}
	newRaw, err := content.FetchAll(ctx, mem, built)
	if err != nil {
		return nil, err
	}
	var oldM, newM ocispec.Manifest
	if err := json.Unmarshal(oldRaw, &oldM); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(newRaw, &newM); err != nil {
		return nil, err
	}
	if oldM.Config.MediaType != ConfigMediaType {
		return []string{"artifact type (not a pinseal artifact)"}, nil
	}
	var diffs []string
	oldLayers, newLayers := layersByTitle(oldM), layersByTitle(newM)
	titles := map[string]bool{}
	for t := range oldLayers {
		titles[t] = true
	}
	for t := range newLayers {
		titles[t] = true
	}
	for _, t := range slices.Sorted(maps.Keys(titles)) {
		if oldLayers[t] != newLayers[t] {
			diffs = append(diffs, "layer "+t)
		}
	}
	if oldM.Config.Size > MaxConfigSize {
		return append(diffs, "config"), nil
	}
	oldCfgRaw, err := fetch(ctx, repo, oldM.Config)
	if err != nil {
		return nil, err
	}
	newCfgRaw, err := content.FetchAll(ctx, mem, newM.Config)
	if err != nil {
		return nil, err
	}
	var oldCfg, newCfg model.ArtifactConfig
	if err := json.Unmarshal(oldCfgRaw, &oldCfg); err != nil {
		return append(diffs, "config"), nil
	}
	if err := json.Unmarshal(newCfgRaw, &newCfg); err != nil {
		return nil, err
	}
	ov, nv := reflect.ValueOf(oldCfg), reflect.ValueOf(newCfg)
	for i := 0; i < ov.NumField(); i++ {
		f := ov.Type().Field(i)
		if f.Name == "BuilderVersion" {
			continue
		}
		if !reflect.DeepEqual(normalizeEmpty(ov.Field(i).Interface()), normalizeEmpty(nv.Field(i).Interface())) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			diffs = append(diffs, "config "+name)
		}
	}
	return diffs, nil
}

func normalizeEmpty(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Len() == 0 {
		return nil
	}
	return v
}

func layersByTitle(m ocispec.Manifest) map[string]digest.Digest {
	out := map[string]digest.Digest{}
	for _, l := range m.Layers {
		out[l.Annotations[ocispec.AnnotationTitle]] = l.Digest
	}
	return out
}

// gate wraps repo so that fn runs (once) before any tag is written.
func gate(repo Repository, fn func(context.Context, ocispec.Descriptor) error) oras.Target {
	g := &gated{Repository: repo, fn: fn}
	if rp, ok := repo.(registry.ReferencePusher); ok {
		return &gatedRefPusher{gated: g, rp: rp}
	}
	return g
}

type gated struct {
	Repository
	fn   func(context.Context, ocispec.Descriptor) error
	once sync.Once
	err  error
}

func (g *gated) wait(ctx context.Context, manifest ocispec.Descriptor) error {
	g.once.Do(func() { g.err = g.fn(ctx, manifest) })
	return g.err
}

func (g *gated) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	if err := g.wait(ctx, desc); err != nil {
		return err
	}
	return g.Repository.Tag(ctx, desc, ref)
}

type gatedRefPusher struct {
	*gated
	rp registry.ReferencePusher
}

func (g *gatedRefPusher) PushReference(ctx context.Context, desc ocispec.Descriptor, r io.Reader, ref string) error {
	if err := g.wait(ctx, desc); err != nil {
		return err
	}
	return g.rp.PushReference(ctx, desc, r, ref)
}
