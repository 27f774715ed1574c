package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
)

// gitExamples commits a copy of examples/ into a fresh git repository
// (go-git) and returns the copy's path.
func gitExamples(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	root := filepath.Join(top, "examples")
	if err := fixture.CopyDir("../../examples", root); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(top, false)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := repo.Worktree()
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit("examples", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}}); err != nil {
		t.Fatal(err)
	}
	return root
}

func replaceIn(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s: %v, or no %q in it", file, err, old)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckBase(t *testing.T) {
	clean := gitExamples(t)
	reused := gitExamples(t)
	replaceIn(t, filepath.Join(reused, "packages/capi-providers-infraprovider/templates/configmaps.yaml"), "| nindent 4 }}", "| nindent 4 }}\n    # reviewed")
	down := gitExamples(t)
	for _, f := range []string{"templates/providers.yaml", "templates/configmaps.yaml"} {
		replaceIn(t, filepath.Join(down, "packages/capi-providers-core", f), "v1.10.1-core", "v1.9.9-core")
	}
	replaceIn(t, filepath.Join(down, "packages/capi-providers-core/pin.yaml"), "release: v1.10.1-core", "release: v1.9.9-core")
	replaceIn(t, filepath.Join(down, "packages/capi-providers-core/pin.yaml"), "version: v1.10.1", "version: v1.9.9")
	runCases(t, []cliCase{
		{"unchanged", []string{"check", clean, "--base", "HEAD"}, 0, "PASSED"},
		{"same name, other metadata", []string{"check", reused, "--base", "HEAD"}, 1, "clusters that installed v0.7.7-infraprovider-proxmox never get this change: release it under a new name"},
		{"same name as a GitHub annotation", []string{"check", reused, "--base", "HEAD", "-o", "github"}, 1, "::error file=packages/capi-providers-infraprovider/templates/configmaps.yaml,line="},
		{"same name in SARIF", []string{"check", reused, "--base", "HEAD", "-o", "sarif"}, 1, `"ruleId": "version-reused"`},
		{"downgrade", []string{"check", down, "--base", "HEAD"}, 1, "CoreProvider/cluster-api goes from release v1.10.1-core at HEAD ("},
		{"downgrade in SARIF", []string{"check", down, "--base", "HEAD", "-o", "sarif"}, 1, `"ruleId": "version-downgrade"`},
		{"outside git", []string{"check", fixture.CleanCopy(t), "--base", "HEAD"}, 2, "is not in a git repository (--base compares the tree with a revision of the git repository holding it)"},
		{"bad REV", []string{"check", clean, "--base", "v9.9.9"}, 2, `--base: no such revision "v9.9.9" in the git repository at`},
	})
}
