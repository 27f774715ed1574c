package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Bounds of a checkout: a repository of a few kilobytes can hold a tree of
// millions of files (trees and blobs are stored once and named many times),
// so the tree is measured from its objects before anything is written, and
// every write goes through a filesystem that counts what it writes.

// Default bounds (Spec's zero values).
const (
	DefaultMaxFiles = 100000
	DefaultMaxBytes = 1 << 30
)

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
	return measureTreeObject(ctx, repo, c.TreeHash, spec)
}

// measureTreeObject is measureTree of one tree object (a commit's tree or
// a directory in it).
func measureTreeObject(ctx context.Context, repo *git.Repository, tree plumbing.Hash, spec Spec) error {
	maxFiles, maxBytes := spec.maxFiles(), spec.maxBytes()
	type size struct{ files, bytes int64 }
	seen := map[plumbing.Hash]size{}
	blobs := map[plumbing.Hash]int64{}
	over := func(s size) error {
		switch {
		case s.files > maxFiles:
			return &LimitError{What: "files", Limit: maxFiles}
		case s.bytes > maxBytes:
			return &LimitError{What: "bytes", Limit: maxBytes}
		}
		return nil
	}
	var walk func(h plumbing.Hash, depth int) (size, error)
	walk = func(h plumbing.Hash, depth int) (size, error) {
		if s, ok := seen[h]; ok {
			return s, nil
		}
		if err := ctx.Err(); err != nil {
			return size{}, err
		}
		if depth > maxTreeDepth {
			return size{}, fmt.Errorf("the commit's tree is more than %d directories deep", maxTreeDepth)
		}
		t, err := repo.TreeObject(h)
		if err != nil {
			return size{}, err
		}
		var s size
		for _, e := range t.Entries {
			s.files++
			switch e.Mode {
			case filemode.Dir:
				sub, err := walk(e.Hash, depth+1)
				if err != nil {
					return size{}, err
				}
				s.files += sub.files
				s.bytes += sub.bytes
			case filemode.Submodule:
				// Not fetched: an empty directory.
			default:
				n, ok := blobs[e.Hash]
				if !ok {
					o, err := repo.Storer.EncodedObject(plumbing.BlobObject, e.Hash)
					if err != nil {
						return size{}, err
					}
					n = o.Size()
					blobs[e.Hash] = n
				}
				s.bytes += n
			}
			if err := over(s); err != nil {
				return size{}, err
			}
		}
		seen[h] = s
		return s, nil
	}
	_, err := walk(tree, 0)
	return err
}

// maxTreeDepth bounds the directory depth of a checkout (the recursion of
// measureTree); Linux refuses paths longer than 4096 bytes well before.
const maxTreeDepth = 1024

// boundedFS is a billy filesystem that counts what is written through it
// (files created, bytes written) against its budget, shared with every
// filesystem Chroot makes of it, and refuses any write once ctx is done.
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

func (fs *boundedFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) == 0 {
		return fs.Filesystem.OpenFile(name, flag, perm)
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

func (f *boundedFile) Write(p []byte) (int, error) {
	if err := f.b.write(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

// limitOf is the *LimitError in err's chain, or the one a bounded
// filesystem recorded (go-git may wrap or replace the error its write got).
func limitOf(err error, fss ...*boundedFS) error {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	for _, fs := range fss {
		if le := fs.exceeded(); le != nil {
			return le
		}
	}
	return nil
}
