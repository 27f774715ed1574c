package load

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
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

// decodeHeld is decodeBase64 of s, but when s is exactly the standard
// base64 of bytes held in mem (a blob the chart's template read with
// .Files.Get and b64enc) it gives those bytes themselves: encoding them a
// chunk at a time and comparing costs less than decoding s into a new
// buffer. The bytes are mem's: not to be written, nor kept past the
// package's load.
func decodeHeld(s string, mem map[string][]byte) ([]byte, error) {
	for _, b := range mem {
		if base64.StdEncoding.EncodedLen(len(b)) == len(s) && len(b) > 0 && encodes(s, b) {
			return b, nil
		}
	}
	return decodeBase64(s)
}

// encodes tells whether s is the standard base64 of b: six bytes of b
// at a time become eight letters through two lookups of twelve bits each
// (base64Pairs), about twice as fast as base64.Encoding.Encode; the last
// few bytes are encoded by it.
func encodes(s string, b []byte) bool {
	if base64.StdEncoding.EncodedLen(len(b)) != len(s) {
		return false
	}
	var buf [4 << 10]byte
	for len(b) >= 8 { // a group is read as eight bytes
		g := min((len(b)-8)/6+1, len(buf)/8)
		for k := range g {
			v := binary.BigEndian.Uint64(b[6*k:])
			binary.LittleEndian.PutUint64(buf[8*k:], uint64(base64Pairs[v>>52])|uint64(base64Pairs[v>>40&0xfff])<<16|
				uint64(base64Pairs[v>>28&0xfff])<<32|uint64(base64Pairs[v>>16&0xfff])<<48)
		}
		if string(buf[:8*g]) != s[:8*g] {
			return false
		}
		b, s = b[6*g:], s[8*g:]
	}
	m := base64.StdEncoding.EncodedLen(len(b))
	base64.StdEncoding.Encode(buf[:m], b)
	return string(buf[:m]) == s
}

// base64Pairs holds the two standard base64 letters of each 12-bit value,
// the first in the low byte.
var base64Pairs = func() (t [1 << 12]uint16) {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = uint16(letters[i>>6]) | uint16(letters[i&63])<<8
	}
	return t
}()

// hashFiles hashes every regular file under files/ and every pinned path
// (sources' "to" and blobs), streaming; gzip files are inspected. Files in
// mem (read already, with the chart) are hashed from memory.
func (l *scanner) hashFiles(ctx context.Context, p *model.Package, mem map[string][]byte) {
	vd := filepath.Join(p.Dir, vendorDir)
	var blobs []string // gzip files read with the chart, hashed last
	sizes := blobSizes(mem)
	kept := map[string][]byte{} // read from disk because a blob may inflate to them
	keptBytes := int64(0)
	if fi, err := os.Lstat(vd); err == nil && fi.IsDir() {
		_ = filepath.WalkDir(vd, func(fp string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rel := relSlash(p.Dir, fp)
			if err != nil {
				p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel},
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
			if isGzip(mem[rel]) {
				blobs = append(blobs, rel) // after the files it may inflate to
				return nil
			}
			keep := sizes
			if keptBytes >= maxKept {
				// Enough held already: a package of many files the size
				// of a blob streams the rest, as without any blob.
				keep = nil
			}
			if b := l.hashFile(ctx, p, rel, mem[rel], keep); b != nil {
				kept[rel] = b
				keptBytes += int64(len(b))
			}
			return nil
		})
		for _, rel := range blobs {
			if ctx.Err() != nil {
				return
			}
			l.hashBlob(ctx, p, rel, mem[rel], expectFor(p, mem, kept, mem[rel]))
		}
	} else if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: vendorDir},
			Message: "files/ is a symlink; vendored files must be in the package, the link is not followed"})
	}
	if p.Pins != nil && p.Pins.File != nil {
		for _, pp := range p.Pins.File.Providers {
			paths := []string{pp.Blob}
			for _, s := range pp.Sources {
				paths = append(paths, s.To)
			}
			for _, rel := range paths {
				if ctx.Err() != nil {
					return
				}
				if rel == "" || p.Files[rel] != nil {
					continue
				}
				if pin.CheckPath(rel) != nil {
					continue // the pin check reports it
				}
				if _, err := os.Lstat(filepath.Join(p.Dir, filepath.FromSlash(rel))); err != nil {
					continue // missing: pin-digest reports it
				}
				l.hashFile(ctx, p, rel, mem[rel], nil)
			}
		}
	}
}

// hashFile hashes one file of the package (rel is a slash path) into
// p.Files, from data when given, else from disk; a file it cannot read is a
// Problem. A file read from disk whose size is in keep (the inflated size
// of a blob, mod 2^32) is read whole and returned, so the blob can be
// checked against it rather than inflated and hashed.
func (l *scanner) hashFile(ctx context.Context, p *model.Package, rel string, data []byte, keep map[uint32]bool) []byte {
	if data != nil {
		if isGzip(data) {
			l.hashBlob(ctx, p, rel, data, nil)
		} else { // read with the chart: hashed where it lies
			p.Files[rel] = &model.File{Path: rel, Size: int64(len(data)), SHA256: sha256.Sum256(data)}
		}
		return nil
	}
	fp := filepath.Join(p.Dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(fp)
	if err != nil {
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel},
			Message: fmt.Sprintf("cannot read %s: %v", rel, unwrapPath(err))})
		return nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, tfi, prob := l.followLink(p.Dir, fp, rel)
		if prob != nil {
			p.Problems = append(p.Problems, *prob)
			return nil
		}
		fp, fi = t, tfi
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := l.open(fp)
	if err != nil {
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel},
			Message: fmt.Sprintf("cannot read %s: %v", rel, unwrapPath(err)), Hint: "make it readable"})
		return nil
	}
	defer f.Close()
	var r io.Reader = ctxReader{ctx, f}
	if size := fi.Size(); keep[uint32(size)] && size <= maxKept {
		// One byte more than the size tells a file that grew since.
		b := make([]byte, size+1)
		n, err := io.ReadFull(r, b)
		switch {
		case n <= int(size) && (err == io.EOF || err == io.ErrUnexpectedEOF):
			l.hashFile(ctx, p, rel, b[:n], nil)
			return b[:n]
		case err == nil:
			r = io.MultiReader(bytes.NewReader(b), r) // grew: hashed as it streams
		default:
			r = io.MultiReader(bytes.NewReader(b[:n]), errReader{err}) // reported as hashReader reports it
		}
	}
	l.hashReader(p, rel, r, nil)
	return nil
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// maxKept bounds a file hashFile reads whole to check a blob against, and
// the files of one package kept so (those read once it is reached are
// streamed): at most twice it is held.
var maxKept int64 = 64 << 20

// blobSizes is the set of inflated sizes (mod 2^32, from their trailers)
// of the blobs in mem.
func blobSizes(mem map[string][]byte) map[uint32]bool {
	sizes := map[uint32]bool{}
	for _, b := range mem {
		if isGzip(b) && len(b) >= 18 {
			sizes[binary.LittleEndian.Uint32(b[len(b)-4:])] = true
		}
	}
	return sizes
}

// ctxReader ends reading with ctx's error once ctx is done: inflating a
// blob (up to the inflate limit, a gigabyte by default) stops at the
// request's or scan's deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// expectFor guesses which file already hashed (and held in mem or kept)
// the gzip data inflates to: one whose size is the size its trailer
// states. The guess only spares inflating and hashing the same bytes
// again when it is right (blob.Expect); it is never trusted.
func expectFor(p *model.Package, mem, kept map[string][]byte, gz []byte) *blob.Expect {
	if len(gz) < 18 {
		return nil
	}
	isize := binary.LittleEndian.Uint32(gz[len(gz)-4:])
	held := func(rel string) []byte {
		if b, ok := mem[rel]; ok {
			return b
		}
		return kept[rel]
	}
	best := ""
	for rel, f := range p.Files {
		if f.Blob == nil && uint32(f.Size) == isize && int64(len(held(rel))) == f.Size && (best == "" || rel < best) {
			best = rel
		}
	}
	if best == "" {
		return nil
	}
	return &blob.Expect{Data: held(best), SHA256: p.Files[best].SHA256}
}

// hashBlob inspects a gzip file held in memory (exp: a guess at what it
// inflates to, or nil), hashing its bytes in the same pass.
func (l *scanner) hashBlob(ctx context.Context, p *model.Package, rel string, gz []byte, exp *blob.Expect) {
	sc := &manifest.Scanner{}
	info := blob.InspectBytes(ctx, gz, l.opts.Limit, sc, exp)
	mf := &model.File{Path: rel, Size: info.Size, SHA256: info.SHA256, Blob: &info}
	if layout.Inflated(&info) {
		mf.Objects = sc.Result()
	}
	p.Files[rel] = mf
}

// hashReader hashes (and for gzip, inspects) one file's bytes, streaming.
func (l *scanner) hashReader(p *model.Package, rel string, r io.Reader, exp *blob.Expect) {
	br := blob.GetReader(r)
	defer blob.PutReader(br)
	mf := &model.File{Path: rel}
	if head, _ := br.Peek(2); isGzip(head) {
		sc := &manifest.Scanner{}
		info := blob.InspectExpect(br, l.opts.Limit, sc, exp)
		mf.Size, mf.SHA256, mf.Blob = info.Size, info.SHA256, &info
		if layout.Inflated(&info) {
			mf.Objects = sc.Result()
		}
	} else {
		h := sha256.New()
		n, err := io.Copy(h, br)
		if err != nil {
			p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel},
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
func (l *scanner) inspect(ctx context.Context, p *model.Package, cm *pendingCM, mem map[string][]byte) {
	comp := cm.Components
	if comp.DecodeErr != nil {
		return
	}
	raw := cm.raw
	comp.Size = int64(len(raw))
	comp.Gzip = isGzip(raw)
	if f := heldBlob(p, mem, raw); f != nil && comp.Gzip {
		// The bytes the chart's template read from the vendored blob
		// (.Files.Get | b64enc), compared rather than hashed again.
		comp.SHA256 = f.SHA256
		info := *f.Blob
		comp.Blob, comp.Objects = &info, f.Objects
		return
	}
	comp.SHA256 = sha256.Sum256(raw)
	if !comp.Gzip {
		comp.Objects = manifest.Scan(raw)
		return
	}
	for _, f := range p.Files {
		if f.Blob != nil && f.SHA256 == comp.SHA256 && f.Size == comp.Size {
			info := *f.Blob
			comp.Blob, comp.Objects = &info, f.Objects
			return
		}
	}
	sc := &manifest.Scanner{}
	info := blob.InspectBytes(ctx, raw, l.opts.Limit, sc, nil)
	comp.Blob = &info
	if layout.Inflated(&info) {
		comp.Objects = sc.Result()
	}
}

// heldBlob is the vendored blob whose bytes, held in mem and hashed from
// there (hashFiles), are exactly raw, or nil: its digest is raw's.
func heldBlob(p *model.Package, mem map[string][]byte, raw []byte) *model.File {
	if !isGzip(raw) {
		return nil // a blob is gzip
	}
	for rel, b := range mem {
		if f := p.Files[rel]; f != nil && f.Blob != nil && f.Size == int64(len(raw)) && bytes.Equal(b, raw) {
			return f
		}
	}
	return nil
}

// components diffs the components of a ConfigMap with the vendored YAML
// the package layout (internal/layout) pairs them with.
func (l *scanner) components(ctx context.Context, p *model.Package, cm *pendingCM, rel *model.LayoutRelease) {
	comp := cm.Components
	if comp.DecodeErr != nil || rel == nil {
		return
	}
	raw := cm.raw
	content, known := comp.SHA256, true
	if comp.Gzip {
		content, known = comp.Blob.RawSHA256, layout.Inflated(comp.Blob)
	}
	y := p.Files[rel.Components]
	if y == nil || y.Blob != nil || !known || y.SHA256 == content {
		return
	}
	yf, err := l.open(filepath.Join(p.Dir, filepath.FromSlash(rel.Components)))
	if err != nil {
		return // hashed a moment ago; a Problem would repeat hashFile's
	}
	defer yf.Close()
	var stored io.Reader = bytes.NewReader(raw)
	if comp.Gzip {
		stored = blob.Inflated(raw, l.opts.Limit)
	}
	comp.Diff = blob.FirstDifference(ctxReader{ctx, yf}, ctxReader{ctx, stored})
}
