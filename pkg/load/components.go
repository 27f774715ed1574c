package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Ways a ConfigMap's components are matched to a vendored YAML file
// (model.Components.MatchedBy).
const (
	MatchedByPin     = "pin"
	MatchedByContent = "content"
	MatchedByName    = "name"
)

// vendorDir is the directory of vendored files in a package.
const vendorDir = "files"

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// decodeBase64 decodes a binaryData value the way the Kubernetes API server
// does (standard alphabet, padded; line breaks ignored).
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("bad base64 at character %d of %d", int64(ce), len(s))
		}
		return nil, err
	}
	return b, nil
}

// hashFiles hashes every regular file under files/ and every pinned path
// (sources' "to" and blobs), streaming; gzip files are inspected. Files in
// mem (read already, with the chart) are hashed from memory.
func (l *scanner) hashFiles(ctx context.Context, p *model.Package, mem map[string][]byte) {
	vd := filepath.Join(p.Dir, vendorDir)
	if fi, err := os.Lstat(vd); err == nil && fi.IsDir() {
		_ = filepath.WalkDir(vd, func(fp string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel := relSlash(p.Dir, fp)
			if err != nil {
				p.Problems = append(p.Problems, model.Problem{Check: CheckLoad, Location: model.Location{File: rel},
					Message: fmt.Sprintf("cannot read %s: %v", rel, unwrapPath(err)), Hint: "make it readable"})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if strings.HasPrefix(d.Name(), atomicfile.TempPrefix) {
				// A temp file an interrupted build left behind: not
				// vendored content (the next build removes it).
				return nil
			}
			l.hashFile(p, rel, mem[rel])
			return nil
		})
	} else if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		p.Problems = append(p.Problems, model.Problem{Check: CheckLoad, Location: model.Location{File: vendorDir},
			Message: "files/ is a symlink; vendored files must be in the package, the link is not followed"})
	}
	if p.Pins != nil && p.Pins.File != nil {
		for _, pp := range p.Pins.File.Providers {
			paths := []string{pp.Blob}
			for _, s := range pp.Sources {
				paths = append(paths, s.To)
			}
			for _, rel := range paths {
				if rel == "" || p.Files[rel] != nil {
					continue
				}
				if pin.CheckPath(rel) != nil {
					continue // the pin check reports it
				}
				if _, err := os.Lstat(filepath.Join(p.Dir, filepath.FromSlash(rel))); err != nil {
					continue // missing: pin-digest reports it
				}
				l.hashFile(p, rel, mem[rel])
			}
		}
	}
}

// hashFile hashes one file of the package (rel is a slash path) into
// p.Files, from data when given, else from disk; a file it cannot read is a
// Problem.
func (l *scanner) hashFile(p *model.Package, rel string, data []byte) {
	if data != nil {
		l.hashReader(p, rel, bytes.NewReader(data))
		return
	}
	fp := filepath.Join(p.Dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(fp)
	if err != nil {
		p.Problems = append(p.Problems, model.Problem{Check: CheckLoad, Location: model.Location{File: rel},
			Message: fmt.Sprintf("cannot read %s: %v", rel, unwrapPath(err))})
		return
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, tfi, prob := l.followLink(p.Dir, fp, rel)
		if prob != nil {
			p.Problems = append(p.Problems, *prob)
			return
		}
		fp, fi = t, tfi
	}
	if !fi.Mode().IsRegular() {
		return
	}
	f, err := os.Open(fp)
	if err != nil {
		p.Problems = append(p.Problems, model.Problem{Check: CheckLoad, Location: model.Location{File: rel},
			Message: fmt.Sprintf("cannot read %s: %v", rel, unwrapPath(err)), Hint: "make it readable"})
		return
	}
	defer f.Close()
	l.hashReader(p, rel, f)
}

// hashReader hashes (and for gzip, inspects) one file's bytes, streaming.
func (l *scanner) hashReader(p *model.Package, rel string, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	mf := &model.File{Path: rel}
	if head, _ := br.Peek(2); isGzip(head) {
		info := blob.Inspect(br, l.opts.Limit)
		mf.Size, mf.SHA256, mf.Blob = info.Size, info.SHA256, &info
	} else {
		h := sha256.New()
		n, err := io.Copy(h, br)
		if err != nil {
			p.Problems = append(p.Problems, model.Problem{Check: CheckLoad, Location: model.Location{File: rel},
				Message: fmt.Sprintf("cannot read %s: %v", rel, unwrapPath(err)), Hint: "make it readable"})
			return
		}
		mf.Size = n
		copy(mf.SHA256[:], h.Sum(nil))
	}
	p.Files[rel] = mf
}

// inflated reports whether Inspect inflated the whole first member, so that
// RawSHA256 is the digest of the content.
func inflated(info *blob.Info) bool {
	if info == nil {
		return false
	}
	if info.Err == nil {
		return true
	}
	ce, ok := blob.IsCorrupt(info.Err)
	return ok && (ce.Kind == blob.MultiMember || ce.Kind == blob.Trailing || ce.Kind == blob.BadChecksum)
}

// components inspects a ConfigMap's components, finds the vendored blob with
// the same bytes and the vendored YAML they should equal, and diffs them.
func (l *scanner) components(p *model.Package, cm *pendingCM) {
	comp := cm.Components
	if comp.DecodeErr != nil {
		return
	}
	raw := cm.raw
	comp.Size = int64(len(raw))
	comp.SHA256 = sha256.Sum256(raw)
	comp.Gzip = isGzip(raw)
	provs := selectors(p, cm.ConfigMap)
	pinned := pinFor(p, cm.ConfigMap, provs)

	// The vendored file with exactly these bytes (the pin's blob first).
	var same []string
	for rel, f := range p.Files {
		if f.SHA256 == comp.SHA256 && f.Size == comp.Size {
			same = append(same, rel)
		}
	}
	sort.Slice(same, func(i, j int) bool {
		a, b := same[i], same[j]
		if pinned != nil && (a == pinned.Blob) != (b == pinned.Blob) {
			return a == pinned.Blob
		}
		if ga, gb := strings.HasSuffix(a, ".gz"), strings.HasSuffix(b, ".gz"); ga != gb {
			return ga
		}
		return a < b
	})
	if len(same) > 0 {
		comp.BlobFile = same[0]
	}

	if comp.Gzip {
		if f := p.Files[comp.BlobFile]; f != nil && f.Blob != nil {
			info := *f.Blob
			comp.Blob = &info
		} else {
			info := blob.Inspect(bytes.NewReader(raw), l.opts.Limit)
			comp.Blob = &info
		}
	}
	content, known := comp.SHA256, true
	if comp.Gzip {
		content, known = comp.Blob.RawSHA256, inflated(comp.Blob)
	}

	switch {
	case pinned != nil && componentsSource(pinned) != "":
		comp.YAMLFile, comp.MatchedBy = componentsSource(pinned), MatchedByPin
	case known && contentMatch(p, content) != "":
		comp.YAMLFile, comp.MatchedBy = contentMatch(p, content), MatchedByContent
	default:
		if y := nameMatch(p, comp.BlobFile, provs); y != "" {
			comp.YAMLFile, comp.MatchedBy = y, MatchedByName
		}
	}

	y := p.Files[comp.YAMLFile]
	if y == nil || y.Blob != nil || !known || y.SHA256 == content {
		return
	}
	yf, err := os.Open(filepath.Join(p.Dir, filepath.FromSlash(comp.YAMLFile)))
	if err != nil {
		return // hashed a moment ago; a Problem would repeat hashFile's
	}
	defer yf.Close()
	var stored io.Reader = bytes.NewReader(raw)
	if comp.Gzip {
		stored = blob.Inflated(raw, l.opts.Limit)
	}
	comp.Diff = blob.FirstDifference(yf, stored)
}

// pinFor finds the pin.yaml provider of a ConfigMap: its release is the
// ConfigMap's name, or the spec.version of a provider selecting it.
func pinFor(p *model.Package, cm *model.ConfigMap, provs []*model.Provider) *pin.Provider {
	if p.Pins == nil || p.Pins.File == nil {
		return nil
	}
	ps := p.Pins.File.Providers
	for i := range ps {
		if ps[i].Release == cm.Name {
			return &ps[i]
		}
	}
	for _, pr := range provs {
		for i := range ps {
			if ps[i].Release == pr.Version {
				return &ps[i]
			}
		}
	}
	return nil
}

// componentsSource is the pinned source that is the components file: the
// one whose "to" ends in components.yaml, else the only one that is not
// metadata.
func componentsSource(pp *pin.Provider) string {
	var other []string
	for _, s := range pp.Sources {
		if strings.HasSuffix(s.To, "components.yaml") {
			return s.To
		}
		if !strings.HasPrefix(path.Base(s.To), "metadata") {
			other = append(other, s.To)
		}
	}
	if len(other) == 1 {
		return other[0]
	}
	return ""
}

// contentMatch returns the vendored plain file whose SHA-256 is digest,
// preferring *components.yaml names.
func contentMatch(p *model.Package, digest blob.Digest) string {
	var c []string
	for rel, f := range p.Files {
		if f.Blob == nil && f.SHA256 == digest {
			c = append(c, rel)
		}
	}
	sort.Slice(c, func(i, j int) bool {
		a, b := strings.HasSuffix(c[i], "components.yaml"), strings.HasSuffix(c[j], "components.yaml")
		if a != b {
			return a
		}
		return c[i] < c[j]
	})
	if len(c) == 0 {
		return ""
	}
	return c[0]
}

// nameMatch finds the vendored YAML by name: x.yaml.gz ↔ x.yaml;
// components-talos.gz ↔ *talos*components.yaml; components.gz ↔
// <type>-components.yaml, core-components.yaml or the only *components.yaml;
// else a *components.yaml naming the provider.
func nameMatch(p *model.Package, blobFile string, provs []*model.Provider) string {
	var yamls []string // vendored plain YAML files that look like components
	for rel, f := range p.Files {
		if f.Blob == nil && isYAMLName(rel) && strings.Contains(path.Base(rel), "components") {
			yamls = append(yamls, rel)
		}
	}
	sort.Strings(yamls)
	has := func(rel string) bool { f := p.Files[rel]; return f != nil && f.Blob == nil }
	pick := func(pred func(base string) bool) string {
		var m []string
		for _, y := range yamls {
			if pred(path.Base(y)) {
				m = append(m, y)
			}
		}
		if len(m) == 1 {
			return m[0]
		}
		return ""
	}
	dir := vendorDir
	suffix, plain := "", false
	if blobFile != "" {
		dir = path.Dir(blobFile)
		stem := strings.TrimSuffix(path.Base(blobFile), ".gz")
		if isYAMLName(stem) && has(path.Join(dir, stem)) {
			return path.Join(dir, stem)
		}
		switch {
		case stem == "components":
			plain = true
		case strings.HasPrefix(stem, "components-"):
			suffix = strings.TrimPrefix(stem, "components-")
		case strings.HasSuffix(stem, "-components"):
			suffix = strings.TrimSuffix(stem, "-components")
		}
	}
	if suffix != "" {
		if y := pick(func(b string) bool { return strings.Contains(b, suffix) && strings.HasSuffix(b, "components.yaml") }); y != "" {
			return y
		}
	}
	if plain {
		for _, pr := range provs {
			if y := path.Join(dir, pr.Type()+"-components.yaml"); pr.Type() != "" && has(y) {
				return y
			}
		}
		if y := path.Join(dir, "core-components.yaml"); has(y) {
			return y
		}
	}
	for _, pr := range provs {
		if pr.Name == "" {
			continue
		}
		if y := pick(func(b string) bool { return strings.Contains(b, pr.Name) && strings.HasSuffix(b, "components.yaml") }); y != "" {
			return y
		}
	}
	if blobFile == "" {
		for _, pr := range provs {
			if y := path.Join(dir, pr.Type()+"-components.yaml"); pr.Type() != "" && has(y) {
				return y
			}
		}
	}
	return pick(func(b string) bool { return strings.HasSuffix(b, "components.yaml") })
}
