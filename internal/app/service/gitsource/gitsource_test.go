package gitsource

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// gitRepo makes a repository with the git CLI and returns its directory and
// a commit function.
func gitRepo(t *testing.T) (string, func(file, content string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testpeer.Missing(t, "git CLI (it makes the test repository): apt-get install git")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	return dir, func(file, content string) string {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", "-A")
		run("commit", "-q", "-m", "change "+file)
		return run("rev-parse", "HEAD")
	}
}

func TestFetch(t *testing.T) {
	ctx := context.Background()
	repo, commit := gitRepo(t)
	c1 := commit("a/file.txt", "one\n")
	spec := Spec{URL: "file://" + repo, Ref: "main"}
	cache := t.TempDir()

	co, err := Fetch(ctx, spec, cache)
	if err != nil {
		t.Fatal(err)
	}
	if co.Commit != c1 || co.Ref != "refs/heads/main" {
		t.Fatalf("checkout %+v, want commit %s of refs/heads/main", co, c1)
	}
	if b, err := os.ReadFile(filepath.Join(co.Dir, "a/file.txt")); err != nil || string(b) != "one\n" {
		t.Fatalf("checked-out file = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(co.Dir, ".git")); !os.IsNotExist(err) {
		t.Fatalf("checkout keeps .git: %v", err)
	}

	c2 := commit("a/file.txt", "two\n")
	co2, err := Fetch(ctx, spec, cache)
	if err != nil || co2.Commit != c2 {
		t.Fatalf("after a new commit: %+v, %v; want %s", co2, err, c2)
	}
	if b, _ := os.ReadFile(filepath.Join(co2.Dir, "a/file.txt")); string(b) != "two\n" {
		t.Fatalf("checked-out file = %q, want two", b)
	}
	if _, err := os.Stat(co.Dir); !os.IsNotExist(err) {
		t.Fatalf("checkout of the old commit not pruned: %v", err)
	}
	// Unchanged: the same directory, no clone.
	marker := filepath.Join(co2.Dir, "marker")
	os.WriteFile(marker, nil, 0o644)
	if co3, err := Fetch(ctx, Spec{URL: "file://" + repo}, cache); err != nil || co3.Commit != c2 {
		t.Fatalf("unchanged (default branch): %+v, %v", co3, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("unchanged commit was cloned again: %v", err)
	}

	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{URL: "file://" + repo, Ref: "nope"}, `no branch or tag "nope"`},
		{Spec{URL: "file://" + filepath.Join(repo, "missing")}, "git ls-remote"},
		{Spec{URL: "ftp://example.com/x"}, `scheme "ftp"`},
		{Spec{URL: "https://u:pw@example.com/x"}, "carries a password"},
	} {
		if _, err := Fetch(ctx, tc.spec, t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fetch(%s %s) = %v, want an error containing %q", tc.spec.URL, tc.spec.Ref, err, tc.want)
		}
	}
}

func TestWebURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://github.com/org/repo.git", "https://github.com/org/repo/blob/abc/p/f.yaml#L3"},
		{"git@github.com:org/repo.git", "https://github.com/org/repo/blob/abc/p/f.yaml#L3"},
		{"ssh://git@gitlab.com/g/sub/proj.git", "https://gitlab.com/g/sub/proj/-/blob/abc/p/f.yaml#L3"},
		{"https://git.example.com/r.git", "https://git.example.com/r.git@abc/p/f.yaml#L3"},
		{"file:///srv/r.git", "file:///srv/r.git@abc/p/f.yaml#L3"},
	} {
		if got := WebURL(tc.url, "abc", "p/f.yaml", 3); got != tc.want {
			t.Errorf("WebURL(%s) = %s, want %s", tc.url, got, tc.want)
		}
	}
	if got := WebURL("https://github.com/o/r", "abc", "f", 0); got != "https://github.com/o/r/blob/abc/f" {
		t.Errorf("no line: %s", got)
	}
}

func TestScheme(t *testing.T) {
	for url, want := range map[string]string{
		"https://h/r": "https", "http://127.0.0.1:1/r": "http", "ssh://git@h/r": "ssh",
		"git@h:org/r.git": "ssh", "file:///tmp/r": "file",
	} {
		if got, err := Scheme(url); err != nil || got != want {
			t.Errorf("Scheme(%s) = %s, %v; want %s", url, got, err, want)
		}
	}
}
