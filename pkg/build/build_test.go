package build

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	_ "time/tzdata" // the zones below load without the system tzdata: the test cannot skip

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
)

const components = `apiVersion: v1
kind: Namespace
metadata:
  name: capmox-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: capmox-controller-manager
  namespace: capmox-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7
        readinessProbe:
          httpGet:
            path: /readyz
            port: healthz
        resources:
          limits:
            cpu: 500m
`

const metadata = `apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries:
  - major: 0
    minor: 7
    contract: v1beta1
`

const startupProbe = `--- a/files/infrastructure-components.yaml
+++ b/files/infrastructure-components.yaml
@@ -18,6 +18,11 @@
           httpGet:
             path: /readyz
             port: healthz
+        startupProbe:
+          failureThreshold: 30
+          httpGet:
+            path: /healthz
+            port: healthz
         resources:
           limits:
             cpu: 500m
`

var patched = strings.Replace(components, "        resources:\n",
	"        startupProbe:\n          failureThreshold: 30\n          httpGet:\n            path: /healthz\n            port: healthz\n        resources:\n", 1)

// upstream is a loopback release server whose files and failures a test
// controls.
type upstream struct {
	*httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	fail     map[string]int // path -> HTTP status to answer instead
	requests []string
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{
		files: map[string][]byte{
			"/capmox/v0.7.7/infrastructure-components.yaml": []byte(components),
			"/capmox/v0.7.7/metadata.yaml":                  []byte(metadata),
		},
		fail: map[string]int{},
	}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.requests = append(u.requests, r.URL.Path)
		if code := u.fail[r.URL.Path]; code != 0 {
			http.Error(w, "injected failure", code)
			return
		}
		b, ok := u.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) set(path string, b []byte) { u.mu.Lock(); u.files[path] = b; u.mu.Unlock() }
func (u *upstream) failWith(path string, code int) {
	u.mu.Lock()
	u.fail[path] = code
	u.mu.Unlock()
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// pkgSpec is what writePackage puts into a package directory.
type pkgSpec struct {
	url        string
	compSHA    string // default: SHA of components
	patches    []string
	patchFiles map[string]string
}

func writePackage(t *testing.T, dir string, s pkgSpec) {
	t.Helper()
	if s.compSHA == "" {
		s.compSHA = shaHex([]byte(components))
	}
	var pl strings.Builder
	if len(s.patches) > 0 {
		pl.WriteString("  patches:\n")
		for _, p := range s.patches {
			fmt.Fprintf(&pl, "  - %s\n", p)
		}
	}
	pinYAML := fmt.Sprintf(`providers:
- kind: InfrastructureProvider
  name: proxmox
  version: v0.7.7
  release: v0.7.7-infraprovider-proxmox
  sources:
  - url: %[1]s/capmox/v0.7.7/infrastructure-components.yaml
    sha256: %[2]s
    to: files/infrastructure-components.yaml
  - url: %[1]s/capmox/v0.7.7/metadata.yaml
    sha256: %[3]s
    to: files/metadata.yaml
%[4]s  blob: files/components.gz
`, s.url, s.compSHA, shaHex([]byte(metadata)), pl.String())
	files := map[string]string{
		"pin.yaml":   pinYAML,
		"Chart.yaml": "apiVersion: v2\nname: capi-providers-infraprovider\nversion: 0.0.0\n",
		"Makefile":   "export NAME=capi-providers-infraprovider\nexport NAMESPACE=cozy-cluster-api\nCAPMOX_VERSION=v0.7.7\n",
	}
	for k, v := range s.patchFiles {
		files[k] = v
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fetcher(t *testing.T) *fetch.Fetcher {
	return &fetch.Fetcher{CacheDir: t.TempDir(), Timeout: 10 * time.Second}
}

// snapshot records every file of a directory tree: content, mode, mtime.
type fileState struct {
	data  string
	mode  fs.FileMode
	mtime time.Time
}

func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = fileState{string(b), fi.Mode(), fi.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, before, after map[string]fileState) {
	t.Helper()
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s was removed", name)
		case a.data != b.data:
			t.Errorf("%s content changed", name)
		case a.mode != b.mode:
			t.Errorf("%s mode changed %v -> %v", name, b.mode, a.mode)
		case !a.mtime.Equal(b.mtime):
			t.Errorf("%s mtime changed %v -> %v", name, b.mtime, a.mtime)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s appeared", name)
		}
	}
}

func statuses(r *Result) map[string]Status {
	m := map[string]Status{}
	for _, f := range r.Files {
		m[f.Path] = f.Status
	}
	return m
}

func TestBuildWritesVerifiedPatchedFilesAndBlob(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	writePackage(t, dir, pkgSpec{url: up.URL, patches: []string{"patches/0001-startup-probe.diff"},
		patchFiles: map[string]string{"patches/0001-startup-probe.diff": startupProbe}})

	res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{
		"files/infrastructure-components.yaml": Written,
		"files/metadata.yaml":                  Written,
		"files/components.gz":                  Written,
	}
	if got := statuses(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if res.Pins != pin.SourcePinFile {
		t.Errorf("pins from %q", res.Pins)
	}
	yaml, _ := os.ReadFile(filepath.Join(dir, "files/infrastructure-components.yaml"))
	if string(yaml) != patched {
		t.Errorf("vendored YAML is not the patched upstream:\n%s", yaml)
	}
	meta, _ := os.ReadFile(filepath.Join(dir, "files/metadata.yaml"))
	if string(meta) != metadata {
		t.Errorf("metadata differs")
	}
	gz, _ := os.ReadFile(filepath.Join(dir, "files/components.gz"))
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil || string(raw) != patched {
		t.Errorf("blob does not inflate to the vendored YAML (err %v)", err)
	}
	if zr.Header.Name != "" || !zr.Header.ModTime.IsZero() {
		t.Errorf("blob header embeds name %q / time %v", zr.Header.Name, zr.Header.ModTime)
	}
	wantGz, _ := blob.CompressBytes([]byte(patched))
	if !bytes.Equal(gz, wantGz) {
		t.Errorf("blob is not blob.CompressBytes of the YAML")
	}
	for _, f := range res.Files {
		data, _ := os.ReadFile(filepath.Join(dir, f.Path))
		if f.SHA256 != shaHex(data) || f.Size != int64(len(data)) {
			t.Errorf("%s: result sha/size do not describe the file", f.Path)
		}
	}

	// Second build: a no-op that touches nothing, served from the cache.
	before := snapshot(t, dir)
	res, err = Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed() {
		t.Errorf("second build changed files: %v", statuses(res))
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

func TestBuildDeterministic(t *testing.T) {
	up := newUpstream(t)
	build := func(t *testing.T, tz string, umask int, touch bool) map[string]fileState {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			t.Fatalf("time zone %s: %v", tz, err)
		}
		oldLocal := time.Local
		time.Local = loc
		defer func() { time.Local = oldLocal }()
		old := syscall.Umask(umask)
		defer syscall.Umask(old)

		dir := t.TempDir()
		writePackage(t, dir, pkgSpec{url: up.URL, patches: []string{"patches/p.diff"},
			patchFiles: map[string]string{"patches/p.diff": startupProbe}})
		if touch {
			// Odd file times on every input must not matter.
			odd := time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				return os.Chtimes(p, odd, odd)
			})
		}
		if _, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)}); err != nil {
			t.Fatal(err)
		}
		return snapshot(t, filepath.Join(dir, "files"))
	}
	ref := build(t, "UTC", 0o022, false)
	for _, c := range []struct {
		tz    string
		umask int
		touch bool
	}{
		{"America/New_York", 0o077, false},
		{"Asia/Kolkata", 0o002, true},
		{"Pacific/Chatham", 0o027, true},
	} {
		got := build(t, c.tz, c.umask, c.touch)
		if len(got) != len(ref) {
			t.Fatalf("TZ=%s umask=%o: %d files, want %d", c.tz, c.umask, len(got), len(ref))
		}
		for name, r := range ref {
			if got[name].data != r.data {
				t.Errorf("TZ=%s umask=%o: %s differs", c.tz, c.umask, name)
			}
			if got[name].mode.Perm() != atomicfile.DefaultPerm {
				t.Errorf("TZ=%s umask=%o: %s mode %v, want %v whatever the umask", c.tz, c.umask, name, got[name].mode.Perm(), atomicfile.DefaultPerm)
			}
		}
	}
}

func gnuGzip(t *testing.T, data []byte, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("gzip")
	if err != nil {
		return nil
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func stdGzip(t *testing.T, data []byte, level int, name string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, level)
	zw.Name = name
	if name != "" {
		zw.ModTime = time.Unix(1745280000, 0)
	}
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func TestBuildExistingBlob(t *testing.T) {
	up := newUpstream(t)
	ours, _ := blob.CompressBytes([]byte(components))
	tests := []struct {
		name     string
		existing []byte
		want     Status
	}{
		{"GNU gzip -9 -n: same content, clean header", gnuGzip(t, []byte(components), "-9", "-n"), Unchanged},
		{"other clean gzip (level 1)", stdGzip(t, []byte(components), 1, ""), Unchanged},
		{"ours", ours, Unchanged},
		{"gzip without -n embeds name and time", stdGzip(t, []byte(components), 9, "infrastructure-components.yaml"), Written},
		{"clean header, old content", stdGzip(t, []byte(components+"# old\n"), 9, ""), Written},
		{"truncated", ours[:len(ours)-4], Written},
		{"not gzip", []byte(components), Written},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.existing == nil {
				testpeer.Missing(t, "GNU gzip not in PATH: apt-get install gzip")
			}
			dir := t.TempDir()
			writePackage(t, dir, pkgSpec{url: up.URL})
			os.MkdirAll(filepath.Join(dir, "files"), 0o755)
			blobPath := filepath.Join(dir, "files/components.gz")
			os.WriteFile(blobPath, tt.existing, 0o644)
			past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			os.Chtimes(blobPath, past, past)

			res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
			if err != nil {
				t.Fatal(err)
			}
			if got := statuses(res)["files/components.gz"]; got != tt.want {
				t.Fatalf("blob status %s, want %s", got, tt.want)
			}
			now, _ := os.ReadFile(blobPath)
			fi, _ := os.Stat(blobPath)
			if tt.want == Unchanged {
				if !bytes.Equal(now, tt.existing) || !fi.ModTime().Equal(past) {
					t.Error("kept blob was touched")
				}
			} else if !bytes.Equal(now, ours) {
				t.Error("rewritten blob is not ours")
			}
		})
	}
}

// TestBuildFailureChangesNothing: a build that fails at any step leaves
// every file of the package byte-identical with identical mtimes, and no
// temporary file behind.
func TestBuildFailureChangesNothing(t *testing.T) {
	up := newUpstream(t)
	badPatch := strings.Replace(startupProbe, "             path: /readyz", "             path: /ready", 1)
	tests := []struct {
		name  string
		spec  func(url string) pkgSpec
		setup func(t *testing.T)
		want  []string
	}{
		{
			name: "patch does not apply",
			spec: func(url string) pkgSpec {
				return pkgSpec{url: url, patches: []string{"patches/bad.diff"}, patchFiles: map[string]string{"patches/bad.diff": badPatch}}
			},
			want: []string{"patches/bad.diff", "files/infrastructure-components.yaml", "hunk #1 @@ -18,6 +18,11 @@", `expects "            path: /ready"`},
		},
		{
			name: "digest mismatch",
			spec: func(url string) pkgSpec {
				return pkgSpec{url: url, compSHA: strings.Repeat("ab", 32)}
			},
			want: []string{"/capmox/v0.7.7/infrastructure-components.yaml", "SHA-256 mismatch", "pinned " + strings.Repeat("ab", 32), "received " + shaHex([]byte(components))},
		},
		{
			name: "second source answers 500 after the first succeeded",
			spec: func(url string) pkgSpec { return pkgSpec{url: url} },
			setup: func(t *testing.T) {
				up.failWith("/capmox/v0.7.7/metadata.yaml", http.StatusInternalServerError)
				t.Cleanup(func() { up.failWith("/capmox/v0.7.7/metadata.yaml", 0) })
			},
			want: []string{"/capmox/v0.7.7/metadata.yaml", "500"},
		},
		{
			name: "patch names a file that is not a source",
			spec: func(url string) pkgSpec {
				return pkgSpec{url: url, patches: []string{"patches/other.diff"},
					patchFiles: map[string]string{"patches/other.diff": strings.ReplaceAll(startupProbe, "files/infrastructure-components.yaml", "files/other.yaml")}}
			},
			want: []string{"patches/other.diff", "files/other.yaml", "not a source"},
		},
		{
			name: "patch file missing",
			spec: func(url string) pkgSpec { return pkgSpec{url: url, patches: []string{"patches/missing.diff"}} },
			want: []string{"patch patches/missing.diff is listed in patches but does not exist"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// A package built before, with old content in place.
			writePackage(t, dir, pkgSpec{url: up.URL})
			if _, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)}); err != nil {
				t.Fatal(err)
			}
			writePackage(t, dir, tt.spec(up.URL))
			old := time.Date(2021, 6, 1, 12, 0, 0, 0, time.UTC)
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error { return os.Chtimes(p, old, old) })
			// Make the old vendored files differ from what a build would
			// write, so a partial write would show.
			os.WriteFile(filepath.Join(dir, "files/infrastructure-components.yaml"), []byte("old: yaml\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "files/metadata.yaml"), []byte("old: metadata\n"), 0o644)
			for _, f := range []string{"files/infrastructure-components.yaml", "files/metadata.yaml"} {
				os.Chtimes(filepath.Join(dir, f), old, old)
			}
			if tt.setup != nil {
				tt.setup(t)
			}
			before := snapshot(t, dir)

			_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
			if err == nil {
				t.Fatal("build succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
}

func TestBuildDigestMismatchIsTyped(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	writePackage(t, dir, pkgSpec{url: up.URL})
	up.set("/capmox/v0.7.7/infrastructure-components.yaml", []byte(components+"# tampered\n"))
	_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	var dm *fetch.ErrDigestMismatch
	if !errors.As(err, &dm) {
		t.Fatalf("error %v is not a digest mismatch", err)
	}
	if dm.Want != shaHex([]byte(components)) || dm.Got != shaHex([]byte(components+"# tampered\n")) {
		t.Errorf("mismatch %+v", dm)
	}
	if _, err := os.Stat(filepath.Join(dir, "files")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("files/ was created by a failed build")
	}
}

func TestBuildDryRun(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	writePackage(t, dir, pkgSpec{url: up.URL})
	before := snapshot(t, dir)
	res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if f.Status != WouldWrite {
			t.Errorf("%s: %s, want %s", f.Path, f.Status, WouldWrite)
		}
	}
	if !res.Changed() {
		t.Error("dry run reports no change")
	}
	sameSnapshot(t, before, snapshot(t, dir))
}

func TestBuildWithoutPins(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"nothing at all", map[string]string{"Chart.yaml": "apiVersion: v2\nname: x\nversion: 0.0.0\n"},
			[]string{"nothing to build", "neither pin.yaml nor URL and SHA-256 variables", "add " + "PKG/pin.yaml"}},
		{"Makefile with a version only", map[string]string{"Makefile": "NAME=x\nCABPT_UPSTREAM_VERSION = v0.6.12\n"},
			[]string{"its Makefile pins no upstream file by SHA-256", "CABPT_UPSTREAM_VERSION = v0.6.12", "add PKG/pin.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tt.files {
				os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
			}
			_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
			if err == nil {
				t.Fatal("built a package without pins")
			}
			msg := strings.ReplaceAll(err.Error(), dir, "PKG")
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestBuildNotAPackageDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pin.yaml")
	os.WriteFile(file, []byte("providers: []\n"), 0o644)
	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such directory; give the path of a provider package"},
		{file, "is a file, not a directory"},
	} {
		_, err := Build(context.Background(), tt.path, Options{Fetcher: fetcher(t)})
		if err == nil || !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build(%s): err = %v, want it to name the path and say %q", tt.path, err, tt.want)
		}
	}
}

func TestBuildInvalidPinFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pin.yaml"), []byte("providers:\n- kind: InfrastructureProvider\n  nmae: x\n"), 0o644)
	_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err == nil || !strings.Contains(err.Error(), "pin.yaml") {
		t.Fatalf("err = %v, want a pin.yaml error", err)
	}
}

func TestBuildMakefilePins(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	mk := fmt.Sprintf(`export NAME=capi-providers-infraprovider
export NAMESPACE=cozy-cluster-api
CAPMOX_VERSION = v0.7.7
CAPMOX_URL = %s/capmox/v0.7.7/infrastructure-components.yaml
CAPMOX_SHA256 = %s

update:
	curl -fsSL $(CAPMOX_URL) -o files/infrastructure-components.yaml
	gzip -9 -n -c files/infrastructure-components.yaml > files/components.gz
`, up.URL, shaHex([]byte(components)))
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644)
	os.MkdirAll(filepath.Join(dir, "files"), 0o755)
	os.WriteFile(filepath.Join(dir, "files/infrastructure-components.yaml"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "files/components.gz"), stdGzip(t, []byte("old\n"), 9, ""), 0o644)

	res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pins != pin.SourceMakefile {
		t.Errorf("pins from %q, want Makefile", res.Pins)
	}
	want := map[string]Status{"files/infrastructure-components.yaml": Written, "files/components.gz": Written}
	if got := statuses(res); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	gz, _ := os.ReadFile(filepath.Join(dir, "files/components.gz"))
	wantGz, _ := blob.CompressBytes([]byte(components))
	if !bytes.Equal(gz, wantGz) {
		t.Error("the Makefile package's blob was not rebuilt with its YAML")
	}
}

func TestBuildOffline(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	writePackage(t, dir, pkgSpec{url: up.URL})
	f := fetcher(t)
	if _, err := Build(context.Background(), dir, Options{Fetcher: f}); err != nil {
		t.Fatal(err)
	}
	up.Close() // nothing reachable now
	os.RemoveAll(filepath.Join(dir, "files"))
	off := *f
	off.Offline = true
	res, err := Build(context.Background(), dir, Options{Fetcher: &off})
	if err != nil {
		t.Fatalf("offline build from the cache: %v", err)
	}
	if len(res.Files) != 3 {
		t.Errorf("files %v", statuses(res))
	}
	// Vendored files that hold their pinned bytes need no download: with
	// an empty cache and no network, a build that only has to redo the
	// blob works and says it fetched nothing.
	empty := &fetch.Fetcher{CacheDir: t.TempDir(), Offline: true}
	blobPath := filepath.Join(dir, "files/components.gz")
	if err := os.WriteFile(blobPath, []byte("not the blob"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Build(context.Background(), dir, Options{Fetcher: empty})
	if err != nil || len(res.Fetched) != 0 || len(res.Reused) != 2 || statuses(res)["files/components.gz"] != Written {
		t.Fatalf("offline rebuild from vendored pinned files: %+v, %v", res, err)
	}
	// A vendored file that does not hold its pinned bytes is fetched.
	os.RemoveAll(filepath.Join(dir, "files"))
	if _, err := Build(context.Background(), dir, Options{Fetcher: empty}); err == nil || !strings.Contains(err.Error(), "offline") {
		t.Errorf("offline build with an empty cache: %v", err)
	}
}

func TestPinnedComponents(t *testing.T) {
	src := func(to ...string) []pin.Source {
		var out []pin.Source
		for _, t := range to {
			out = append(out, pin.Source{To: t})
		}
		return out
	}
	tests := []struct {
		pin     pin.Provider
		want    string
		wantErr string
	}{
		{pin.Provider{Sources: src("files/metadata.yaml", "files/infrastructure-components.yaml"), Blob: "files/components.gz"}, "files/infrastructure-components.yaml", ""},
		{pin.Provider{Sources: src("files/core-components.yaml"), Blob: "files/components.gz"}, "files/core-components.yaml", ""},
		{pin.Provider{Sources: src("files/a.yaml", "files/metadata.yaml"), Components: "files/a.yaml", Blob: "files/components.gz"}, "files/a.yaml", ""},
		{pin.Provider{Sources: src("files/metadata.yaml"), Blob: "files/components.gz"}, "", "no source whose `to` ends with components.yaml"},
		{pin.Provider{Sources: src("files/a-components.yaml", "files/b-components.yaml"), Blob: "files/components.gz"}, "", "several sources"},
		{pin.Provider{Sources: src("files/a.yaml", "files/b.yaml"), Patches: []string{"patches/x.diff"}}, "", "several could be"},
	}
	for _, tt := range tests {
		var order []string
		for _, s := range tt.pin.Sources {
			order = append(order, s.To)
		}
		got, err := pinnedComponents("X/y", tt.pin, order)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: err %v, want %q", order, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: %q %v, want %q", order, got, err, tt.want)
		}
	}
}

func TestBuildPatchOnlyChangesComponents(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	metaPatch := "--- a/files/metadata.yaml\n+++ b/files/metadata.yaml\n@@ -1,2 +1,2 @@\n apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n-kind: Metadata\n+kind: Metadata # patched\n"
	writePackage(t, dir, pkgSpec{url: up.URL, patches: []string{"patches/meta.diff"}, patchFiles: map[string]string{"patches/meta.diff": metaPatch}})
	_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err == nil || !strings.Contains(err.Error(), "may only change the components file files/infrastructure-components.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildRemovesStaleTempFiles(t *testing.T) {
	up := newUpstream(t)
	dir := t.TempDir()
	writePackage(t, dir, pkgSpec{url: up.URL})
	os.MkdirAll(filepath.Join(dir, "files"), 0o755)
	stale := filepath.Join(dir, "files", atomicfile.TempPrefix+"components.gz.42")
	fresh := filepath.Join(dir, "files", atomicfile.TempPrefix+"metadata.yaml.43")
	os.WriteFile(stale, []byte("half"), 0o644)
	os.WriteFile(fresh, []byte("live"), 0o644)
	old := time.Now().Add(-2 * atomicfile.StaleAge)
	os.Chtimes(stale, old, old)
	res, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 1 || res.Removed[0] != "files/"+filepath.Base(stale) {
		t.Errorf("removed %v", res.Removed)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Error("stale temp file kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("fresh temp file (a live writer's) removed")
	}
}

// A package whose files/ is a symlink out of it (an untrusted change could
// point it at any directory) is not written through; a symlink that stays
// inside the package is fine, and a patch symlinked out of it is not read.
func TestBuildRefusesSymlinkEscape(t *testing.T) {
	up := newUpstream(t)
	t.Run("files is a symlink out of the package", func(t *testing.T) {
		outside, dir := t.TempDir(), t.TempDir()
		writePackage(t, dir, pkgSpec{url: up.URL})
		if err := os.Symlink(outside, filepath.Join(dir, "files")); err != nil {
			t.Skipf("no symlinks: %v", err)
		}
		_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
		if err == nil || !strings.Contains(err.Error(), "outside the package directory") || !strings.Contains(err.Error(), "files/") {
			t.Fatalf("err = %v, want a refusal naming the symlink", err)
		}
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("the build wrote %d files outside the package", len(entries))
		}
	})
	t.Run("files is a symlink inside the package", func(t *testing.T) {
		dir := t.TempDir()
		writePackage(t, dir, pkgSpec{url: up.URL})
		os.RemoveAll(filepath.Join(dir, "files"))
		os.MkdirAll(filepath.Join(dir, "vendored"), 0o755)
		if err := os.Symlink("vendored", filepath.Join(dir, "files")); err != nil {
			t.Skipf("no symlinks: %v", err)
		}
		if _, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, "vendored", "components.gz")); err != nil {
			t.Errorf("blob not written through the inner symlink: %v", err)
		}
	})
	t.Run("patch symlinked out of the package", func(t *testing.T) {
		outside, dir := t.TempDir(), t.TempDir()
		os.WriteFile(filepath.Join(outside, "p.diff"), []byte(startupProbe), 0o644)
		writePackage(t, dir, pkgSpec{url: up.URL, patches: []string{"patches/p.diff"}})
		os.MkdirAll(filepath.Join(dir, "patches"), 0o755)
		if err := os.Symlink(filepath.Join(outside, "p.diff"), filepath.Join(dir, "patches", "p.diff")); err != nil {
			t.Skipf("no symlinks: %v", err)
		}
		_, err := Build(context.Background(), dir, Options{Fetcher: fetcher(t)})
		if err == nil || !strings.Contains(err.Error(), "patch patches/p.diff leads outside the package directory") {
			t.Fatalf("err = %v, want the symlinked patch refused", err)
		}
	})
}
