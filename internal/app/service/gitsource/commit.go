package gitsource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
)

var commitHash = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })

// FetchCommit makes sure dir/<commit> holds the tree of commit (a full
// hash) of the repository spec names, fetching it when it is not there
// yet; other checkouts in dir are left alone. The commit is looked for
// among the spec.Depth newest commits of spec.Ref and, when it is not
// there, asked for by hash (GitHub and GitLab send any reachable commit; a
// plain git server only with uploadpack.allowReachableSHA1InWant). The
// fetch and the checkout are bounded as Fetch's. Only one FetchCommit of
// the same commit into dir may run at once.
func FetchCommit(ctx context.Context, spec Spec, commit, dir string) (Checkout, error) {
	if !commitHash().MatchString(commit) {
		return Checkout{}, fmt.Errorf("git commit %q: want a full commit hash (40 lowercase hex)", commit)
	}
	co := Checkout{Dir: filepath.Join(dir, commit), Commit: commit}
	if fi, err := os.Stat(co.Dir); err == nil && fi.IsDir() {
		return co, nil
	}
	name, _, err := Resolve(ctx, spec)
	if err != nil {
		return Checkout{}, err
	}
	co.Ref = string(name)
	auth, err := spec.auth()
	if err != nil {
		return Checkout{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Checkout{}, fmt.Errorf("git checkout directory: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".clone-")
	if err != nil {
		return Checkout{}, fmt.Errorf("git checkout directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	depth := max(spec.Depth, 1)
	dot := newBoundedFS(ctx, osfs.New(filepath.Join(tmp, git.GitDirName)), spec, "the git data fetched")
	wt := newBoundedFS(ctx, osfs.New(tmp), spec, "the checkout")
	fail := func(what string, err error) error {
		if ctx.Err() != nil {
			err = ctx.Err()
		} else if le := limitOf(err, dot, wt); le != nil {
			err = le
		}
		return fmt.Errorf("git %s %s %s: %w", what, redact(spec.URL), commit, err)
	}
	repo, err := git.CloneContext(ctx, newStorage(dot), nil, &git.CloneOptions{
		URL: spec.URL, Auth: auth, ReferenceName: name, SingleBranch: true,
		Depth: depth, Tags: git.NoTags, NoCheckout: true,
	})
	if err != nil {
		return Checkout{}, fail("fetch", err)
	}
	h := plumbing.NewHash(commit)
	if _, err := repo.CommitObject(h); err != nil {
		err := repo.FetchContext(ctx, &git.FetchOptions{RemoteName: git.DefaultRemoteName, Auth: auth, Depth: 1, Tags: git.NoTags,
			RefSpecs: []config.RefSpec{config.RefSpec(commit + ":refs/pinseal/commit")}})
		if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
			if ctx.Err() != nil {
				return Checkout{}, fail("fetch", err)
			}
			return Checkout{}, fmt.Errorf("git fetch %s %s: the commit is not among the %d newest of %s and the server does not send it by hash (%v): raise sources[].git.depth, or trust a commit nearer the ref's head",
				redact(spec.URL), commit, depth, name, err)
		}
	}
	if err := measureTree(ctx, repo, h, spec); err != nil {
		return Checkout{}, fail("checkout", err)
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		return Checkout{}, fail("checkout", err)
	}
	t, err := repo.TreeObject(c.TreeHash)
	if err != nil {
		return Checkout{}, fail("checkout", err)
	}
	w := &treeWriter{repo: repo, fs: wt, maxFile: spec.maxFileBytes()}
	if err := w.tree(t, "", 0, true); err != nil {
		return Checkout{}, fail("checkout", err)
	}
	if err := os.RemoveAll(filepath.Join(tmp, git.GitDirName)); err != nil {
		return Checkout{}, err
	}
	if err := os.Rename(tmp, co.Dir); err != nil {
		if fi, serr := os.Stat(co.Dir); serr != nil || !fi.IsDir() {
			return Checkout{}, fmt.Errorf("git checkout %s: %w", commit, err)
		}
	}
	return co, nil
}
