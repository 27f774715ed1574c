package gitsource

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// largeObject is the size above which an object is never read into
// memory: go-git streams it from its loose file or pack instead
// (filesystem.Options.LargeObjectThreshold). A blob of 700 MiB of zeros
// weighs a few hundred kilobytes in git; read whole, it would cost its
// inflated size, several times over.
const largeObject = 1 << 20

// objectCache bounds go-git's cache of decoded objects (trees, small blobs).
const objectCache = 16 * cache.MiByte

// newStorage is a repository's object storage on the git directory fs
// that streams large objects instead of reading them whole.
func newStorage(fs billy.Filesystem) *filesystem.Storage {
	return filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(objectCache), filesystem.Options{LargeObjectThreshold: largeObject})
}

// Streaming is repo read through a storage that streams large objects
// (above 1 MiB) instead of reading them whole, as WriteTree needs to stay
// within its memory; a repository not stored on a filesystem is returned
// as it is.
func Streaming(repo *git.Repository) (*git.Repository, error) {
	st, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return repo, nil
	}
	return git.Open(newStorage(st.Filesystem()), nil)
}

// WriteTree writes the tree object tree of repo (a commit's tree or a
// directory in it) into dir, an empty directory, from the git objects
// alone: no worktree, index or ref of repo is read or changed. It is
// bounded like a checkout: the tree is measured against spec's MaxFiles,
// MaxBytes and MaxFileBytes before anything is written (from the objects'
// headers: no blob is read), and every write is counted again while
// writing. Blobs are streamed, never held whole, when repo is Streaming.
// Symbolic links are written as links (the loader refuses those that
// leave the tree); submodules are empty directories, as in a checkout.
func WriteTree(ctx context.Context, repo *git.Repository, tree plumbing.Hash, dir string, spec Spec) error {
	return WriteSelected(ctx, repo, tree, dir, spec, func(string, []object.TreeEntry) Pick { return Whole })
}

// Pick is what WriteSelected writes of a directory.
type Pick int

const (
	// Descend writes nothing of the directory itself and picks again in
	// each of its subdirectories.
	Descend Pick = iota
	// Whole writes the directory and everything under it.
	Whole
	// Files writes the directory's files and links and picks again in
	// each of its subdirectories.
	Files
	// Skip writes nothing of it, nor under it.
	Skip
)

// WriteSelected is WriteTree of the parts of tree pick chooses: pick is
// called with each directory's slash path ("" for the top) and entries,
// from the top down. Nothing outside the parts is read but the tree
// objects above them: a blob elsewhere costs nothing, however large. The
// directories visited count against spec's MaxFiles like the files
// written, so that a tree naming its subtrees many times cannot make
// the walk itself unbounded.
func WriteSelected(ctx context.Context, repo *git.Repository, tree plumbing.Hash, dir string, spec Spec, pick func(dir string, entries []object.TreeEntry) Pick) error {
	type part struct {
		dir   string
		tree  *object.Tree
		whole bool
	}
	var parts []part
	maxFiles := spec.maxFiles()
	var visited int64
	var walk func(h plumbing.Hash, dir string, depth int) error
	walk = func(h plumbing.Hash, dir string, depth int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if depth > maxTreeDepth {
			return fmt.Errorf("the tree is more than %d directories deep", maxTreeDepth)
		}
		t, err := repo.TreeObject(h)
		if err != nil {
			return err
		}
		if visited += int64(len(t.Entries)); visited > maxFiles {
			return &LimitError{What: "files", Limit: maxFiles}
		}
		switch pick(dir, t.Entries) {
		case Skip:
			return nil
		case Whole:
			parts = append(parts, part{dir, t, true})
			return nil
		case Files:
			parts = append(parts, part{dir, t, false})
		}
		for _, e := range t.Entries {
			if e.Mode == filemode.Dir {
				if err := walk(e.Hash, path.Join(dir, e.Name), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(tree, "", 0); err != nil {
		return err
	}

	m := newMeasure(ctx, repo, spec)
	for _, p := range parts {
		if err := m.add(p.tree, p.dir, p.whole); err != nil {
			return err
		}
	}

	fs := newBoundedFS(ctx, osfs.New(dir), spec, "the tree written")
	w := &treeWriter{repo: repo, fs: fs, maxFile: spec.maxFileBytes()}
	for _, p := range parts {
		if p.dir != "" {
			if err := fs.MkdirAll(p.dir, 0o755); err != nil {
				return err
			}
		}
		if err := w.tree(p.tree, p.dir, strings.Count(p.dir, "/"), p.whole); err != nil {
			if le := limitOf(err, fs); le != nil {
				return le
			}
			return err
		}
	}
	return nil
}

// treeWriter writes trees from git objects through a bounded filesystem.
type treeWriter struct {
	repo    *git.Repository
	fs      billy.Filesystem
	maxFile int64
}

// tree writes t's entries under dir: every one when whole, else only its
// files and links.
func (w *treeWriter) tree(t *object.Tree, dir string, depth int, whole bool) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("the tree is more than %d directories deep", maxTreeDepth)
	}
	for _, e := range t.Entries {
		name := path.Join(dir, e.Name)
		if err := checkName(e.Name, dir); err != nil {
			return err
		}
		switch e.Mode {
		case filemode.Dir:
			if !whole {
				continue
			}
			sub, err := w.repo.TreeObject(e.Hash)
			if err != nil {
				return err
			}
			if err := w.fs.MkdirAll(name, 0o755); err != nil {
				return err
			}
			if err := w.tree(sub, name, depth+1, true); err != nil {
				return err
			}
		case filemode.Submodule:
			if !whole {
				continue
			}
			if err := w.fs.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case filemode.Symlink:
			target, err := blobBytes(w.repo, e.Hash)
			if err != nil {
				return err
			}
			if err := w.fs.Symlink(string(target), name); err != nil {
				return err
			}
		default:
			if err := w.blob(e, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkName refuses an entry name no checkout writes: empty, "." or "..",
// one holding a slash, and ".git" (in any case), which git refuses too.
func checkName(name, dir string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") || strings.EqualFold(name, git.GitDirName) {
		return fmt.Errorf("tree entry %q of %q is not a file name a checkout may write", name, dir)
	}
	return nil
}

func blobBytes(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	r, err := blobReader(repo, h)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, 4096))
}

// blobReader streams blob h (go-git's reader of the object; whole in
// memory only below largeObject on a Streaming repository).
func blobReader(repo *git.Repository, h plumbing.Hash) (io.ReadCloser, error) {
	o, err := repo.Storer.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	return o.Reader()
}

func (w *treeWriter) blob(e object.TreeEntry, name string) error {
	r, err := blobReader(w.repo, e.Hash)
	if err != nil {
		return err
	}
	defer r.Close()
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	f, err := w.fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, w.maxFile+1))
	if err == nil && n > w.maxFile {
		size, serr := objectSize(w.repo, e.Hash)
		if serr != nil {
			size = n
		}
		err = &FileLimitError{Path: name, Size: size, Limit: w.maxFile}
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}
