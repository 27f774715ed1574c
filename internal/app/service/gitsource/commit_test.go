package gitsource

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFetchCommit(t *testing.T) {
	ctx := context.Background()
	repo, commit := gitRepo(t)
	c1 := commit("a/file.txt", "one\n")
	commit("a/file.txt", "two\n")
	c3 := commit("a/file.txt", "three\n")
	read := func(co Checkout) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(co.Dir, "a", "file.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for name, tt := range map[string]struct {
		commit string
		depth  int
		want   string // the file's content, or the error
	}{
		"the ref's head":               {c3, 1, "three\n"},
		"an older commit within depth": {c1, 3, "one\n"},
		"an older commit beyond depth": {c1, 1, "raise sources[].git.depth"},
		"a commit the repo lacks":      {strings.Repeat("e", 40), 3, "raise sources[].git.depth"},
		"not a hash":                   {"main", 3, "want a full commit hash"},
	} {
		t.Run(name, func(t *testing.T) {
			co, err := FetchCommit(ctx, Spec{URL: "file://" + repo, Ref: "main", Depth: tt.depth}, tt.commit, t.TempDir())
			if strings.HasSuffix(tt.want, "\n") {
				if err != nil || co.Commit != tt.commit || read(co) != tt.want {
					t.Fatalf("checkout %+v, %v: want %q", co, err, tt.want)
				}
				if _, err := os.Stat(filepath.Join(co.Dir, ".git")); !os.IsNotExist(err) {
					t.Fatalf("the checkout keeps .git: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}

	// A server that sends reachable commits by hash gives an old one at
	// depth 1; a second fetch reads nothing from the server.
	cmd := exec.Command("git", "-C", repo, "config", "uploadpack.allowReachableSHA1InWant", "true")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	dir := t.TempDir()
	co, err := FetchCommit(ctx, Spec{URL: "file://" + repo, Ref: "main"}, c1, dir)
	if err != nil || read(co) != "one\n" {
		t.Fatalf("by hash: %+v, %v", co, err)
	}
	if _, err := FetchCommit(ctx, Spec{URL: "file:///nonexistent", Ref: "main"}, c1, dir); err != nil {
		t.Fatalf("a kept checkout is fetched again: %v", err)
	}
}
