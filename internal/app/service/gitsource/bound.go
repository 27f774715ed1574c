package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync/atomic"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Bounds of a checkout: a repository of a few kilobytes can hold a tree of
// millions of files (trees and blobs are stored once and named many times),
// so the tree is measured from its objects before anything is written, and
// every write goes through a filesystem that counts what it writes.

// Default bounds (Spec's zero values).
const (
	DefaultMaxFiles = 100000
	DefaultMaxBytes = 1 << 30
	// DefaultMaxFileBytes bounds one file: as large as the loader keeps
	// of any file (a components YAML is about 1 MB), and under GitHub's
	// own 100 MiB refusal.
	DefaultMaxFileBytes = 64 << 20
)

// FileLimitError is one file of a checkout over the per-file bound.
type FileLimitError struct {
	Path  string // slash path in the tree written
	Size  int64
	Limit int64
}

func (e *FileLimitError) Error() string {
	return fmt.Sprintf("%s holds %d bytes, more than the %d a file may hold (limits.gitMaxFileBytes); nothing was scanned: raise limits.gitMaxFileBytes if the file really is that large, or keep it out of the repository", e.Path, e.Size, e.Limit)
}

// LimitError is a checkout over one of its bounds.
type LimitError struct {
	What  string // "files" or "bytes"
	Limit int64
	// During is set when the bound was passed while writing (the git data
	// fetched or the checkout), not found in the tree beforehand.
	During string
}

func (e *LimitError) Error() string {
	unit, setting := "files, directories and links", "limits.gitMaxFiles"
	if e.What == "bytes" {
		unit, setting = "bytes", "limits.gitMaxBytes"
	}
	where := "the commit's tree holds more than"
	if e.During != "" {
		where = e.During + " went over"
	}
	return fmt.Sprintf("%s %d %s (%s); nothing was scanned: raise %s if the repository really is that large", where, e.Limit, unit, setting, setting)
}

func (s Spec) maxFiles() int64 {
	if s.MaxFiles > 0 {
		return int64(s.MaxFiles)
	}
	return DefaultMaxFiles
}

func (s Spec) maxFileBytes() int64 {
	if s.MaxFileBytes > 0 {
		return s.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

func (s Spec) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return DefaultMaxBytes
}

// measureTree counts the entries (files, directories, links, submodules)
// and blob bytes of commit's tree as a checkout would write them, each
// subtree measured once however often it is named, and stops as soon as a
// bound is passed. ctx is checked at every tree.
func measureTree(ctx context.Context, repo *git.Repository, commit plumbing.Hash, spec Spec) error {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return err
	}
	t, err := repo.TreeObject(c.TreeHash)
	if err != nil {
		return err
	}
	return newMeasure(ctx, repo, spec).add(t, "", true)
}

// size is what a tree writes: its entries and the bytes of its blobs.
type size struct{ files, bytes int64 }

// measure sums the sizes of the parts of a tree about to be written
// against spec's bounds, from the objects' headers alone (no blob is
// read), each subtree and blob measured once however often it is named.
type measure struct {
	ctx                     context.Context
	repo                    *git.Repository
	maxFiles, maxBytes, max int64
	seen                    map[plumbing.Hash]size
	blobs                   map[plumbing.Hash]int64
	total                   size
}

func newMeasure(ctx context.Context, repo *git.Repository, spec Spec) *measure {
	return &measure{ctx: ctx, repo: repo, maxFiles: spec.maxFiles(), maxBytes: spec.maxBytes(), max: spec.maxFileBytes(),
		seen: map[plumbing.Hash]size{}, blobs: map[plumbing.Hash]int64{}}
}

func (m *measure) over(s size) error {
	switch {
	case s.files > m.maxFiles:
		return &LimitError{What: "files", Limit: m.maxFiles}
	case s.bytes > m.maxBytes:
		return &LimitError{What: "bytes", Limit: m.maxBytes}
	}
	return nil
}

// add adds tree t at dir (whole: with its subdirectories, else only its
// files and links) to the total and refuses it past a bound.
func (m *measure) add(t *object.Tree, dir string, whole bool) error {
	s, err := m.tree(t, dir, strings.Count(dir, "/"), whole)
	if err != nil {
		return err
	}
	m.total.files += s.files
	m.total.bytes += s.bytes
	return m.over(m.total)
}

func (m *measure) tree(t *object.Tree, dir string, depth int, whole bool) (size, error) {
	if s, ok := m.seen[t.Hash]; ok && whole {
		return s, nil
	}
	if err := m.ctx.Err(); err != nil {
		return size{}, err
	}
	if depth > maxTreeDepth {
		return size{}, fmt.Errorf("the commit's tree is more than %d directories deep", maxTreeDepth)
	}
	var s size
	for _, e := range t.Entries {
		name := path.Join(dir, e.Name)
		switch e.Mode {
		case filemode.Dir:
			if !whole {
				continue
			}
			s.files++
			st, err := m.repo.TreeObject(e.Hash)
			if err != nil {
				return size{}, err
			}
			sub, err := m.tree(st, name, depth+1, true)
			if err != nil {
				return size{}, err
			}
			s.files += sub.files
			s.bytes += sub.bytes
		case filemode.Submodule:
			// Not fetched: an empty directory.
			if whole {
				s.files++
			}
		default:
			s.files++
			n, ok := m.blobs[e.Hash]
			if !ok {
				var err error
				if n, err = objectSize(m.repo, e.Hash); err != nil {
					return size{}, err
				}
				m.blobs[e.Hash] = n
			}
			if n > m.max && e.Mode != filemode.Symlink {
				return size{}, &FileLimitError{Path: name, Size: n, Limit: m.max}
			}
			s.bytes += n
		}
		if err := m.over(size{m.total.files + s.files, m.total.bytes + s.bytes}); err != nil {
			return size{}, err
		}
	}
	if whole {
		m.seen[t.Hash] = s
	}
	return s, nil
}

// objectSize is the inflated size of object h, read from its header where
// the storage can (a filesystem storage: loose or packed), else from the
// object.
func objectSize(repo *git.Repository, h plumbing.Hash) (int64, error) {
	if s, ok := repo.Storer.(interface {
		EncodedObjectSize(plumbing.Hash) (int64, error)
	}); ok {
		return s.EncodedObjectSize(h)
	}
	o, err := repo.Storer.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, err
	}
	return o.Size(), nil
}

// maxTreeDepth bounds the directory depth of a checkout (the recursion of
// measureTree); Linux refuses paths longer than 4096 bytes well before.
const maxTreeDepth = 1024

// boundedFS is a billy filesystem that counts what is written through it
// (files created, bytes written) against its budget, shared with every
// filesystem Chroot makes of it, and refuses any read or write once ctx
// is done.
type boundedFS struct {
	billy.Filesystem
	b *budget
}

type budget struct {
	ctx          context.Context
	files, bytes atomic.Int64
	maxFiles     int64
	maxBytes     int64
	during       string
	err          atomic.Pointer[LimitError]
}

func newBoundedFS(ctx context.Context, fs billy.Filesystem, spec Spec, during string) *boundedFS {
	return &boundedFS{Filesystem: fs, b: &budget{ctx: ctx, maxFiles: spec.maxFiles(), maxBytes: spec.maxBytes(), during: during}}
}

// exceeded is the bound passed, if any.
func (fs *boundedFS) exceeded() *LimitError { return fs.b.err.Load() }

func (b *budget) file() error { return b.take(&b.files, 1, b.maxFiles, "files") }

func (b *budget) write(n int) error { return b.take(&b.bytes, int64(n), b.maxBytes, "bytes") }

// take adds n to used and refuses (recording the first bound passed) when
// that goes over limit, or when ctx is done.
func (b *budget) take(used *atomic.Int64, n, limit int64, what string) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	if used.Add(n) > limit {
		e := &LimitError{What: what, Limit: limit, During: b.during}
		b.err.CompareAndSwap(nil, e)
		return e
	}
	return nil
}

func (fs *boundedFS) Create(name string) (billy.File, error) {
	return fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (fs *boundedFS) Open(name string) (billy.File, error) {
	return fs.OpenFile(name, os.O_RDONLY, 0)
}

func (fs *boundedFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) == 0 {
		if err := fs.b.ctx.Err(); err != nil {
			return nil, err
		}
		f, err := fs.Filesystem.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return &boundedFile{File: f, b: fs.b}, nil
	}
	if flag&os.O_CREATE != 0 {
		if err := fs.b.file(); err != nil {
			return nil, err
		}
	}
	f, err := fs.Filesystem.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &boundedFile{File: f, b: fs.b}, nil
}

func (fs *boundedFS) TempFile(dir, prefix string) (billy.File, error) {
	if err := fs.b.file(); err != nil {
		return nil, err
	}
	f, err := fs.Filesystem.TempFile(dir, prefix)
	if err != nil {
		return nil, err
	}
	return &boundedFile{File: f, b: fs.b}, nil
}

func (fs *boundedFS) MkdirAll(name string, perm os.FileMode) error {
	if err := fs.b.file(); err != nil {
		return err
	}
	return fs.Filesystem.MkdirAll(name, perm)
}

func (fs *boundedFS) Symlink(target, link string) error {
	if err := fs.b.file(); err != nil {
		return err
	}
	if err := fs.b.write(len(target)); err != nil {
		return err
	}
	return fs.Filesystem.Symlink(target, link)
}

func (fs *boundedFS) Chroot(path string) (billy.Filesystem, error) {
	sub, err := fs.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return &boundedFS{Filesystem: sub, b: fs.b}, nil
}

type boundedFile struct {
	billy.File
	b *budget
}

// Reads watch the context too: go-git indexes a fetched pack by reading
// it back (packfile.Parser), with no context of its own.
func (f *boundedFile) Read(p []byte) (int, error) {
	if err := f.b.ctx.Err(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *boundedFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.b.ctx.Err(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

func (f *boundedFile) Write(p []byte) (int, error) {
	if err := f.b.write(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

// limitOf is the *LimitError or *FileLimitError in err's chain, or the
// bound a bounded filesystem recorded (go-git may wrap or replace the
// error its write got).
func limitOf(err error, fss ...*boundedFS) error {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	var fe *FileLimitError
	if errors.As(err, &fe) {
		return fe
	}
	for _, fs := range fss {
		if le := fs.exceeded(); le != nil {
			return le
		}
	}
	return nil
}
