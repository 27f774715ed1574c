package gitsource

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WriteTree writes the tree object tree of repo (a commit's tree or a
// directory in it) into dir, an empty directory, from the git objects
// alone: no worktree, index or ref of repo is read or changed. It is
// bounded like a checkout: the tree is measured against spec's MaxFiles
// and MaxBytes before anything is written, and every write is counted
// again while writing. Symbolic links are written as links (the loader
// refuses those that leave the tree); submodules are empty directories,
// as in a checkout.
func WriteTree(ctx context.Context, repo *git.Repository, tree plumbing.Hash, dir string, spec Spec) error {
	if err := measureTreeObject(ctx, repo, tree, spec); err != nil {
		return err
	}
	t, err := repo.TreeObject(tree)
	if err != nil {
		return err
	}
	fs := newBoundedFS(ctx, osfs.New(dir), spec, "the tree written")
	if err := writeTree(repo, fs, t, "", 0); err != nil {
		if le := limitOf(err, fs); le != nil {
			return le
		}
		return err
	}
	return nil
}

func writeTree(repo *git.Repository, fs billy.Filesystem, t *object.Tree, dir string, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("the tree is more than %d directories deep", maxTreeDepth)
	}
	for _, e := range t.Entries {
		name := path.Join(dir, e.Name)
		if e.Name == "" || e.Name == "." || e.Name == ".." || path.Base(name) != e.Name {
			return fmt.Errorf("tree entry %q of %s is not a file name", e.Name, dir)
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := repo.TreeObject(e.Hash)
			if err != nil {
				return err
			}
			if err := fs.MkdirAll(name, 0o755); err != nil {
				return err
			}
			if err := writeTree(repo, fs, sub, name, depth+1); err != nil {
				return err
			}
		case filemode.Submodule:
			if err := fs.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case filemode.Symlink:
			target, err := blobBytes(repo, e.Hash)
			if err != nil {
				return err
			}
			if err := fs.Symlink(string(target), name); err != nil {
				return err
			}
		default:
			if err := writeBlob(repo, fs, e, name); err != nil {
				return err
			}
		}
	}
	return nil
}

func blobBytes(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	b, err := repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, 4096))
}

func writeBlob(repo *git.Repository, fs billy.Filesystem, e object.TreeEntry, name string) error {
	b, err := repo.BlobObject(e.Hash)
	if err != nil {
		return err
	}
	r, err := b.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	f, err := fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	return f.Close()
}
