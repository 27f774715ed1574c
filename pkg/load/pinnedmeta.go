package load

import (
	"fmt"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/pkg/model"
)

// maxPinnedMetadata bounds the vendored metadata.yaml read: real ones are
// a few hundred bytes.
const maxPinnedMetadata = 1 << 20

// pinnedMetadata parses the vendored metadata.yaml of each pinned release
// of p that no ConfigMap holds (a provider the operator installs from
// spec.fetchConfig.oci): the ConfigMaps' data.metadata is parsed with
// them, these have nowhere else the checks could read them from. Only a
// file the package walk listed is parsed: the bytes the walk already read
// and hashed (mem) when it kept them, else the file read again through the
// tree's root (no symlink out, no more than maxPinnedMetadata bytes).
func (l *scanner) pinnedMetadata(p *model.Package, mem map[string][]byte) {
	for _, r := range p.Layout.Releases {
		if r.ConfigMap != nil || r.Pin == nil || r.Metadata == "" {
			continue
		}
		f, ok := p.Files[r.Metadata]
		switch {
		case !ok:
			continue
		case f.Size > maxPinnedMetadata:
			r.PinnedMetadata = &model.Metadata{Err: fmt.Errorf("%s is %d bytes, more than the %d a metadata.yaml may be", r.Metadata, f.Size, maxPinnedMetadata)}
			continue
		}
		raw := mem[r.Metadata]
		var err error
		if int64(len(raw)) != f.Size {
			raw, err = l.readCapped(filepath.Join(p.Dir, filepath.FromSlash(r.Metadata)), maxPinnedMetadata)
		}
		if err != nil {
			r.PinnedMetadata = &model.Metadata{Err: fmt.Errorf("read %s: %w", r.Metadata, err)}
			continue
		}
		r.PinnedMetadata = metadata.Parse(raw)
	}
}
