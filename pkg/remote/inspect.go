package remote

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/metadata"
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
		if c.Blob != nil && c.Blob.Err == nil && c.Blob.RawSHA256 != c.YAMLDigest {
			c.Diff = firstDifference(yml, p.Blob, limit)
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

// Excerpt bounds.
const (
	diffContext = 3
	diffMaxLine = 160
)

// firstDifference streams gunzip(gz) (at most limit bytes) against yml and
// says where they first differ, with the common lines before it and the
// differing line of each ("-" YAML, "+" blob).
func firstDifference(yml, gz []byte, limit int64) *model.Diff {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return &model.Diff{Line: 1, Excerpt: "+ (the blob is not gzip)\n"}
	}
	zr.Multistream(false)
	r := bufio.NewReader(io.LimitReader(zr, limit))
	var off int64
	for {
		b, err := r.ReadByte()
		if err != nil {
			if off == int64(len(yml)) {
				return nil
			}
			return diffAt(yml, off, nil, true)
		}
		if off >= int64(len(yml)) || yml[off] != b {
			_ = r.UnreadByte()
			rest, _ := r.Peek(diffMaxLine)
			return diffAt(yml, off, rest, false)
		}
		off++
	}
}

// diffAt builds the excerpt for a difference at byte off of yml; rest is
// what the blob holds from there (blobEnded: nothing).
func diffAt(yml []byte, off int64, rest []byte, blobEnded bool) *model.Diff {
	line := 1 + bytes.Count(yml[:off], []byte{'\n'})
	start := bytes.LastIndexByte(yml[:off], '\n') + 1
	var ex strings.Builder
	fmt.Fprintf(&ex, "@@ line %d, byte %d @@\n", line, off)
	ctx := strings.Split(string(yml[:start]), "\n")
	if n := len(ctx); n > 0 {
		ctx = ctx[:n-1] // text before start ends with '\n'
	}
	if len(ctx) > diffContext {
		ctx = ctx[len(ctx)-diffContext:]
	}
	for _, l := range ctx {
		ex.WriteString(" " + clip(l) + "\n")
	}
	prefix := string(yml[start:off])
	if off < int64(len(yml)) {
		end := bytes.IndexByte(yml[off:], '\n')
		if end < 0 {
			end = len(yml) - int(off)
		}
		ex.WriteString("-" + clip(prefix+string(yml[off:off+int64(end)])) + "\n")
	} else {
		ex.WriteString(`\ the YAML ends here` + "\n")
	}
	if blobEnded {
		ex.WriteString(`\ the blob ends here` + "\n")
	} else {
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[:i]
		}
		ex.WriteString("+" + clip(prefix+string(rest)) + "\n")
	}
	return &model.Diff{Line: line, Offset: off, Excerpt: ex.String()}
}

func clip(s string) string {
	if len(s) > diffMaxLine {
		return s[:diffMaxLine] + "…"
	}
	return s
}
