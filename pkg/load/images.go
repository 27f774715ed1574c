package load

import (
	"context"
	"io"
	"path/filepath"
	"slices"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/images"
	"github.com/pinseal/pinseal/pkg/layout"
	"github.com/pinseal/pinseal/pkg/model"
)

// images lists the container images of every release's vendored components
// YAML and vendored blob (inflated within the inflate limit), so the
// image-ref check and `builder images` read them from the model. A blob
// that does not inflate is blob-corrupt's finding, not read here.
func (l *scanner) images(ctx context.Context, p *model.Package) {
	seen := map[string]bool{}
	for _, r := range p.Layout.Releases {
		provs := releaseProviders(r)
		for _, rel := range []string{r.Components, r.Blob} {
			f := p.Files[rel]
			if rel == "" || f == nil || seen[rel+"\x00"+r.Name] || ctx.Err() != nil {
				continue
			}
			seen[rel+"\x00"+r.Name] = true
			gz := f.Blob != nil
			if gz && !layout.Inflated(f.Blob) {
				continue
			}
			fh, err := l.open(filepath.Join(p.Dir, filepath.FromSlash(rel)))
			if err != nil {
				continue // hashing reported it
			}
			var rd io.Reader = ctxReader{ctx, fh}
			if gz {
				rd = blob.InflatedFrom(rd, l.opts.Limit)
			}
			// A workload document that does not parse is the cluster's
			// apply error to report; its images are simply not listed.
			found, _ := images.Scan(rd)
			fh.Close()
			for _, fd := range found {
				p.Images = append(p.Images, model.Image{Ref: fd.Ref, Release: r.Name, Providers: provs,
					Workload: fd.Kind + "/" + fd.Name, Container: fd.Container, InBlob: gz,
					Location: model.Location{File: rel, Line: fd.Line}})
			}
		}
	}
}

// releaseProviders names the providers that install a release.
func releaseProviders(r *model.LayoutRelease) []string {
	var out []string
	for _, q := range r.Providers {
		out = append(out, q.ID())
	}
	if len(out) == 0 && r.Pin != nil && r.Pin.Kind != "" {
		out = append(out, r.Pin.Kind+"/"+r.Pin.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
