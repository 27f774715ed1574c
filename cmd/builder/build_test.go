package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pinseal/pinseal/pkg/build"
)

const buildTestYAML = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n"

func writeBuildTestPkg(t *testing.T, url, sha string) string {
	t.Helper()
	dir := t.TempDir()
	pinYAML := fmt.Sprintf(`providers:
- kind: CoreProvider
  name: cluster-api
  version: v1.10.1
  release: v1.10.1-core
  sources:
  - url: %s/core-components.yaml
    sha256: %s
    to: files/core-components.yaml
  blob: files/components.gz
`, url, sha)
	if err := os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte(pinYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runBuildTestCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newRootCmd()
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func TestBuildCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/core-components.yaml" {
			w.Write([]byte(buildTestYAML))
			return
		}
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	sum := sha256.Sum256([]byte(buildTestYAML))
	good := writeBuildTestPkg(t, srv.URL, hex.EncodeToString(sum[:]))
	cache := t.TempDir()

	out, stderr, err := runBuildTestCmd(t, "build", "--cache", cache, good)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "written  files/core-components.yaml") || !strings.Contains(out, "written  files/components.gz") {
		t.Errorf("output does not list the written files:\n%s", out)
	}
	if stderr != "" {
		t.Errorf("not a terminal, yet stderr has output: %q", stderr)
	}

	out, _, err = runBuildTestCmd(t, "build", "--cache", cache, "--json", good)
	if err != nil {
		t.Fatal(err)
	}
	var results []build.Result
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	validateJSON(t, "build.schema.json", out)
	// camelCase keys, like every other JSON output.
	for _, key := range []string{`"dir":`, `"pins": "pin.yaml"`, `"files":`, `"path":`, `"status": "unchanged"`, `"sha256":`} {
		if !strings.Contains(out, key) {
			t.Errorf("--json output lacks %s:\n%s", key, out)
		}
	}
	if len(results) != 1 || len(results[0].Files) != 2 || results[0].Changed() {
		t.Errorf("second build: %+v, want two unchanged files", results)
	}

	// A failing package among good ones: error (exit 1), the good one built.
	bad := writeBuildTestPkg(t, srv.URL, strings.Repeat("ab", 32))
	_, stderr, err = runBuildTestCmd(t, "build", "--cache", t.TempDir(), "--retries", "0", bad, good)
	if err == nil || errors.As(err, new(usageError)) {
		t.Fatalf("err = %v, want a build failure (exit 1)", err)
	}
	if !strings.Contains(err.Error(), "1 of 2 packages failed") || !strings.Contains(stderr, "SHA-256 mismatch") {
		t.Errorf("err %q, stderr %q", err, stderr)
	}
}

func TestBuildCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"build", "--no-such-flag"},
		{"build", "--retries", "-1"},
		{"build", "--timeout", "0s"},
	} {
		_, _, err := runBuildTestCmd(t, args...)
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: err = %v, want a usage error (exit 2)", args, err)
		}
	}
}

// TestBuildRedirectElsewhere: a pinned URL that redirects to another host
// is refused before anything is sent there, naming the host and
// --allow-host, and the package stays as it was; with --allow-host HOST
// the same build succeeds.
func TestBuildRedirectElsewhere(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(buildTestYAML))
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer origin.Close()
	otherHost := strings.TrimPrefix(other.URL, "http://")
	sum := sha256.Sum256([]byte(buildTestYAML))
	dir := writeBuildTestPkg(t, origin.URL, hex.EncodeToString(sum[:]))

	_, stderr, err := runBuildTestCmd(t, "build", "--cache", t.TempDir(), "--retries", "0", dir)
	if err == nil || errors.As(err, new(usageError)) {
		t.Fatalf("err = %v, want a build failure (exit 1)", err)
	}
	for _, want := range []string{"/core-components.yaml", otherHost, "not among the allowed hosts", "--allow-host " + otherHost} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the error does not say %q:\n%s", want, stderr)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d requests reached the host nobody allowed", n)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "files")); len(left) != 0 {
		t.Errorf("the refused build wrote %v", left)
	}

	if _, stderr, err := runBuildTestCmd(t, "build", "--cache", t.TempDir(), "--retries", "0", "--allow-host", otherHost, dir); err != nil {
		t.Fatalf("with --allow-host %s: %v\n%s", otherHost, err, stderr)
	}
	if n := reached.Load(); n != 1 {
		t.Errorf("%d requests reached the allowed host, want 1", n)
	}
}
