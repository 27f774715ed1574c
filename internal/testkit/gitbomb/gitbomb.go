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
	"fmt"
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
