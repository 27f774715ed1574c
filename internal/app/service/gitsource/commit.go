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
	"github.com/go-git/go-git/v5/plumbing/transport"
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
	tmp, err := cloneDir(dir)
	if err != nil {
		return Checkout{}, err
	}
	defer os.RemoveAll(tmp)
	f := &commitFetch{ctx: ctx, spec: spec, commit: commit, ref: name, auth: auth,
		dot: newBoundedFS(ctx, osfs.New(filepath.Join(tmp, git.GitDirName)), spec, "the git data fetched"),
		wt:  newBoundedFS(ctx, osfs.New(tmp), spec, "the checkout")}
	repo, err := f.fetch()
	if err != nil {
		return Checkout{}, err
	}
	if err := f.checkout(repo); err != nil {
		return Checkout{}, err
	}
	if err := keepCheckout(tmp, co.Dir, commit); err != nil {
		return Checkout{}, err
	}
	return co, nil
}

// cloneDir is a new temporary directory in dir (made if missing) to clone
// into.
func cloneDir(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("git checkout directory: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".clone-")
	if err != nil {
		return "", fmt.Errorf("git checkout directory: %w", err)
	}
	return tmp, nil
}

// commitFetch is one FetchCommit: the commit of ref to fetch, into the
// bounded git data dot and work tree wt of its clone directory.
type commitFetch struct {
	ctx     context.Context
	spec    Spec
	commit  string
	ref     plumbing.ReferenceName
	auth    transport.AuthMethod
	dot, wt *boundedFS
}

// fail is err of step (fetch or checkout) named with the repository and
// commit; when the context ended or a bound was passed, that is the
// cause given.
func (f *commitFetch) fail(step string, err error) error {
	if f.ctx.Err() != nil {
		err = f.ctx.Err()
	} else if le := limitOf(err, f.dot, f.wt); le != nil {
		err = le
	}
	return fmt.Errorf("git %s %s %s: %w", step, redact(f.spec.URL), f.commit, err)
}

// fetch clones the spec.Depth newest commits of the ref and, when the
// commit is not among them, asks the server for it by hash.
func (f *commitFetch) fetch() (*git.Repository, error) {
	depth := max(f.spec.Depth, 1)
	repo, err := git.CloneContext(f.ctx, newStorage(f.dot), nil, &git.CloneOptions{
		URL: f.spec.URL, Auth: f.auth, ReferenceName: f.ref, SingleBranch: true,
		Depth: depth, Tags: git.NoTags, NoCheckout: true,
	})
	if err != nil {
		return nil, f.fail("fetch", err)
	}
	if _, err := repo.CommitObject(plumbing.NewHash(f.commit)); err == nil {
		return repo, nil
	}
	err = repo.FetchContext(f.ctx, &git.FetchOptions{RemoteName: git.DefaultRemoteName, Auth: f.auth, Depth: 1, Tags: git.NoTags,
		RefSpecs: []config.RefSpec{config.RefSpec(f.commit + ":refs/pinseal/commit")}})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		if f.ctx.Err() != nil {
			return nil, f.fail("fetch", err)
		}
		return nil, fmt.Errorf("git fetch %s %s: the commit is not among the %d newest of %s and the server does not send it by hash (%v): raise sources[].git.depth, or trust a commit nearer the ref's head",
			redact(f.spec.URL), f.commit, depth, f.ref, err)
	}
	return repo, nil
}

// checkout writes the commit's tree into the work tree, once its size
// was measured within the bounds.
func (f *commitFetch) checkout(repo *git.Repository) error {
	h := plumbing.NewHash(f.commit)
	if err := measureTree(f.ctx, repo, h, f.spec); err != nil {
		return f.fail("checkout", err)
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		return f.fail("checkout", err)
	}
	t, err := repo.TreeObject(c.TreeHash)
	if err != nil {
		return f.fail("checkout", err)
	}
	w := &treeWriter{repo: repo, fs: f.wt, maxFile: f.spec.maxFileBytes()}
	if err := w.tree(t, "", 0, true); err != nil {
		return f.fail("checkout", err)
	}
	return nil
}

// keepCheckout moves the checkout in tmp, its git data removed, to dst;
// a checkout another FetchCommit put there first is as good.
func keepCheckout(tmp, dst, commit string) error {
	if err := os.RemoveAll(filepath.Join(tmp, git.GitDirName)); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if fi, serr := os.Stat(dst); serr != nil || !fi.IsDir() {
			return fmt.Errorf("git checkout %s: %w", commit, err)
		}
	}
	return nil
}
