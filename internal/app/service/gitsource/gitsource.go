// Package gitsource fetches the tree a service source names in a git
// repository.
//
// It fetches the tree a service source names in git: a ref
// of a repository (https, ssh or file URL), shallow by default, checked out
// into a directory per commit so that a re-scan of an unchanged commit
// fetches nothing but the ref list. A checkout is bounded in files and
// bytes (Spec.MaxFiles, Spec.MaxBytes: measured from the commit's tree
// before anything is written, and held while writing) and by the context.
//
// It uses go-git (github.com/go-git/go-git/v5), a maintained pure-Go git
// implementation: the service binary stays static and self-contained (the
// container image holds nothing but the binary, no git CLI, no shell), and
// credentials are handed to the transport in memory instead of through
// helper programs, environment or command lines. file:// URLs are served by
// the local git-upload-pack, as with the git CLI.
package gitsource

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Spec is what to fetch.
type Spec struct {
	URL   string // https://…, http://…, ssh://…, user@host:path, file:///…
	Ref   string // branch, tag or full ref name (refs/…); "" or HEAD: the default branch
	Depth int    // commits of history; 0 means 1 (shallow)
	Auth  Credentials
	// MaxFiles and MaxBytes bound the checkout: its files, directories
	// and links, and the bytes of its files (and, apart, the git data
	// fetched). 0 means DefaultMaxFiles, DefaultMaxBytes.
	MaxFiles int
	MaxBytes int64
	// MaxFileBytes bounds one file of the checkout (0: DefaultMaxFileBytes).
	MaxFileBytes int64
}

// Credentials authenticate a fetch. They are read from files or the
// environment by the caller, never from the configuration text.
type Credentials struct {
	Username       string // https user (default "git"), ssh user when the URL has none
	Password       string // https password or token
	SSHKey         []byte // PEM private key for ssh URLs
	KnownHostsFile string // ssh known_hosts; "" means $SSH_KNOWN_HOSTS or ~/.ssh/known_hosts
}

// Checkout is a fetched commit.
type Checkout struct {
	Dir    string // the tree at Commit (no .git)
	Commit string // 40 hex digits
	Ref    string // the full ref name that was fetched
}

var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+:[^/]`) })

// Scheme returns the transport of a git URL: https, http, ssh or file, or
// an error naming what is accepted.
func Scheme(rawURL string) (string, error) {
	if scpLike().MatchString(rawURL) && !strings.Contains(rawURL, "://") {
		return "ssh", nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("git URL: %w", err)
	}
	switch u.Scheme {
	case "https", "http", "ssh", "file":
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				return "", errors.New("git URL carries a password: give it in credentials (a file or an environment variable) instead")
			}
		}
		return u.Scheme, nil
	}
	return "", fmt.Errorf("git URL scheme %q: want https, http, ssh, file or user@host:path", u.Scheme)
}

func (s Spec) auth() (transport.AuthMethod, error) {
	scheme, err := Scheme(s.URL)
	if err != nil {
		return nil, err
	}
	switch scheme {
	case "https", "http":
		if s.Auth.Password == "" {
			return nil, nil
		}
		user := s.Auth.Username
		if user == "" {
			user = "git"
		}
		return &githttp.BasicAuth{Username: user, Password: s.Auth.Password}, nil
	case "ssh":
		user := s.Auth.Username
		if ep, err := transport.NewEndpoint(s.URL); err == nil && ep.User != "" {
			user = ep.User
		}
		if user == "" {
			user = "git"
		}
		if len(s.Auth.SSHKey) == 0 {
			return nil, nil // ssh-agent, via go-git's defaults
		}
		keys, err := gitssh.NewPublicKeys(user, s.Auth.SSHKey, "")
		if err != nil {
			return nil, fmt.Errorf("ssh key: %w", err)
		}
		if s.Auth.KnownHostsFile != "" {
			cb, err := gitssh.NewKnownHostsCallback(s.Auth.KnownHostsFile)
			if err != nil {
				return nil, fmt.Errorf("known hosts %s: %w", s.Auth.KnownHostsFile, err)
			}
			keys.HostKeyCallback = cb
		}
		return keys, nil
	}
	return nil, nil
}

// Resolve lists the remote's refs and returns the full name and hash of the
// ref spec names (for an annotated tag, the commit it points at).
func Resolve(ctx context.Context, spec Spec) (name plumbing.ReferenceName, hash plumbing.Hash, err error) {
	auth, err := spec.auth()
	if err != nil {
		return "", plumbing.ZeroHash, err
	}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{spec.URL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("git ls-remote %s: %w", redact(spec.URL), err)
	}
	byName := map[plumbing.ReferenceName]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name()] = r
	}
	var candidates []plumbing.ReferenceName
	switch ref := spec.Ref; {
	case ref == "" || ref == "HEAD":
		head, ok := byName[plumbing.HEAD]
		if !ok {
			return "", plumbing.ZeroHash, fmt.Errorf("git %s: the remote has no HEAD; name a branch or tag in ref", redact(spec.URL))
		}
		if head.Type() == plumbing.SymbolicReference {
			candidates = []plumbing.ReferenceName{head.Target()}
		} else {
			for n, r := range byName {
				if n.IsBranch() && r.Hash() == head.Hash() {
					candidates = append(candidates, n)
				}
			}
		}
	case strings.HasPrefix(ref, "refs/"):
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(ref)}
	default:
		candidates = []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)}
	}
	for _, c := range candidates {
		r, ok := byName[c]
		if !ok {
			continue
		}
		h := r.Hash()
		if peeled, ok := byName[plumbing.ReferenceName(string(c)+"^{}")]; ok {
			h = peeled.Hash()
		}
		return c, h, nil
	}
	return "", plumbing.ZeroHash, fmt.Errorf("git %s: no branch or tag %q (check sources[].git.ref)", redact(spec.URL), spec.Ref)
}

// Fetch makes sure dir/<commit> holds the tree of the commit spec's ref
// points at now, cloning it (shallow) when it is not there yet, and removes
// the checkouts of other commits. Only one Fetch per dir may run at once.
func Fetch(ctx context.Context, spec Spec, dir string) (Checkout, error) {
	name, hash, err := Resolve(ctx, spec)
	if err != nil {
		return Checkout{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Checkout{}, fmt.Errorf("git checkout directory: %w", err)
	}
	co := Checkout{Dir: filepath.Join(dir, hash.String()), Commit: hash.String(), Ref: string(name)}
	if fi, err := os.Stat(co.Dir); err == nil && fi.IsDir() {
		prune(dir, co.Commit)
		return co, nil
	}
	auth, err := spec.auth()
	if err != nil {
		return Checkout{}, err
	}
	tmp, err := os.MkdirTemp(dir, ".clone-")
	if err != nil {
		return Checkout{}, fmt.Errorf("git checkout directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	head, err := cloneInto(ctx, spec, name, hash, auth, tmp)
	if err != nil {
		return Checkout{}, err
	}
	// The ref may have moved between the listing and the clone: the
	// checkout is of the commit cloned.
	co.Commit = head.String()
	co.Dir = filepath.Join(dir, co.Commit)
	if err := os.RemoveAll(filepath.Join(tmp, ".git")); err != nil {
		return Checkout{}, err
	}
	if err := os.Rename(tmp, co.Dir); err != nil {
		if fi, serr := os.Stat(co.Dir); serr != nil || !fi.IsDir() {
			return Checkout{}, fmt.Errorf("git checkout %s: %w", co.Commit, err)
		}
	}
	prune(dir, co.Commit)
	return co, nil
}

// cloneInto clones the commit name points at (listed as listed) into tmp
// (its git data in tmp/.git) within spec's limits, and returns the commit.
func cloneInto(ctx context.Context, spec Spec, name plumbing.ReferenceName, listed plumbing.Hash, auth transport.AuthMethod, tmp string) (plumbing.Hash, error) {
	depth := spec.Depth
	if depth <= 0 {
		depth = 1
	}
	// A refusal by the pack guard cancels gctx with the refusal as its
	// cause: go-git then stops reading the transfer and ends the
	// upload-pack it runs.
	gctx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	// The git data and the checkout are written (and read back) through
	// filesystems that count files and bytes and watch the context, and
	// the tree is measured from its objects before the checkout writes
	// any of it (bound.go).
	dot := newBoundedFS(gctx, osfs.New(filepath.Join(tmp, git.GitDirName)), spec, "the git data fetched")
	wt := newBoundedFS(gctx, osfs.New(tmp), spec, "the checkout")
	fail := func(what string, err error) error {
		if ctx.Err() != nil {
			err = ctx.Err()
		} else if cause := context.Cause(gctx); cause != nil && !errors.Is(cause, context.Canceled) {
			err = cause
		} else if le := limitOf(err, dot, wt); le != nil {
			err = le
		}
		return fmt.Errorf("git %s %s %s: %w", what, redact(spec.URL), name, err)
	}
	st := &guardedStorage{Storage: newStorage(dot), ctx: gctx, max: spec.maxFileBytes(), commit: listed.String(), refuse: refuse}
	// No worktree: the checkout is written from the objects by the
	// bounded tree writer, which streams large blobs (go-git's own
	// checkout reads each blob whole).
	repo, err := git.CloneContext(gctx, st, nil, &git.CloneOptions{
		URL:           spec.URL,
		Auth:          auth,
		ReferenceName: name,
		SingleBranch:  true,
		Depth:         depth,
		Tags:          git.NoTags,
		NoCheckout:    true,
	})
	if err != nil {
		return plumbing.ZeroHash, fail("fetch", err)
	}
	head, err := repo.ResolveRevision("HEAD")
	if err != nil {
		return plumbing.ZeroHash, fail("fetch", err)
	}
	if err := measureTree(gctx, repo, *head, spec); err != nil {
		return plumbing.ZeroHash, fail("checkout", err)
	}
	c, err := repo.CommitObject(*head)
	if err != nil {
		return plumbing.ZeroHash, fail("checkout", err)
	}
	t, err := repo.TreeObject(c.TreeHash)
	if err != nil {
		return plumbing.ZeroHash, fail("checkout", err)
	}
	w := &treeWriter{repo: repo, fs: wt, maxFile: spec.maxFileBytes()}
	if err := w.tree(t, "", 0, true); err != nil {
		return plumbing.ZeroHash, fail("checkout", err)
	}
	return *head, nil
}

// prune removes the checkouts in dir other than keep.
func prune(dir, keep string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != keep && !strings.HasPrefix(e.Name(), ".clone-") {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// redact drops user information from a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// WebURL returns a browser link to line of path at commit in the repository
// at gitURL for hosts with a known web form (github.com, gitlab.com), and
// the generic form URL@SHA/PATH#LLINE otherwise.
func WebURL(gitURL, commit, path string, line int) string {
	anchor := ""
	if line > 0 {
		anchor = fmt.Sprintf("#L%d", line)
	}
	host, repoPath := hostPath(gitURL)
	repoPath = strings.TrimSuffix(strings.Trim(repoPath, "/"), ".git")
	switch host {
	case "github.com":
		return fmt.Sprintf("https://github.com/%s/blob/%s/%s%s", repoPath, commit, path, anchor)
	case "gitlab.com":
		return fmt.Sprintf("https://gitlab.com/%s/-/blob/%s/%s%s", repoPath, commit, path, anchor)
	}
	return fmt.Sprintf("%s@%s/%s%s", redact(gitURL), commit, path, anchor)
}

// hostPath splits a git URL into host (lower case, no port) and path.
func hostPath(raw string) (string, string) {
	if scpLike().MatchString(raw) && !strings.Contains(raw, "://") {
		hostPart, path, _ := strings.Cut(raw, ":")
		if i := strings.LastIndex(hostPart, "@"); i >= 0 {
			hostPart = hostPart[i+1:]
		}
		return strings.ToLower(hostPart), path
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	return strings.ToLower(u.Hostname()), u.Path
}
