package main

import (
	"bytes"
	"context"
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
	"testing"

	"github.com/pinseal/pinseal/api/apitest"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// bumpExample copies examples/packages and serves a v0.7.8 of capmox (the
// v0.7.7 manifest with the new image tag) on 127.0.0.1, reached through a
// mirror of the demo's upstream address.
func bumpExample(t *testing.T) (root, dir, mirror string, files map[string][]byte) {
	t.Helper()
	repo := filepath.Join("..", "..")
	root = t.TempDir()
	if err := fixture.CopyDir(filepath.Join(repo, "examples", "packages"), root); err != nil {
		t.Fatal(err)
	}
	up := filepath.Join(repo, "examples", "upstream", "cluster-api-provider-proxmox", "v0.7.7")
	comp, err := os.ReadFile(filepath.Join(up, "infrastructure-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := os.ReadFile(filepath.Join(up, "metadata.yaml"))
	files = map[string][]byte{
		"/cluster-api-provider-proxmox/v0.7.8/infrastructure-components.yaml": bytes.ReplaceAll(comp, []byte(":v0.7.7"), []byte(":v0.7.8")),
		"/cluster-api-provider-proxmox/v0.7.8/metadata.yaml":                  meta,
	}
	srv := serveFiles(t, files)
	return root, filepath.Join(root, "capi-providers-infraprovider"), "http://127.0.0.1:8089/=" + srv.URL + "/", files
}

// serveFiles serves files by URL path (404 for any other), until the test ends.
func serveFiles(t *testing.T, files map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func TestBumpCommand(t *testing.T) {
	root, dir, mirror, files := bumpExample(t)
	cache := t.TempDir()
	before := readTree(t, root)
	base := []string{"bump", dir, "--to", "v0.7.8", "--mirror", mirror, "--tree", root, "--cache", cache}

	// No digest, no --trust-on-first-use: refused, nothing written.
	_, stderr, err := runBuildTestCmd(t, base...)
	if err == nil || !strings.Contains(err.Error(), "pins are never guessed") {
		t.Fatalf("err = %v (stderr %s)", err, stderr)
	}
	if got := readTree(t, root); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("a refused bump changed files")
	}

	// Dry run: diffs and the TOFU digests, no writes.
	out, _, err := runBuildTestCmd(t, append(base, "--trust-on-first-use", "--dry-run")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"would bump", "TRUSTED ON FIRST USE", "--- a/pin.yaml", "-  version: v0.7.7", "+  version: v0.7.8",
		"+  version: v0.7.8-infraprovider-proxmox", "files/components.gz", "files/infrastructure-components.yaml", "+CAPMOX_VERSION=v0.7.8"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if got := readTree(t, root); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("a dry run changed files")
	}

	// The bump, digests given, JSON out, checked against its schema.
	args := append(base, "--output", "json")
	for p, b := range files {
		args = append(args, "--sha256", "http://127.0.0.1:8089"+p+"="+shaHex(b))
	}
	out, _, err = runBuildTestCmd(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	validateJSON(t, "bump.schema.json", out)
	var res struct {
		To    struct{ Release string }
		Files []struct{ Path, Kind, OldSha256, NewSha256 string }
	}
	json.Unmarshal([]byte(out), &res)
	if res.To.Release != "v0.7.8-infraprovider-proxmox" || len(res.Files) != 6 {
		t.Errorf("result: %s", out)
	}
	_, r, err := verify.Run(context.Background(), root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Severity == report.Error {
			t.Errorf("verifier check after bump: %s %s: %s", f.Check, f.Provider, f.Message)
		}
	}

	// builder build honours PINSEAL_MIRRORS: a fresh cache, the demo
	// address mirrored to the stand-in, nothing to change.
	t.Setenv("PINSEAL_MIRRORS", mirror)
	out, stderr, err = runBuildTestCmd(t, "build", dir, "--cache", t.TempDir())
	if err != nil {
		t.Fatalf("build through PINSEAL_MIRRORS: %v\n%s", err, stderr)
	}
	if strings.Contains(out, "written") {
		t.Errorf("build after bump rewrote files:\n%s", out)
	}
}

// validateJSON checks out against the JSON Schema api/<schema>.
func validateJSON(t *testing.T, schema, out string) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "api", schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := apitest.Validate(apitest.Compile(t, schema, doc), []byte(out)); err != nil {
		t.Errorf("JSON does not match api/%s: %v\n%s", schema, err, out)
	}
}

func TestBumpCommandUsage(t *testing.T) {
	for _, args := range [][]string{
		{"bump"},
		{"bump", "."},
		{"bump", ".", "--to", "v1.2.3", "--output", "yaml"},
		{"bump", ".", "--to", "v1.2.3", "--sha256", "nohex"},
		{"bump", ".", "--to", "v1.2.3", "--mirror", "nonsense"},
	} {
		_, _, err := runBuildTestCmd(t, args...)
		var ue usageError
		if err == nil || !errorsAs(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// TestBuildRestoresInterruptedBump: builder build first restores a package
// a killed bump left half renamed.
func TestBuildRestoresInterruptedBump(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "files"), 0o755)
	os.WriteFile(filepath.Join(dir, "files", "a.yaml"), []byte("new\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "files", ".pinseal-tmp-a.yaml.old.1"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".pinseal-bump-journal.json"),
		[]byte(`{"entries":[{"target":"files/a.yaml","temp":".pinseal-tmp-a.yaml.1","backup":".pinseal-tmp-a.yaml.old.1"}]}`), 0o644)
	_, stderr, _ := runBuildTestCmd(t, "build", dir, "--cache", t.TempDir())
	if !strings.Contains(stderr, "restored 1 files left by an interrupted bump") {
		t.Errorf("stderr: %s", stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "files", "a.yaml")); string(b) != "old\n" {
		t.Errorf("files/a.yaml = %q, want the old content back", b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pinseal-bump-journal.json")); err == nil {
		t.Error("journal left")
	}
}
