package load

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"slices"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

// images lists the container images of every release's vendored components
// YAML and vendored blob (inflated within the inflate limit), so the
// image-ref check and `builder images` read them from the model. A blob
// that does not inflate is blob-corrupt's finding, not read here. Files of
// mem (a chart's, read with it) are read from memory.
func (l *scanner) images(ctx context.Context, p *model.Package, mem map[string][]byte) {
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
			if y := p.Files[r.Components]; gz && y != nil && y.Blob == nil && rel != r.Components && f.Blob.RawSHA256 == y.SHA256 {
				// The blob inflates to exactly the YAML just read: its
				// images are the YAML's, on the same lines.
				p.Images = append(p.Images, inBlob(p.Images, r.Name, r.Components, rel)...)
				for _, u := range p.UnreadWorkloads {
					if u.Release == r.Name && u.File == r.Components && !u.InBlob {
						u.File, u.InBlob = rel, true
						p.UnreadWorkloads = append(p.UnreadWorkloads, u)
					}
				}
				continue
			}
			found, ok, err := l.scanImages(ctx, p, rel, mem[rel], gz)
			if !ok {
				continue // hashing reported why it cannot be read
			}
			p.UnreadWorkloads = append(p.UnreadWorkloads, unread(err, r.Name, provs, rel, gz)...)
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

// inBlob copies the images listed for release's YAML file as images of the
// blob that inflates to it.
func inBlob(imgs []model.Image, release, yaml, blobFile string) []model.Image {
	var out []model.Image
	for _, img := range imgs {
		if img.Release == release && img.File == yaml && !img.InBlob {
			img.File, img.InBlob = blobFile, true
			out = append(out, img)
		}
	}
	return out
}

// scanImages lists the images of one vendored file, from data when it is
// held in memory, inflating it when gz. A workload document that does not
// parse is the cluster's apply error to report; its images are simply not
// listed. err is Scan's: the caller keeps the documents too large to be
// read for sure (images.Problems), which image-ref reports.
func (l *scanner) scanImages(ctx context.Context, p *model.Package, rel string, data []byte, gz bool) ([]images.Found, bool, error) {
	if data != nil && !gz {
		found, err := images.ScanBytes(data)
		return found, true, err
	}
	var rd io.Reader
	if data != nil {
		rd = bytes.NewReader(data)
	} else {
		fh, err := l.open(filepath.Join(p.Dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, false, nil
		}
		defer fh.Close()
		rd = ctxReader{ctx, fh}
	}
	if gz {
		rd = blob.InflatedFrom(rd, l.opts.Limit)
	}
	found, err := images.Scan(rd)
	return found, true, err
}

// unread lists the workload documents of rel whose images Scan did not
// read for sure (err is Scan's): too large, ambiguous, or holding a value
// that is no image reference.
func unread(err error, release string, provs []string, rel string, gz bool) []model.UnreadWorkload {
	var out []model.UnreadWorkload
	for _, o := range images.Problems(err) {
		out = append(out, model.UnreadWorkload{Release: release, Providers: provs, Kind: o.Kind, InBlob: gz,
			Why: o.Why, Error: o.Error, Hint: o.Hint, Location: model.Location{File: rel, Line: o.Line}})
	}
	return out
}

// inlineImages lists the images of a ConfigMap's components that are no
// vendored file's bytes: gzip components (an air-gap chart inlines its
// blob in a template), located at the ConfigMap's file with the line of
// what the blob inflates to; plain data.components (providers in plain
// manifests), at the line of the file they are written on when the value
// is a literal block scalar of a plain manifest, else at the value's line.
func (l *scanner) inlineImages(ctx context.Context, p *model.Package, cm *pendingCM) []model.Image {
	comp := cm.Components
	if comp == nil || comp.DecodeErr != nil || cm.raw == nil {
		return nil
	}
	release, provs := cm.Name, []string(nil)
	r := p.Layout.ConfigMap(cm.ConfigMap)
	if r != nil {
		release, provs = r.Name, releaseProviders(r)
	}
	var found []images.Found
	var err error
	line := func(n int) int { return n }
	switch {
	case comp.Gzip:
		if comp.Blob == nil || !layout.Inflated(comp.Blob) || p.Layout.BlobFile(cm.ConfigMap) != "" {
			return nil
		}
		found, err = images.Scan(blob.InflatedFrom(ctxReader{ctx, bytes.NewReader(cm.raw)}, l.opts.Limit))
	case !comp.InBinaryData:
		if r != nil && r.Components != "" && p.Files[r.Components] != nil && p.Files[r.Components].SHA256 == comp.SHA256 {
			return nil // the vendored YAML with these bytes is read with its own lines
		}
		found, err = images.ScanBytes(cm.raw)
		line = func(int) int { return cm.txtLine }
		if cm.txtExact {
			line = func(n int) int { return cm.txtLine + n }
		}
	default:
		return nil
	}
	for _, u := range unread(err, release, provs, cm.File, comp.Gzip) {
		u.Line = line(u.Line)
		p.UnreadWorkloads = append(p.UnreadWorkloads, u)
	}
	var out []model.Image
	for _, fd := range found {
		out = append(out, model.Image{Ref: fd.Ref, Release: release, Providers: provs,
			Workload: fd.Kind + "/" + fd.Name, Container: fd.Container, InBlob: comp.Gzip,
			Location: model.Location{File: cm.File, Line: line(fd.Line)}})
	}
	return out
}
