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
	"path/filepath"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/layout"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Ways a ConfigMap's components are matched to a vendored YAML file
// (model.Components.MatchedBy), as pkg/layout decides them.
const (
	MatchedByPin     = layout.ByPin
	MatchedByContent = layout.ByContent
	MatchedByName    = layout.ByName
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

// ParseMetadata parses clusterctl's Metadata (metadata.yaml): apiVersion
// clusterctl.cluster.x-k8s.io/*, releaseSeries of major/minor/contract. `kind:
// Metadata` may be omitted; every other problem is in Metadata.Err.
func ParseMetadata(raw []byte) *model.Metadata {
	md := &model.Metadata{}
	fail := func(format string, a ...any) *model.Metadata {
		md.Err = fmt.Errorf(format, a...)
		return md
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fail("metadata is empty")
	}
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return fail("metadata does not parse: %v", err)
	}
	if len(n.Content) == 0 {
		return fail("metadata is empty")
	}
	root := n.Content[0]
	if root.Kind != yaml.MappingNode {
		return fail("metadata is a %s, not a mapping", nodeKind(root))
	}
	if d := duplicateKeys(root); len(d) > 0 {
		return fail("metadata has duplicate key %q (lines %d and %d)", d[0].key, d[0].first, d[0].line)
	}
	if av, ok := scalar(lookup(root, "apiVersion")); ok && !strings.HasPrefix(av, "clusterctl.cluster.x-k8s.io/") {
		return fail("metadata apiVersion is %q, want clusterctl.cluster.x-k8s.io/v1alpha3", av)
	}
	if k := lookup(root, "kind"); k != nil {
		md.Kind, _ = scalar(k)
		if md.Kind != "Metadata" {
			return fail("metadata kind is %q, want Metadata (or no kind)", md.Kind)
		}
	}
	rs := lookup(root, "releaseSeries")
	if rs == nil {
		return fail("metadata has no releaseSeries")
	}
	if rs.Kind != yaml.SequenceNode {
		return fail("metadata releaseSeries is a %s, not a list", nodeKind(rs))
	}
	for i, e := range rs.Content {
		var s model.ReleaseSeries
		var err error
		if s.Major, err = intField(e, "major"); err != nil {
			return fail("releaseSeries[%d]: %v", i, err)
		}
		if s.Minor, err = intField(e, "minor"); err != nil {
			return fail("releaseSeries[%d]: %v", i, err)
		}
		c, ok := scalar(lookup(e, "contract"))
		if !ok || c == "" {
			return fail("releaseSeries[%d] (line %d): contract missing", i, e.Line)
		}
		s.Contract = c
		md.ReleaseSeries = append(md.ReleaseSeries, s)
	}
	return md
}

func intField(m *yaml.Node, key string) (int, error) {
	v := lookup(m, key)
	s, ok := scalar(v)
	if !ok {
		return 0, fmt.Errorf("%s missing", key)
	}
	if v.Tag != "!!int" {
		return 0, fmt.Errorf("%s is %q (line %d), not an integer", key, s, v.Line)
	}
	n, err := strconv.ParseInt(s, 0, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s is %q (line %d), not a non-negative integer", key, s, v.Line)
	}
	return int(n), nil
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

// inspect decodes what a ConfigMap's components are (size, digest, gzip
// header and inflated digest), before the layout is derived. A blob with
// exactly the bytes of a vendored file reuses that file's inspection.
func (l *scanner) inspect(p *model.Package, cm *pendingCM) {
	comp := cm.Components
	if comp.DecodeErr != nil {
		return
	}
	raw := cm.raw
	comp.Size = int64(len(raw))
	comp.SHA256 = sha256.Sum256(raw)
	comp.Gzip = isGzip(raw)
	if !comp.Gzip {
		return
	}
	for _, f := range p.Files {
		if f.Blob != nil && f.SHA256 == comp.SHA256 && f.Size == comp.Size {
			info := *f.Blob
			comp.Blob = &info
			return
		}
	}
	info := blob.Inspect(bytes.NewReader(raw), l.opts.Limit)
	comp.Blob = &info
}

// components records the package layout's blob and YAML of a ConfigMap
// (pkg/layout decides them) and diffs the components with that YAML.
func (l *scanner) components(p *model.Package, cm *pendingCM, rel *layout.Release) {
	comp := cm.Components
	if comp.DecodeErr != nil || rel == nil {
		return
	}
	if rel.BlobBy == layout.ByBytes {
		comp.BlobFile = rel.Blob
	}
	comp.YAMLFile, comp.MatchedBy = rel.Components, rel.ComponentsBy
	raw := cm.raw
	content, known := comp.SHA256, true
	if comp.Gzip {
		content, known = comp.Blob.RawSHA256, layout.Inflated(comp.Blob)
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
		stored = inflateReader(raw, l.opts.Limit)
	}
	comp.Diff = diffStreams(yf, stored)
}
