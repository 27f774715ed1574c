package remote

import (
	"bytes"
	"crypto/sha256"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Inspect looks inside the layers of a pulled artifact and records it in
// a.Content: the components.gz layer inspected with blob.Inspect (header,
// one complete gzip member, inflated digest; inflating stops at limit,
// blob.DefaultLimit when <= 0), where its content first differs from the
// raw YAML layer, and metadata.yaml parsed. tag is the release the
// artifact was asked for, used when its config names no version.
func Inspect(a *model.Artifact, p *artifact.Pulled, tag string, limit int64) {
	if limit <= 0 {
		limit = blob.DefaultLimit
	}
	c := &model.ArtifactContent{}
	if p.Blob != nil {
		info := blob.Inspect(bytes.NewReader(p.Blob), limit)
		c.Blob = &info
	}
	// The YAML layer the operator installs (record chose it by title).
	yml := p.Files[a.YAMLTitle]
	if a.YAMLTitle != "" && yml != nil {
		c.YAMLSize = int64(len(yml))
		c.YAMLDigest = sha256.Sum256(yml)
		found, _ := images.ScanBytes(yml)
		c.Images = images.Distinct(found)
		if c.Blob != nil && c.Blob.Err == nil && c.Blob.RawSHA256 != c.YAMLDigest {
			c.Diff = blob.FirstDifference(bytes.NewReader(yml), blob.Inflated(p.Blob, limit))
		}
	}
	if p.Metadata != nil {
		c.Metadata = metadata.Parse(p.Metadata)
	}
	switch {
	case a.Config != nil && a.Config.Version != "":
		c.Version = a.Config.Version
	case a.Config != nil:
		c.Version = pin.ReleaseVersion(a.Config.Release)
	default:
		c.Version = pin.ReleaseVersion(tag)
	}
	a.Content = c
}
