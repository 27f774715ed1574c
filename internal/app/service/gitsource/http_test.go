package gitsource

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestFetchHTTPCredentials fetches over git's smart HTTP protocol (git
// http-backend on 127.0.0.1) behind basic auth: the password from the
// credentials gets in, none or a wrong one does not, and the error does not
// show it.
func TestFetchHTTPCredentials(t *testing.T) {
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		testpeer.Missing(t, "git http-backend not at %s: apt-get install git", backend)
	}
	repo, commit := gitRepo(t)
	c1 := commit("f.txt", "x\n")
	root := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--bare", repo, filepath.Join(root, "r.git")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != "bot" || subtle.ConstantTimeCompare([]byte(p), []byte("s3cret-token")) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	url := srv.URL + "/r.git"
	ctx := context.Background()
	co, err := Fetch(ctx, Spec{URL: url, Ref: "main", Auth: Credentials{Username: "bot", Password: "s3cret-token"}}, t.TempDir())
	if err != nil || co.Commit != c1 {
		t.Fatalf("authenticated fetch: %+v, %v", co, err)
	}
	for _, pw := range []string{"", "wrong-pass"} {
		_, err := Fetch(ctx, Spec{URL: url, Ref: "main", Auth: Credentials{Username: "bot", Password: pw}}, t.TempDir())
		if err == nil || (pw != "" && strings.Contains(err.Error(), pw)) {
			t.Errorf("fetch with password %q: %v, want an error without the password", pw, err)
		}
	}
}
