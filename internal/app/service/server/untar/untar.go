// Package untar unpacks an uploaded .tar.gz safely, within bounds and inside
// its target.
//
// It unpacks an uploaded .tar.gz safely: nothing is written
// outside the target directory, links cannot lead out of it, and the entry
// count (directories a path creates included), path depth and length, and
// uncompressed size are bounded before anything is written.
package untar

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Limits bound an archive.
type Limits struct {
	// MaxFiles bounds the entries of any kind, PAX global headers and the
	// directories that entry paths create without an entry of their own.
	MaxFiles int
	MaxBytes int64 // sum of regular file sizes
	// MaxDepth bounds the path elements of an entry name (a/b/c is 3).
	// 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxPathBytes bounds the length of an entry name and of a link
	// target. 0 means DefaultMaxPathBytes.
	MaxPathBytes int
}

// Defaults of the bounds a zero Limits field stands for.
const (
	DefaultMaxDepth     = 32
	DefaultMaxPathBytes = 1024
)

// LimitError: the archive is larger than the limits allow (413).
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return "upload refused: " + e.Reason }

// UnsafeError: the archive is malformed or tries to write outside its
// root (400).
type UnsafeError struct {
	Entry  string
	Reason string
	Err    error // the underlying read or write error, if any
}

func (e *UnsafeError) Unwrap() error { return e.Err }

func (e *UnsafeError) Error() string {
	if e.Entry == "" {
		return "upload refused: " + e.Reason
	}
	return fmt.Sprintf("upload refused: entry %q: %s", e.Entry, e.Reason)
}

// maxTrailing bounds what may follow the end of the tar stream inside the
// gzip stream (tar pads to 10 KiB records; anything much larger is junk).
const maxTrailing = 1 << 20

// Extract unpacks a gzip-compressed tar stream into dir, which must
// exist and be empty. It refuses, before writing them, entries with absolute
// paths or "..", devices, FIFOs and sparse files, duplicate entries, links
// whose target lies outside dir and entries under a symbolic link; and it
// stops at the first entry that would pass the file count (directories its
// path creates and PAX global headers included), the path depth or length,
// or the total size in lim (the size a header declares is checked before any
// byte is written, so a decompression bomb is refused, not extracted). All
// writes go through an os.Root, so nothing outside dir is touched whatever
// the archive holds. It stops with ctx's error when ctx ends. Whatever it
// returns, the caller removes dir (RemoveAll copes with any tree).
func Extract(ctx context.Context, r io.Reader, dir string, lim Limits) error {
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = DefaultMaxDepth
	}
	if lim.MaxPathBytes <= 0 {
		lim.MaxPathBytes = DefaultMaxPathBytes
	}
	r = ctxReader{ctx: ctx, r: r}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return &UnsafeError{Reason: fmt.Sprintf("not a gzip stream: %v", err), Err: err}
	}
	defer gz.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open extraction directory: %w", err)
	}
	defer root.Close()

	x := extractor{root: root, lim: lim, regular: map[string]bool{}, links: map[string]bool{}, seen: map[string]bool{}, dirs: map[string]bool{}, made: map[string]bool{}}
	tr := tar.NewReader(gz)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return &UnsafeError{Reason: fmt.Sprintf("not a valid tar.gz stream: %v", err), Err: err}
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	n, err := io.Copy(io.Discard, io.LimitReader(gz, maxTrailing+1))
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		return &UnsafeError{Reason: fmt.Sprintf("corrupt gzip stream: %v", err), Err: err}
	}
	if n > maxTrailing {
		return &LimitError{Reason: "more than 1 MiB of data after the end of the tar archive"}
	}
	return x.checkLinks(dir)
}

type extractor struct {
	root    *os.Root
	lim     Limits
	files   int
	bytes   int64
	regular map[string]bool // regular files written: hard link targets
	links   map[string]bool // symbolic links written
	seen    map[string]bool // every entry name, cleaned
	dirs    map[string]bool // directories counted (created, or to be created by this entry)
	made    map[string]bool // directories known to exist: MkdirAll is skipped
}

// mkdirAll creates dir and its parents unless it made them already (an
// os.Root walks every element of the path on each call).
func (x *extractor) mkdirAll(dir string) error {
	if x.made[dir] {
		return nil
	}
	if err := x.root.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	x.made[dir] = true
	return nil
}

func (x *extractor) tooMany() error {
	return &LimitError{Reason: fmt.Sprintf("more than %d entries, counting the directories their paths create (limits.maxTarFiles)", x.lim.MaxFiles)}
}

func (x *extractor) entry(hdr *tar.Header, body io.Reader) error {
	name, skip, err := x.admit(hdr)
	if err != nil || skip {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.mkdirAll(name); err != nil {
			return entryFailed(hdr, "create directory", err)
		}
	case tar.TypeReg, tar.TypeRegA:
		return x.writeFile(hdr, name, body)
	case tar.TypeSymlink:
		return x.writeSymlink(hdr, name)
	case tar.TypeLink:
		return x.writeLink(hdr, name)
	case tar.TypeChar, tar.TypeBlock:
		return entryUnsafe(hdr, "device files are not allowed")
	case tar.TypeFifo:
		return entryUnsafe(hdr, "FIFOs are not allowed")
	default:
		return entryUnsafe(hdr, fmt.Sprintf("entry type %q is not allowed (only files, directories and links)", string(hdr.Typeflag)))
	}
	return nil
}

// admit counts the entry and the directories its path creates against the
// limits and refuses an unsafe name; it returns the cleaned name, and skip
// for an entry that writes nothing (a PAX global header, the root).
func (x *extractor) admit(hdr *tar.Header) (name string, skip bool, err error) {
	x.files++
	if x.files > x.lim.MaxFiles {
		return "", false, x.tooMany()
	}
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return "", true, nil // counted above: a stream of them is bounded too
	}
	if len(hdr.Name) > x.lim.MaxPathBytes || len(hdr.Linkname) > x.lim.MaxPathBytes {
		return "", false, &LimitError{Reason: fmt.Sprintf("entry %.64q...: a path or link target longer than %d bytes (limits.maxTarPathBytes)", hdr.Name, x.lim.MaxPathBytes)}
	}
	name, err = entryName(hdr.Name)
	if err != nil {
		return "", false, &UnsafeError{Entry: hdr.Name, Reason: err.Error()}
	}
	if depth := strings.Count(name, "/") + 1; depth > x.lim.MaxDepth {
		return "", false, &LimitError{Reason: fmt.Sprintf("entry %.64q...: %d directories deep, more than %d (limits.maxTarDepth)", hdr.Name, depth, x.lim.MaxDepth)}
	}
	// The directories the path creates count as entries, before any is
	// created.
	dir := name
	if hdr.Typeflag != tar.TypeDir {
		dir = path.Dir(name)
	}
	for p := dir; p != "." && !x.dirs[p]; p = path.Dir(p) {
		x.dirs[p] = true
		if p != name { // an explicit directory entry is counted already
			x.files++
		}
	}
	if x.files > x.lim.MaxFiles {
		return "", false, x.tooMany()
	}
	if name == "." {
		if hdr.Typeflag == tar.TypeDir {
			return "", true, nil
		}
		return "", false, &UnsafeError{Entry: hdr.Name, Reason: "only a directory may name the root"}
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.links[p] {
			return "", false, &UnsafeError{Entry: hdr.Name, Reason: fmt.Sprintf("lies under the symbolic link %q", p)}
		}
	}
	if x.seen[name] && hdr.Typeflag != tar.TypeDir {
		return "", false, &UnsafeError{Entry: hdr.Name, Reason: "duplicate entry"}
	}
	x.seen[name] = true
	return name, false, nil
}

func entryUnsafe(hdr *tar.Header, reason string) error {
	return &UnsafeError{Entry: hdr.Name, Reason: reason}
}

// entryFailed keeps the cause: a full disk is the server's fault, not the
// upload's (the server tells them apart by it).
func entryFailed(hdr *tar.Header, what string, err error) error {
	return &UnsafeError{Entry: hdr.Name, Reason: fmt.Sprintf("%s: %v", what, err), Err: err}
}

// mkParent creates the directory an entry is written in.
func (x *extractor) mkParent(hdr *tar.Header, name string) error {
	if dir := path.Dir(name); dir != "." {
		if err := x.mkdirAll(dir); err != nil {
			return entryFailed(hdr, "create its directory", err)
		}
	}
	return nil
}

func (x *extractor) writeFile(hdr *tar.Header, name string, body io.Reader) error {
	if hdr.Size < 0 || hdr.Size > x.lim.MaxBytes-x.bytes {
		return &LimitError{Reason: fmt.Sprintf("the files add up to more than %d bytes uncompressed (limits.maxTarBytes)", x.lim.MaxBytes)}
	}
	x.bytes += hdr.Size
	if err := x.mkParent(hdr, name); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if hdr.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return entryFailed(hdr, "create file", err)
	}
	_, err = io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	var ce ctxError
	if errors.As(err, &ce) {
		return ce.error
	}
	if err != nil {
		return &UnsafeError{Entry: hdr.Name, Reason: fmt.Sprintf("write file: %v", err), Err: err}
	}
	x.regular[name] = true
	return nil
}

func (x *extractor) writeSymlink(hdr *tar.Header, name string) error {
	target := hdr.Linkname
	if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return entryUnsafe(hdr, "symbolic link with an empty or absolute target")
	}
	if resolved := path.Join(path.Dir(name), target); resolved == ".." || strings.HasPrefix(resolved, "../") {
		return entryUnsafe(hdr, fmt.Sprintf("symbolic link to %q points outside the tree", target))
	}
	if err := x.mkParent(hdr, name); err != nil {
		return err
	}
	if err := x.root.Symlink(target, name); err != nil {
		return entryFailed(hdr, "create symbolic link", err)
	}
	x.links[name] = true
	return nil
}

func (x *extractor) writeLink(hdr *tar.Header, name string) error {
	target, err := entryName(hdr.Linkname)
	if err != nil || !x.regular[target] {
		return entryUnsafe(hdr, fmt.Sprintf("hard link to %q, which is not a regular file earlier in the archive", hdr.Linkname))
	}
	if err := x.mkParent(hdr, name); err != nil {
		return err
	}
	if err := x.root.Link(target, name); err != nil {
		return entryFailed(hdr, "create hard link", err)
	}
	return nil
}

// entryName cleans a tar entry name: relative, slash-separated, no "..".
func entryName(raw string) (string, error) {
	if raw == "" || strings.ContainsRune(raw, 0) {
		return "", errors.New("empty name or NUL in name")
	}
	if strings.HasPrefix(raw, "/") || filepath.IsAbs(raw) || (len(raw) > 1 && raw[1] == ':') {
		return "", errors.New("absolute path")
	}
	if strings.Contains(raw, `\`) {
		return "", errors.New("backslash in name (write paths with /)")
	}
	for _, el := range strings.Split(raw, "/") {
		if el == ".." {
			return "", errors.New(`".." in path`)
		}
	}
	return path.Clean(raw), nil
}

// checkLinks resolves every symbolic link for real (following chains) and
// refuses the tree if one ends outside it or nowhere: the engine reads the
// tree with ordinary file calls, which follow links.
func (x *extractor) checkLinks(dir string) error {
	if len(x.links) == 0 {
		return nil
	}
	rootReal, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("resolve extraction directory: %w", err)
	}
	for name := range x.links {
		real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return &UnsafeError{Entry: name, Reason: "symbolic link that does not resolve inside the tree"}
		}
		if rel, err := filepath.Rel(rootReal, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return &UnsafeError{Entry: name, Reason: "symbolic link that resolves outside the tree"}
		}
	}
	return nil
}

// ctxReader fails reads once ctx has ended, so that extraction stops at the
// request's deadline however the archive is shaped.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// ctxError carries ctx's error through the tar and gzip readers.
type ctxError struct{ error }

func (c ctxError) Unwrap() error { return c.error }

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, ctxError{err}
	}
	return c.r.Read(p)
}
