package artifact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Bounds on what is read when listing and reading referrers (OCI 1.1
// artifacts whose subject is another manifest: Sigstore bundles, cosign v3
// signatures and attestations).
const (
	// MaxReferrers is how many referrers of one subject are looked at;
	// more is an error (ErrTooManyReferrers), never a silent truncation.
	MaxReferrers = 256
	// MaxReferrersIndexSize bounds a referrers index (API response or
	// tag-schema index) and a referrer manifest.
	MaxReferrersIndexSize = 4 << 20
	// maxReferrerPages bounds how many pages of the referrers API are read.
	maxReferrerPages = 16
)

// ErrTooManyReferrers is returned when a subject has more than
// MaxReferrers referrers.
var ErrTooManyReferrers = errors.New("too many referrers")

// ReferrersSource says where referrers were listed from.
type ReferrersSource string

const (
	// ReferrersAPI: the registry's OCI 1.1 referrers API
	// (GET /v2/<name>/referrers/<digest>).
	ReferrersAPI ReferrersSource = "referrers API"
	// ReferrersTagSchema: the referrers tag schema fallback, an OCI index
	// tagged sha256-<hex> (registries without the API, OCI layouts).
	ReferrersTagSchema ReferrersSource = "referrers tag schema"
	// ReferrersNone: the repository holds no manifest yet, so nothing
	// refers to the subject.
	ReferrersNone ReferrersSource = "no referrers: empty repository"
)

// ReferrersTag is the referrers tag schema's tag of subject:
// "sha256-<hex>".
func ReferrersTag(subject digest.Digest) string {
	return subject.Algorithm().String() + "-" + subject.Encoded()
}

// Referrers lists the manifests whose subject is subject, at most
// MaxReferrers: through the registry's referrers API when it serves one,
// else through the referrers tag schema (the only way in an OCI layout).
// No referrers is an empty list and no error.
func Referrers(ctx context.Context, repo Repository, subject ocispec.Descriptor) ([]ocispec.Descriptor, ReferrersSource, error) {
	if rr, ok := repo.(*registryRepo); ok {
		var out []ocispec.Descriptor
		err := rr.Repository.Referrers(ctx, subject, "", func(refs []ocispec.Descriptor) error {
			out = append(out, refs...)
			if len(out) > MaxReferrers {
				return fmt.Errorf("%s@%s: %w (more than %d)", repo.Name(), subject.Digest, ErrTooManyReferrers, MaxReferrers)
			}
			return nil
		})
		if err != nil && nameUnknown(err) {
			// The repository holds nothing yet (a referrers API answers
			// NAME_UNKNOWN): nothing refers to the subject. Whether the
			// registry has the API stays undecided.
			return nil, ReferrersNone, nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("list referrers of %s@%s: %w", repo.Name(), subject.Digest, err)
		}
		// Referrers settled the capability: setting it to true again only
		// succeeds when the API answered.
		src := ReferrersAPI
		if rr.Repository.SetReferrersCapability(true) != nil {
			src = ReferrersTagSchema
		}
		return out, src, nil
	}
	_, refs, err := referrersIndex(ctx, repo, subject.Digest)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, ReferrersTagSchema, nil
	}
	if err != nil {
		return nil, ReferrersTagSchema, err
	}
	return refs, ReferrersTagSchema, nil
}

func nameUnknown(err error) bool {
	var er *errcode.ErrorResponse
	if !errors.As(err, &er) || er.StatusCode != http.StatusNotFound {
		return false
	}
	for _, e := range er.Errors {
		if e.Code == errcode.ErrorCodeNameUnknown {
			return true
		}
	}
	return false
}

// referrersIndex reads the tag-schema index of subject (bounded).
func referrersIndex(ctx context.Context, repo Repository, subject digest.Digest) (ocispec.Descriptor, []ocispec.Descriptor, error) {
	tag := ReferrersTag(subject)
	desc, err := repo.Resolve(ctx, tag)
	if err != nil {
		return ocispec.Descriptor{}, nil, err
	}
	if desc.MediaType != ocispec.MediaTypeImageIndex || desc.Digest == subject {
		// Not a referrers index (some registries resolve the tag to the
		// subject itself).
		return ocispec.Descriptor{}, nil, fmt.Errorf("%s:%s is not a referrers index: %w", repo.Name(), tag, errdef.ErrNotFound)
	}
	b, err := FetchBounded(ctx, repo, desc, MaxReferrersIndexSize)
	if err != nil {
		return ocispec.Descriptor{}, nil, fmt.Errorf("read referrers index %s:%s: %w", repo.Name(), tag, err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return ocispec.Descriptor{}, nil, fmt.Errorf("referrers index %s:%s is not an OCI index: %w", repo.Name(), tag, err)
	}
	if len(idx.Manifests) > MaxReferrers {
		return ocispec.Descriptor{}, nil, fmt.Errorf("%s:%s: %w (%d, more than %d)", repo.Name(), tag, ErrTooManyReferrers, len(idx.Manifests), MaxReferrers)
	}
	return desc, idx.Manifests, nil
}

// PushReferrer stores the referrer manifest (whose subject is subject) in
// repo so that Referrers finds it: a registry with the referrers API
// indexes it itself; without the API (and in an OCI layout) the referrers
// tag schema index sha256-<hex> is updated (oras-go does it for
// registries; the layout's index is rewritten under the layout's lock).
func PushReferrer(ctx context.Context, repo Repository, subject digest.Digest, mediaType string, manifest []byte) (ocispec.Descriptor, error) {
	desc := content.NewDescriptorFromBytes(mediaType, manifest)
	switch r := repo.(type) {
	case *registryRepo:
		if err := r.Repository.Push(ctx, desc, bytes.NewReader(manifest)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return desc, fmt.Errorf("push referrer %s@%s: %w", repo.Name(), desc.Digest, err)
		}
		return desc, nil
	case *layoutRepo:
		if err := r.addReferrer(ctx, subject, desc, manifest); err != nil {
			return desc, err
		}
		return desc, nil
	default:
		return desc, fmt.Errorf("push referrer to %s: %T cannot store referrers", repo.Name(), repo)
	}
}

// addReferrer stores a referrer manifest and adds it to the tag-schema
// index of subject, under the layout's lock.
func (l *layoutRepo) addReferrer(ctx context.Context, subject digest.Digest, desc ocispec.Descriptor, manifest []byte) error {
	if err := l.init(); err != nil {
		return err
	}
	if ok, err := l.storage.Exists(ctx, desc); err != nil {
		return err
	} else if !ok {
		if err := l.storage.Push(ctx, desc, bytes.NewReader(manifest)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return fmt.Errorf("store referrer in %s: %w", l.Name(), err)
		}
	}
	unlock, err := lockDir(l.dir)
	if err != nil {
		return fmt.Errorf("lock layout %s: %w", l.dir, err)
	}
	defer unlock()
	var refs []ocispec.Descriptor
	_, old, err := referrersIndex(ctx, l, subject)
	switch {
	case errors.Is(err, errdef.ErrNotFound):
	case err != nil:
		return err
	default:
		refs = old
	}
	for _, r := range refs {
		if r.Digest == desc.Digest {
			return nil
		}
	}
	refs = append(refs, referrerEntry(desc, manifest))
	if len(refs) > MaxReferrers {
		return fmt.Errorf("%s@%s: %w (more than %d)", l.Name(), subject, ErrTooManyReferrers, MaxReferrers)
	}
	return l.tagReferrers(ctx, subject, refs)
}

// referrerEntry is desc as a referrers index lists it: with the
// manifest's artifact type (else its config's media type) and
// annotations.
func referrerEntry(desc ocispec.Descriptor, manifest []byte) ocispec.Descriptor {
	var art struct {
		ArtifactType string            `json:"artifactType"`
		Annotations  map[string]string `json:"annotations"`
		Config       struct {
			MediaType string `json:"mediaType"`
		} `json:"config"`
	}
	_ = json.Unmarshal(manifest, &art)
	entry := desc
	entry.ArtifactType = art.ArtifactType
	if entry.ArtifactType == "" {
		entry.ArtifactType = art.Config.MediaType
	}
	entry.Annotations = art.Annotations
	return entry
}

// tagReferrers stores the index of refs and points subject's referrers
// tag (ReferrersTag) at it in the layout's index.json, in place of the
// index it pointed at. The caller holds the layout's lock.
func (l *layoutRepo) tagReferrers(ctx context.Context, subject digest.Digest, refs []ocispec.Descriptor) error {
	idxBytes, err := json.Marshal(ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: refs,
	})
	if err != nil {
		return err
	}
	idxDesc := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, idxBytes)
	if err := l.storage.Push(ctx, idxDesc, bytes.NewReader(idxBytes)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return fmt.Errorf("store referrers index in %s: %w", l.Name(), err)
	}
	idx, err := l.readIndex()
	if err != nil {
		return err
	}
	tag := ReferrersTag(subject)
	kept := idx.Manifests[:0]
	for _, m := range idx.Manifests {
		if m.Annotations[ocispec.AnnotationRefName] != tag {
			kept = append(kept, m)
		}
	}
	idxDesc.Annotations = map[string]string{ocispec.AnnotationRefName: tag}
	idx.Manifests = append(kept, idxDesc)
	sort.SliceStable(idx.Manifests, func(i, j int) bool {
		return idx.Manifests[i].Annotations[ocispec.AnnotationRefName] < idx.Manifests[j].Annotations[ocispec.AnnotationRefName]
	})
	return l.writeIndex(idx)
}

// The registry repository pages and bounds referrers itself.
var _ interface {
	Referrers(context.Context, ocispec.Descriptor, string, func([]ocispec.Descriptor) error) error
} = (*remote.Repository)(nil)
