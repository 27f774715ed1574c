package server

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// scanNow starts a scan of source (POST /v1/scans) and waits for it to end.
func (c *client) scanNow(source string) scanDetail {
	c.T.Helper()
	var sc store.Scan
	resp, body := c.PostJSON("/v1/scans", map[string]string{"source": source})
	wantStatus(c.T, "POST /v1/scans", resp, body, 202)
	if err := json.Unmarshal(body, &sc); err != nil {
		c.T.Fatal(err)
	}
	return c.waitScan(sc.ID)
}

// newGitRepo makes a git repository whose branch main has one commit, c1,
// holding p/f.yaml "a: 1\n"; git runs the git CLI in it (no global config)
// and returns its trimmed output. It skips the test when git is missing.
func newGitRepo(t testing.TB) (repo string, git func(args ...string) string, c1 string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testpeer.Missing(t, "git CLI (it makes the test repository): apt-get install git")
	}
	repo = t.TempDir()
	git = func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	if err := os.MkdirAll(filepath.Join(repo, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "p", "f.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "one")
	return repo, git, git("rev-parse", "HEAD")
}
