package gitsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/pinseal/pinseal/internal/testkit/gitbomb"
)

// TestWriteTree: a directory of a commit is written from the objects alone
// (files, an executable, a symbolic link as a link), leaving the
// repository's worktree and index as they were.
func TestWriteTree(t *testing.T) {
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(top, "a", "b", "f.yaml"), []byte("x: 1\n"), 0o644)
	os.WriteFile(filepath.Join(top, "a", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("b/f.yaml", filepath.Join(top, "a", "link"))
	os.WriteFile(filepath.Join(top, "outside"), []byte("no"), 0o644)
	repo, err := git.PlainInit(top, false)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := repo.Worktree()
	w.AddWithOptions(&git.AddOptions{All: true})
	h, err := w.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(top, "a", "b", "f.yaml"), []byte("x: 2\n"), 0o644) // uncommitted
	c, _ := repo.CommitObject(h)
	tree, _ := c.Tree()
	sub, err := tree.Tree("a")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteTree(context.Background(), repo, sub.Hash, dir, Spec{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b", "f.yaml")); err != nil || string(b) != "x: 1\n" {
		t.Errorf("b/f.yaml = %q, %v; want the committed bytes", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh: %v, %v; want executable", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "b/f.yaml" {
		t.Errorf("link -> %q, %v", target, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "outside")); err == nil {
		t.Error("a file outside the directory was written")
	}
	if b, _ := os.ReadFile(filepath.Join(top, "a", "b", "f.yaml")); string(b) != "x: 2\n" {
		t.Errorf("the worktree's file changed to %q", b)
	}
	if st, _ := w.Status(); st.File("a/b/f.yaml").Worktree != git.Modified {
		t.Errorf("the index changed: status %v", st)
	}
}

// TestWriteTreeBounds: a tree of 10^6 files in a few kilobytes is refused
// before anything is written.
func TestWriteTreeBounds(t *testing.T) {
	dir := t.TempDir()
	if _, err := gitbomb.Write(dir, 10, 6, gitbomb.Blob(4096)); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.ResolveRevision("main")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := repo.CommitObject(*head)
	out := t.TempDir()
	err = WriteTree(context.Background(), repo, c.TreeHash, out, Spec{MaxFiles: 1000})
	var le *LimitError
	if !errors.As(err, &le) || le.During != "" || !strings.Contains(err.Error(), "more than 1000 files") {
		t.Fatalf("WriteTree: %v; want a *LimitError from the tree beforehand", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("%d entries written before refusing", len(ents))
	}
}
