package artifact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/pinseal/pinseal/internal/atomicfile"
)

// maxIndexSize bounds index.json and manifests read from a layout.
const maxIndexSize = 16 << 20

// OpenLayout opens the OCI image layout directory of one repository; it is
// created on the first write. Blobs go through oras-go's content-addressed
// storage (temp file + rename, digest checked on the way in); index.json
// is rewritten atomically under an exclusive lock on the directory, so
// concurrent pushers of other tags do not lose each other's tags and a
// killed push never leaves a half index.
func OpenLayout(dir string) (Repository, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", dir, err)
	}
	st, err := oci.NewStorage(abs)
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", abs, err)
	}
	return &layoutRepo{dir: abs, storage: st}, nil
}

type layoutRepo struct {
	dir     string
	storage *oci.Storage
	once    sync.Once
	initErr error
}

func (l *layoutRepo) Name() string { return LayoutScheme + l.dir }

func (l *layoutRepo) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	return l.storage.Fetch(ctx, desc)
}

func (l *layoutRepo) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	return l.storage.Exists(ctx, desc)
}

func (l *layoutRepo) Push(ctx context.Context, desc ocispec.Descriptor, r io.Reader) error {
	if err := l.init(); err != nil {
		return err
	}
	return l.storage.Push(ctx, desc, r)
}

// Resolve resolves a tag through index.json, or a digest of a manifest in
// the layout.
func (l *layoutRepo) Resolve(ctx context.Context, ref string) (ocispec.Descriptor, error) {
	idx, err := l.readIndex()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if d, derr := digest.Parse(ref); derr == nil {
		for _, m := range idx.Manifests {
			if m.Digest == d {
				return withoutRefName(m), nil
			}
		}
		return l.resolveDigest(ctx, d)
	}
	for _, m := range idx.Manifests {
		if m.Annotations[ocispec.AnnotationRefName] == ref {
			return withoutRefName(m), nil
		}
	}
	return ocispec.Descriptor{}, fmt.Errorf("%s:%s: %w", l.Name(), ref, errdef.ErrNotFound)
}

// resolveDigest describes a manifest stored in the layout but not listed in
// index.json, reading its media type from the manifest itself.
func (l *layoutRepo) resolveDigest(ctx context.Context, d digest.Digest) (ocispec.Descriptor, error) {
	probe := ocispec.Descriptor{Digest: d}
	rc, err := l.storage.Fetch(ctx, probe)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s@%s: %w", l.Name(), d, errdef.ErrNotFound)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxIndexSize+1))
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s@%s: %w", l.Name(), d, err)
	}
	if len(b) > maxIndexSize {
		return ocispec.Descriptor{}, fmt.Errorf("%s@%s: manifest larger than %d bytes", l.Name(), d, maxIndexSize)
	}
	if digest.FromBytes(b) != d {
		return ocispec.Descriptor{}, fmt.Errorf("%s@%s: stored bytes have digest %s: the layout is corrupt or tampered", l.Name(), d, digest.FromBytes(b))
	}
	var m struct {
		MediaType    string `json:"mediaType"`
		ArtifactType string `json:"artifactType"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.MediaType == "" {
		return ocispec.Descriptor{}, fmt.Errorf("%s@%s: not a manifest: %w", l.Name(), d, errdef.ErrNotFound)
	}
	return ocispec.Descriptor{MediaType: m.MediaType, ArtifactType: m.ArtifactType, Digest: d, Size: int64(len(b))}, nil
}

// Tag points ref at desc in index.json (the manifest must be stored).
func (l *layoutRepo) Tag(ctx context.Context, desc ocispec.Descriptor, ref string) error {
	if ok, err := l.storage.Exists(ctx, desc); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("tag %s:%s: manifest %s is not in the layout: %w", l.Name(), ref, desc.Digest, errdef.ErrNotFound)
	}
	if err := l.init(); err != nil {
		return err
	}
	unlock, err := lockDir(l.dir)
	if err != nil {
		return fmt.Errorf("lock layout %s: %w", l.dir, err)
	}
	defer unlock()
	idx, err := l.readIndex()
	if err != nil {
		return err
	}
	kept := idx.Manifests[:0]
	for _, m := range idx.Manifests {
		if m.Annotations[ocispec.AnnotationRefName] != ref {
			kept = append(kept, m)
		}
	}
	entry := withoutRefName(desc)
	ann := make(map[string]string, len(entry.Annotations)+1)
	for k, v := range entry.Annotations {
		ann[k] = v
	}
	ann[ocispec.AnnotationRefName] = ref
	entry.Annotations = ann
	idx.Manifests = append(kept, entry)
	sort.SliceStable(idx.Manifests, func(i, j int) bool {
		return idx.Manifests[i].Annotations[ocispec.AnnotationRefName] < idx.Manifests[j].Annotations[ocispec.AnnotationRefName]
	})
	return l.writeIndex(idx)
}

func withoutRefName(d ocispec.Descriptor) ocispec.Descriptor {
	if _, ok := d.Annotations[ocispec.AnnotationRefName]; !ok {
		return d
	}
	ann := make(map[string]string, len(d.Annotations))
	for k, v := range d.Annotations {
		if k != ocispec.AnnotationRefName {
			ann[k] = v
		}
	}
	if len(ann) == 0 {
		ann = nil
	}
	d.Annotations = ann
	return d
}

func (l *layoutRepo) indexPath() string { return filepath.Join(l.dir, ocispec.ImageIndexFile) }

func (l *layoutRepo) readIndex() (*ocispec.Index, error) {
	b, err := os.ReadFile(l.indexPath())
	if errors.Is(err, fs.ErrNotExist) {
		return emptyIndex(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("layout %s: %w", l.dir, err)
	}
	if len(b) > maxIndexSize {
		return nil, fmt.Errorf("layout %s: index.json larger than %d bytes", l.dir, maxIndexSize)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("layout %s: index.json is not an OCI index: %w", l.dir, err)
	}
	return &idx, nil
}

func (l *layoutRepo) writeIndex(idx *ocispec.Index) error {
	if idx.Manifests == nil {
		idx.Manifests = []ocispec.Descriptor{}
	}
	b, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(l.indexPath(), b, 0); err != nil {
		return fmt.Errorf("layout %s: %w", l.dir, err)
	}
	return nil
}

func emptyIndex() *ocispec.Index {
	return &ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: []ocispec.Descriptor{},
	}
}

// init creates the layout directory, its oci-layout file and an empty
// index.json, under the directory lock so that it never clobbers an index
// another process just wrote.
func (l *layoutRepo) init() error {
	l.once.Do(func() {
		l.initErr = func() error {
			if err := os.MkdirAll(l.dir, 0o755); err != nil {
				return fmt.Errorf("create layout %s: %w", l.dir, err)
			}
			unlock, err := lockDir(l.dir)
			if err != nil {
				return fmt.Errorf("lock layout %s: %w", l.dir, err)
			}
			defer unlock()
			layoutFile := filepath.Join(l.dir, ocispec.ImageLayoutFile)
			if _, err := os.Stat(layoutFile); errors.Is(err, fs.ErrNotExist) {
				b, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
				if err != nil {
					return err
				}
				if err := atomicfile.WriteFile(layoutFile, b, 0); err != nil {
					return fmt.Errorf("create layout %s: %w", l.dir, err)
				}
			}
			if _, err := os.Stat(l.indexPath()); errors.Is(err, fs.ErrNotExist) {
				return l.writeIndex(emptyIndex())
			}
			return nil
		}()
	})
	return l.initErr
}
