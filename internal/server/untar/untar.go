// Package untar unpacks an uploaded .tar.gz safely: nothing is written
// outside the target directory, links cannot lead out of it, and the entry
// count and uncompressed size are bounded before anything is written.
package untar

import (
	"archive/tar"
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
	MaxFiles int   // entries of any kind
	MaxBytes int64 // sum of regular file sizes
}

// LimitError: the archive is larger than the limits allow (413).
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return "upload refused: " + e.Reason }

// UnsafeError: the archive is malformed or tries to write outside its
// root (400).
type UnsafeError struct {
	Entry  string
	Reason string
	Err    error // the underlying read error, if any
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
// stops at the first entry that would pass the file count or the total size
// in lim (the size a header declares is checked before any byte is written,
// so a decompression bomb is refused, not extracted). All writes go through
// an os.Root, so nothing outside dir is touched whatever the archive holds.
func Extract(r io.Reader, dir string, lim Limits) error {
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

	x := extractor{root: root, lim: lim, regular: map[string]bool{}, links: map[string]bool{}, seen: map[string]bool{}}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &UnsafeError{Reason: fmt.Sprintf("not a valid tar.gz stream: %v", err), Err: err}
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	n, err := io.Copy(io.Discard, io.LimitReader(gz, maxTrailing+1))
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
}

func (x *extractor) entry(hdr *tar.Header, body io.Reader) error {
	if hdr.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	name, err := entryName(hdr.Name)
	if err != nil {
		return &UnsafeError{Entry: hdr.Name, Reason: err.Error()}
	}
	x.files++
	if x.files > x.lim.MaxFiles {
		return &LimitError{Reason: fmt.Sprintf("more than %d entries (limits.maxTarFiles)", x.lim.MaxFiles)}
	}
	if name == "." {
		if hdr.Typeflag == tar.TypeDir {
			return nil
		}
		return &UnsafeError{Entry: hdr.Name, Reason: "only a directory may name the root"}
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if x.links[p] {
			return &UnsafeError{Entry: hdr.Name, Reason: fmt.Sprintf("lies under the symbolic link %q", p)}
		}
	}
	if x.seen[name] && hdr.Typeflag != tar.TypeDir {
		return &UnsafeError{Entry: hdr.Name, Reason: "duplicate entry"}
	}
	x.seen[name] = true
	unsafe := func(reason string) error { return &UnsafeError{Entry: hdr.Name, Reason: reason} }
	mkParent := func() error {
		if dir := path.Dir(name); dir != "." {
			if err := x.root.MkdirAll(dir, 0o755); err != nil {
				return unsafe(fmt.Sprintf("create its directory: %v", err))
			}
		}
		return nil
	}

	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := x.root.MkdirAll(name, 0o755); err != nil {
			return unsafe(fmt.Sprintf("create directory: %v", err))
		}
	case tar.TypeReg, tar.TypeRegA:
		if hdr.Size < 0 || hdr.Size > x.lim.MaxBytes-x.bytes {
			return &LimitError{Reason: fmt.Sprintf("the files add up to more than %d bytes uncompressed (limits.maxTarBytes)", x.lim.MaxBytes)}
		}
		x.bytes += hdr.Size
		if err := mkParent(); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if hdr.Mode&0o111 != 0 {
			mode = 0o755
		}
		f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return unsafe(fmt.Sprintf("create file: %v", err))
		}
		_, err = io.Copy(f, body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return &UnsafeError{Entry: hdr.Name, Reason: fmt.Sprintf("write file: %v", err), Err: err}
		}
		x.regular[name] = true
	case tar.TypeSymlink:
		target := hdr.Linkname
		if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) {
			return unsafe("symbolic link with an empty or absolute target")
		}
		if resolved := path.Join(path.Dir(name), target); resolved == ".." || strings.HasPrefix(resolved, "../") {
			return unsafe(fmt.Sprintf("symbolic link to %q points outside the tree", target))
		}
		if err := mkParent(); err != nil {
			return err
		}
		if err := x.root.Symlink(target, name); err != nil {
			return unsafe(fmt.Sprintf("create symbolic link: %v", err))
		}
		x.links[name] = true
	case tar.TypeLink:
		target, err := entryName(hdr.Linkname)
		if err != nil || !x.regular[target] {
			return unsafe(fmt.Sprintf("hard link to %q, which is not a regular file earlier in the archive", hdr.Linkname))
		}
		if err := mkParent(); err != nil {
			return err
		}
		if err := x.root.Link(target, name); err != nil {
			return unsafe(fmt.Sprintf("create hard link: %v", err))
		}
	case tar.TypeChar, tar.TypeBlock:
		return unsafe("device files are not allowed")
	case tar.TypeFifo:
		return unsafe("FIFOs are not allowed")
	default:
		return unsafe(fmt.Sprintf("entry type %q is not allowed (only files, directories and links)", string(hdr.Typeflag)))
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
