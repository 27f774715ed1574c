package load

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

// applied lists the objects of every release's components as the API
// server receives them (model.Package.Applied): the vendored blob,
// inflated within the inflate limit, else the vendored YAML. A document
// that does not parse is package-load's or the cluster's to report, not
// listed here; a blob that does not inflate is blob-corrupt's.
func (l *scanner) applied(ctx context.Context, p *model.Package, mem map[string][]byte) {
	for _, r := range p.Layout.Releases {
		if ctx.Err() != nil {
			return
		}
		// The blob is what the cluster gets; when it inflates to exactly
		// the vendored YAML, the YAML is read instead (no inflating, and
		// lines a reviewer can open).
		rel, gz := r.Blob, true
		b, y := p.Files[r.Blob], p.Files[r.Components]
		if b == nil || b.Blob == nil || !layout.Inflated(b.Blob) || (y != nil && y.Blob == nil && b.Blob.RawSHA256 == y.SHA256) {
			rel, gz = r.Components, false
		}
		f := p.Files[rel]
		if rel == "" || f == nil || (!gz && f.Blob != nil) {
			continue
		}
		data := mem[rel]
		if data == nil || gz {
			var err error
			if data, err = l.readRelease(ctx, p, rel, data, gz); err != nil {
				continue // hashing reported why it cannot be read
			}
		}
		provs := releaseProviders(r)
		for _, d := range manifest.SplitDocs(data) {
			o, _ := manifest.ParseDoc(d, rel)
			if o == nil || o.Kind == "" {
				continue
			}
			a := model.AppliedObject{Release: r.Name, Providers: provs, APIVersion: o.APIVersion, Kind: o.Kind,
				Name: o.Name, Namespace: o.Namespace, InBlob: gz, Location: model.Location{File: rel, Line: o.Line}}
			if o.Kind == "CustomResourceDefinition" {
				var v any
				if o.Root.Decode(&v) == nil {
					a.CRD, _ = json.Marshal(v)
				}
			}
			p.Applied = append(p.Applied, a)
		}
	}
}

// readRelease reads a vendored file (from data when held in memory),
// inflated when gz, at most the inflate limit.
func (l *scanner) readRelease(ctx context.Context, p *model.Package, rel string, data []byte, gz bool) ([]byte, error) {
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	} else {
		fh, err := l.open(filepath.Join(p.Dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		rd = ctxReader{ctx, fh}
	}
	if gz {
		rd = blob.InflatedFrom(rd, l.opts.Limit)
	}
	return io.ReadAll(io.LimitReader(rd, l.opts.Limit+1))
}
