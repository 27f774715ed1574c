// Package gitbomb writes tiny git repositories that check out as huge trees.
//
// It writes git repositories that are a few kilobytes on
// disk but check out as a huge tree: one blob named by every entry of a
// tree, and each tree named by every entry of the tree above it (git
// stores an object once however often it is named), for the tests of the
// bounds on git checkouts.
package gitbomb

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
)

// Write makes a repository at dir whose branch main has one commit with
// fanout^depth files of content blob each (under depth-1 levels of
// fanout directories), and returns the commit.
func Write(dir string, fanout, depth int, blob []byte) (string, error) {
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		return "", err
	}
	s := repo.Storer
	h, err := put(s, plumbing.BlobObject, blob)
	if err != nil {
		return "", err
	}
	mode := filemode.Regular
	for range depth {
		t := &object.Tree{}
		for i := range fanout {
			t.Entries = append(t.Entries, object.TreeEntry{Name: fmt.Sprintf("e%04d", i), Mode: mode, Hash: h})
		}
		if h, err = encode(s, t); err != nil {
			return "", err
		}
		mode = filemode.Dir
	}
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0).UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: "bomb\n", TreeHash: h}
	ch, err := encode(s, c)
	if err != nil {
		return "", err
	}
	if err := s.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), ch)); err != nil {
		return "", err
	}
	return ch.String(), nil
}

type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func encode(s storage.Storer, o encoder) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

func put(s storage.Storer, t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	obj := s.NewEncodedObject()
	obj.SetType(t)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return s.SetEncodedObject(obj)
}

// Blob is n bytes of repeated text: it compresses to almost nothing.
func Blob(n int) []byte { return bytes.Repeat([]byte("pinseal "), n/8+1)[:n] }

// ZeroBlob writes a loose blob object of n zero bytes into the repository
// at dir (its .git) without ever holding it: the object is hashed and
// deflated as it is streamed to disk. 700 MiB of zeros weigh about 700 KB.
func ZeroBlob(dir string, n int64) (plumbing.Hash, error) {
	objects := filepath.Join(dir, git.GitDirName, "objects")
	tmp, err := os.CreateTemp(objects, "zero-")
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer os.Remove(tmp.Name())
	h := plumbing.NewHasher(plumbing.BlobObject, n)
	zw, _ := zlib.NewWriterLevel(tmp, zlib.BestSpeed)
	if _, err := fmt.Fprintf(zw, "blob %d\x00", n); err != nil {
		return plumbing.ZeroHash, err
	}
	chunk := make([]byte, 1<<20)
	w := io.MultiWriter(h, zw)
	for left := n; left > 0; {
		c := chunk
		if left < int64(len(c)) {
			c = c[:left]
		}
		if _, err := w.Write(c); err != nil {
			return plumbing.ZeroHash, err
		}
		left -= int64(len(c))
	}
	if err := zw.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := tmp.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	sum := h.Sum()
	hex := sum.String()
	if err := os.MkdirAll(filepath.Join(objects, hex[:2]), 0o755); err != nil {
		return plumbing.ZeroHash, err
	}
	return sum, os.Rename(tmp.Name(), filepath.Join(objects, hex[:2], hex[2:]))
}

// Commit makes a commit on the branch HEAD names in the repository at dir:
// its parent's tree with blob added as the regular file at path (a slash
// path; directories made as needed), and returns it. The worktree and
// index are left as they are.
func Commit(dir, path string, blob plumbing.Hash) (string, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return "", err
	}
	head, err := repo.Reference(plumbing.HEAD, false)
	if err != nil {
		return "", err
	}
	branch := head.Target()
	parent, err := repo.ResolveRevision(plumbing.Revision(branch))
	if err != nil {
		return "", err
	}
	pc, err := repo.CommitObject(*parent)
	if err != nil {
		return "", err
	}
	tree, err := insert(repo, pc.TreeHash, strings.Split(path, "/"), blob)
	if err != nil {
		return "", err
	}
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000100, 0).UTC()}
	c := &object.Commit{Author: sig, Committer: sig, Message: "add " + path + "\n", TreeHash: tree, ParentHashes: []plumbing.Hash{*parent}}
	ch, err := encode(repo.Storer, c)
	if err != nil {
		return "", err
	}
	return ch.String(), repo.Storer.SetReference(plumbing.NewHashReference(branch, ch))
}

// insert is tree h (ZeroHash: an empty tree) with blob at path.
func insert(repo *git.Repository, h plumbing.Hash, path []string, blob plumbing.Hash) (plumbing.Hash, error) {
	t := &object.Tree{}
	if !h.IsZero() {
		old, err := repo.TreeObject(h)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = slices.Clone(old.Entries)
	}
	entry := object.TreeEntry{Name: path[0], Mode: filemode.Regular, Hash: blob}
	i := slices.IndexFunc(t.Entries, func(e object.TreeEntry) bool { return e.Name == path[0] })
	if len(path) > 1 {
		sub := plumbing.ZeroHash
		if i >= 0 {
			sub = t.Entries[i].Hash
		}
		nh, err := insert(repo, sub, path[1:], blob)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entry = object.TreeEntry{Name: path[0], Mode: filemode.Dir, Hash: nh}
	}
	if i >= 0 {
		t.Entries[i] = entry
	} else {
		t.Entries = append(t.Entries, entry)
	}
	// git orders a tree's entries by name, a directory's as if it ended in "/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(t.Entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	return encode(repo.Storer, t)
}

// TagChain makes a chain of n annotated tags in the repository at dir:
// tag name of tag name-2 of … of tag name-n of the commit rev names.
func TagChain(dir, rev, name string, n int) error {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return err
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return err
	}
	target, typ := *h, plumbing.CommitObject
	sig := object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000200, 0).UTC()}
	for i := n; i >= 1; i-- {
		tn := fmt.Sprintf("%s-%d", name, i)
		if i == 1 {
			tn = name
		}
		tag := &object.Tag{Name: tn, Tagger: sig, Message: tn + "\n", TargetType: typ, Target: target}
		if target, err = encode(repo.Storer, tag); err != nil {
			return err
		}
		typ = plumbing.TagObject
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewTagReferenceName(tn), target)); err != nil {
			return err
		}
	}
	return nil
}
