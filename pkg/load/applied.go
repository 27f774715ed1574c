package load

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"path/filepath"
	"sync"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

// applied lists the objects of every release's components as the API
// server receives them (model.Package.Applied): the vendored blob,
// inflated within the inflate limit, else the vendored YAML. A document
// that does not parse is package-load's or the cluster's to report, not
// listed here; a blob that does not inflate is blob-corrupt's. Each CRD
// is judged here (Options.CRDs) and only its verdict kept, so the model
// does not grow with the CRDs' text.
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
			a, ok := l.appliedObject(d, rel)
			if !ok {
				continue
			}
			a.Release, a.Providers, a.InBlob, a.File = r.Name, provs, gz, rel
			p.Applied = append(p.Applied, a)
		}
	}
}

const crdKind = "CustomResourceDefinition"

// jsonBufs hold the buffers CRDs are written into as JSON for their
// judge: a CRD's JSON is tens of kilobytes, judged and dropped.
var jsonBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledJSON is the largest buffer jsonBufs keeps.
const maxPooledJSON = 4 << 20

// appliedObject is the object the document d of the file rel is (Line
// set, the rest of its place left to the caller); false when it is none
// (it does not parse, or has no kind). A CRD is judged with
// Options.CRDs: one the judge remembers is not parsed at all, and one of
// the YAML manifest.AppendDocJSON reads is written as JSON from its bytes
// without a tree.
func (l *scanner) appliedObject(d manifest.Doc, rel string) (model.AppliedObject, bool) {
	judge := l.opts.CRDs
	var sum [32]byte
	hashed := false
	if judge != nil && d.MayBeKind(crdKind) {
		sum, hashed = sha256.Sum256(d.Bytes()), true
		if a, ok := judge.Recall(sum); ok {
			a.Line += d.Line()
			return a, true
		}
		if a, ok, read := l.crdByBytes(d, sum); read {
			return a, ok
		}
	}
	o, _ := manifest.ParseDoc(d, rel)
	if o == nil || o.Kind == "" {
		return model.AppliedObject{}, false
	}
	a := model.AppliedObject{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, Namespace: o.Namespace}
	if o.Kind == crdKind && judge != nil {
		if !hashed {
			sum = sha256.Sum256(d.Bytes())
		}
		a.Line = o.Line - d.Line()
		buf := jsonBufs.Get().(*[]byte)
		js := manifest.AppendJSON((*buf)[:0], o.Root)
		a.CRD = judge.Judge(sum, a, js)
		if cap(js) <= maxPooledJSON {
			*buf = js[:0]
		}
		jsonBufs.Put(buf)
	}
	a.Line = o.Line
	return a, true
}

// crdByBytes is appliedObject of a document that may be a CRD, its JSON
// written straight from its bytes (manifest.AppendDocJSON) rather than
// from a parsed tree; read is false when the document is not of the YAML
// that reads, and appliedObject parses it.
func (l *scanner) crdByBytes(d manifest.Doc, sum [32]byte) (a model.AppliedObject, ok, read bool) {
	buf := jsonBufs.Get().(*[]byte)
	defer func() {
		if cap(*buf) > maxPooledJSON {
			*buf = nil
		}
		jsonBufs.Put(buf)
	}()
	h, js, read := manifest.AppendDocJSON((*buf)[:0], d)
	if !read {
		return model.AppliedObject{}, false, false
	}
	*buf = js[:0]
	if h.Kind == "" {
		return model.AppliedObject{}, false, true
	}
	a = model.AppliedObject{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Name, Namespace: h.Namespace}
	if h.Kind == crdKind {
		a.Line = h.Line - d.Line()
		a.CRD = l.opts.CRDs.Judge(sum, a, js)
	}
	a.Line = h.Line
	return a, true, true
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
