// Package opsim simulates how the cluster-api-operator installs a provider
// from an OCI artifact.
//
// It is a test helper: an independent simulation of how the
// cluster-api-operator (v0.16.0 and later) installs a provider from an OCI
// artifact (spec.fetchConfig.oci). It copies the artifact's graph with
// oras-go into a store that keeps only the layers whose titles the
// operator expects for the provider, then picks components and metadata
// in the operator's order of preference. internal/operator describes the same
// rules for production code; tests hold the two to each other and to what
// builder push writes.
package opsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
)

// Provider is the provider object the operator reconciles: GetType() as
// one operator release spells it, metadata.name and spec.version.
type Provider struct {
	Type, Name, Version string
}

// Fetch simulates the operator fetching tag from src for p and returns
// the components and metadata it would install, or the operator's error.
// tag is the reference the operator reads from spec.fetchConfig.oci
// (internal/operator.ParseSource: the tag written, else spec.version; a
// digest is fetched as one); the titles it looks for are named with
// p.Version, spec.version, even when the tag is another.
func Fetch(ctx context.Context, src oras.ReadOnlyTarget, tag string, p Provider) (components, metadata []byte, err error) {
	full := p.Type + "-" + p.Name + "-" + p.Version
	st := &store{src: src, want: map[string][]byte{
		"metadata.yaml":             nil,
		"components.yaml":           nil,
		p.Type + "-components.yaml": nil,
		full + "-metadata.yaml":     nil,
		full + "-components.yaml":   nil,
	}}
	_, err = oras.Copy(ctx, src, tag, st, tag, oras.CopyOptions{CopyGraphOptions: oras.CopyGraphOptions{PreCopy: st.skipKnown}})
	if err != nil {
		return nil, nil, fmt.Errorf("copy %s: %w", tag, err)
	}
	pick := func(titles ...string) []byte {
		for _, t := range titles {
			if b := st.want[t]; len(b) > 0 {
				return b
			}
		}
		return nil
	}
	metadata = pick(full+"-metadata.yaml", "metadata.yaml")
	if metadata == nil {
		return nil, nil, errors.New("collected artifact needs to provide metadata as " + full + "-metadata.yaml or metadata.yaml file")
	}
	components = pick(full+"-components.yaml", p.Type+"-components.yaml", "components.yaml")
	if components == nil {
		return nil, nil, errors.New("collected artifact needs to provide components as " + full + "-components.yaml or " + p.Type + "-components.yaml or components.yaml file")
	}
	return components, metadata, nil
}

// store is an oras.Target that keeps the bytes of expected titles only.
// oras copies each distinct blob once, so a layer whose bytes equal an
// earlier layer's arrives under the earlier title only; when the manifest
// arrives, every expected title it lists is read from the source again.
type store struct {
	src  oras.ReadOnlyTarget
	mu   sync.Mutex
	want map[string][]byte
}

func (s *store) skipKnown(_ context.Context, d ocispec.Descriptor) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.want[d.Annotations[ocispec.AnnotationTitle]]) > 0 {
		return oras.SkipNode
	}
	return nil
}

func (s *store) keep(title string, r io.Reader) error {
	s.mu.Lock()
	_, ok := s.want[title]
	s.mu.Unlock()
	if !ok {
		_, err := io.Copy(io.Discard, r)
		return err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.want[title] = b
	s.mu.Unlock()
	return nil
}

func (s *store) Push(ctx context.Context, d ocispec.Descriptor, r io.Reader) error {
	if err := s.keep(d.Annotations[ocispec.AnnotationTitle], r); err != nil {
		return err
	}
	if d.MediaType != ocispec.MediaTypeImageManifest {
		return nil
	}
	layers, err := content.Successors(ctx, s.src, d)
	if err != nil {
		return err
	}
	for _, l := range layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		s.mu.Lock()
		_, ok := s.want[title]
		s.mu.Unlock()
		if !ok {
			continue
		}
		b, err := content.FetchAll(ctx, s.src, ocispec.Descriptor{MediaType: l.MediaType, Digest: l.Digest, Size: l.Size})
		if err != nil {
			return fmt.Errorf("%q: %w", title, err)
		}
		s.mu.Lock()
		s.want[title] = b
		s.mu.Unlock()
	}
	return nil
}

func (s *store) Exists(context.Context, ocispec.Descriptor) (bool, error) { return false, nil }

func (s *store) Fetch(context.Context, ocispec.Descriptor) (io.ReadCloser, error) {
	return nil, errors.New("opsim: the operator's store is write-only")
}

func (s *store) Resolve(context.Context, string) (ocispec.Descriptor, error) {
	return ocispec.Descriptor{}, errors.New("opsim: the operator's store resolves nothing")
}

func (s *store) Tag(context.Context, ocispec.Descriptor, string) error { return nil }
