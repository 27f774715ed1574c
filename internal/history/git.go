package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/pinseal/pinseal/internal/service/gitsource"
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
}

// Base loads the tree under root as it was at revision rev of the git
// repository holding root (found by walking up from root; a linked
// worktree reads its main repository's objects) and returns its Snapshot.
// The repository is read in-process, from its objects: nothing in it is
// changed and no git program runs. The base tree is written, bounded, to
// a temporary directory that is removed before Base returns.
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
	hash, err := repo.ResolveRevision(plumbing.Revision(rev))
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
	spec := gitsource.Spec{MaxFiles: opts.MaxFiles, MaxBytes: opts.MaxBytes}
	if err := gitsource.WriteTree(ctx, repo, tree.Hash, dir, spec); err != nil {
		var le *gitsource.LimitError
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

// openRepo opens the repository holding dir and returns it with its
// worktree's top directory.
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
