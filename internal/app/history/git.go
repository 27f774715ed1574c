package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/pinseal/pinseal/internal/app/service/gitsource"
	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/verify"
)

// Errors a caller tells apart (the CLI: exit 2 with the message).
var (
	// ErrNotInGit: the tree is not inside a git repository.
	ErrNotInGit = errors.New("not in a git repository")
	// ErrNoRevision: the base revision does not resolve.
	ErrNoRevision = errors.New("no such revision")
)

// BaseOptions bound reading the base tree.
type BaseOptions struct {
	// Verify are the load options of the current tree (policy values
	// files, excluded directories, render bounds): the base is loaded the
	// same way so that only the revision differs.
	Verify verify.Options
	// MaxFiles and MaxBytes bound the base tree written from git objects
	// (0: gitsource's defaults), as a git source's checkout is bounded.
	MaxFiles int
	MaxBytes int64
	// MaxFileBytes bounds one file written (0: gitsource's default).
	MaxFileBytes int64
}

// maxTagDepth bounds a chain of annotated tags (a tag of a tag of …) that
// a base revision may name.
const maxTagDepth = 32

// Base loads the tree under root as it was at revision rev of the git
// repository holding root (found by walking up from root; a linked
// worktree reads its main repository's objects) and returns its Snapshot.
// The repository is read in-process, from its objects: nothing in it is
// changed and no git program runs. Of the base tree, only what the loader
// reads (its packages' directories: loaderReads) is written, bounded in
// files, bytes and bytes per file, blobs streamed, to a temporary
// directory that is removed before Base returns. A chain of annotated
// tags resolves to its commit (at most maxTagDepth deep).
//
// A root that did not exist at rev gives an empty Snapshot: every
// provider is new.
func Base(ctx context.Context, root, rev string, opts BaseOptions) (*Snapshot, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	repo, top, err := openRepo(abs)
	if err != nil {
		return nil, err
	}
	hash, err := resolve(repo, rev)
	if err != nil {
		return nil, fmt.Errorf("%w %q in the git repository at %s (%v): name a branch, tag, commit or an expression such as HEAD~1, and fetch it first in a shallow clone", ErrNoRevision, rev, top, err)
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return nil, fmt.Errorf("%w %q in the git repository at %s: %s is not a commit (%v)", ErrNoRevision, rev, top, hash, err)
	}
	label := fmt.Sprintf("%s (%s)", rev, hash.String()[:12])
	rel, err := filepath.Rel(top, abs)
	if err != nil {
		return nil, err
	}
	tree, err := subtree(commit, filepath.ToSlash(rel))
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w (a shallow clone lacks the objects of older commits: fetch more history, e.g. git fetch --deepen=50)", rel, label, err)
	}
	if tree == nil {
		return &Snapshot{Revision: label, Releases: []Release{}}, nil
	}
	dir, err := os.MkdirTemp("", "pinseal-base-")
	if err != nil {
		return nil, fmt.Errorf("base tree directory: %w", err)
	}
	defer os.RemoveAll(dir)
	spec := gitsource.Spec{MaxFiles: opts.MaxFiles, MaxBytes: opts.MaxBytes, MaxFileBytes: opts.MaxFileBytes}
	if err := gitsource.WriteSelected(ctx, repo, tree.Hash, dir, spec, loaderReads); err != nil {
		var le *gitsource.LimitError
		var fe *gitsource.FileLimitError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s at %s holds %d bytes, more than the %d bytes a file may hold: a base tree with a file that large is refused, as any untrusted tree is (no package file is that large; compare a revision without it)", path.Join(filepath.ToSlash(rel), fe.Path), label, fe.Size, fe.Limit)
		}
		if errors.As(err, &le) {
			// The service's message names its config keys; say it in the
			// terms of the tree at REV.
			unit := "files, directories and links"
			if le.What == "bytes" {
				unit = "bytes"
			}
			return nil, fmt.Errorf("%s at %s holds more than %d %s: a base tree that large is refused, as any untrusted tree is (compare a smaller ROOT)", rel, label, le.Limit, unit)
		}
		return nil, fmt.Errorf("write %s at %s: %w", rel, label, err)
	}
	t, err := verify.Load(ctx, dir, opts.Verify)
	if err != nil {
		return nil, fmt.Errorf("load %s at %s: %w", rel, label, err)
	}
	return Take(t, label), nil
}

// loaderReads picks, of a directory of the base tree, what the loader may
// read (pkg/load's walk): a directory holding Chart.yaml is a chart, whole;
// the files of any other directory holding YAML are a package of plain
// manifests; nothing else is written, so a blob outside every package is
// never read, however large. Directories the loader never enters are
// skipped.
func loaderReads(_ string, entries []object.TreeEntry) gitsource.Pick {
	yaml := false
	for _, e := range entries {
		switch {
		case e.Name == "Chart.yaml" && e.Mode != filemode.Dir:
			return gitsource.Whole
		case e.Mode.IsFile() && layout.IsYAMLName(e.Name):
			yaml = true
		}
	}
	if yaml {
		return gitsource.Files
	}
	return gitsource.Descend
}

// resolve is the commit rev names. A chain of annotated tags (a tag of a
// tag) is peeled up to maxTagDepth, which go-git's ResolveRevision does
// not do: the name before any ~, ^ or @ suffix is peeled to its commit,
// and the suffix resolved from there.
func resolve(repo *git.Repository, rev string) (*plumbing.Hash, error) {
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err == nil {
		return h, nil
	}
	name, suffix := rev, ""
	if i := strings.IndexAny(rev, "~^@:"); i > 0 {
		name, suffix = rev[:i], rev[i:]
	}
	var start plumbing.Hash
	for _, n := range []plumbing.ReferenceName{plumbing.ReferenceName(name), plumbing.NewTagReferenceName(name), plumbing.NewBranchReferenceName(name)} {
		if ref, rerr := repo.Reference(n, true); rerr == nil {
			start = ref.Hash()
			break
		}
	}
	if start.IsZero() {
		return nil, err
	}
	commit, perr := peel(repo, start)
	if perr != nil {
		return nil, perr
	}
	if suffix == "" {
		return &commit, nil
	}
	return repo.ResolveRevision(plumbing.Revision(commit.String() + suffix))
}

// peel follows annotated tags from h to the commit they name.
func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range maxTagDepth + 1 {
		tag, err := repo.TagObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			if _, cerr := repo.CommitObject(h); cerr != nil {
				return plumbing.ZeroHash, fmt.Errorf("%s is neither a commit nor an annotated tag: %w", h, cerr)
			}
			return h, nil
		} else if err != nil {
			return plumbing.ZeroHash, err
		}
		h = tag.Target
	}
	return plumbing.ZeroHash, fmt.Errorf("a chain of more than %d annotated tags (a tag of a tag of …): not followed further; name the commit, or a tag nearer to it", maxTagDepth)
}

// openRepo opens the repository holding dir and returns it with its
// worktree's top directory. Its objects are read through a storage that
// streams large blobs (gitsource.Streaming).
func openRepo(dir string) (*git.Repository, string, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, "", fmt.Errorf("%s is %w (--base compares the tree with a revision of the git repository holding it): run it in a git checkout, or leave --base out", dir, ErrNotInGit)
	} else if err != nil {
		return nil, "", fmt.Errorf("open the git repository holding %s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, "", fmt.Errorf("%s is in a bare git repository, %w with a worktree (--base compares a checked-out tree with a revision)", dir, ErrNotInGit)
	}
	top := wt.Filesystem.Root()
	if resolved, err := filepath.EvalSymlinks(top); err == nil {
		top = resolved
	}
	if repo, err = gitsource.Streaming(repo); err != nil {
		return nil, "", fmt.Errorf("open the git repository holding %s: %w", dir, err)
	}
	return repo, top, nil
}

// subtree is the directory rel ("." for the top) of commit's tree, nil
// when it did not exist there.
func subtree(commit *object.Commit, rel string) (*object.Tree, error) {
	t, err := commit.Tree()
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return t, nil
	}
	sub, err := t.Tree(rel)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, nil
	}
	return sub, err
}
