//go:build integration

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// A hostile upstream on 127.0.0.1 against the real `builder bump`
// process: each answer is refused with an error naming the URL, the bound
// and what to do, within a bounded peak RSS and time, leaving the package
// tree and the download cache as they were, and nothing is sent to a
// host other than 127.0.0.1.

// builderBinary builds the builder into a directory removed when t ends.
func builderBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "builder")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/builder: %v\n%s", err, out)
	}
	return bin
}

// peakRun is a finished builder process.
type peakRun struct {
	out  string // stdout and stderr
	code int
	peak int64 // bytes: the highest VmHWM seen, or the kernel's maxrss
	took time.Duration
}

// runBuilderPeak runs the builder with args, polling its peak RSS.
func runBuilderPeak(t *testing.T, bin string, env []string, args ...string) peakRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); cmd.Wait() }()
	kill := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	defer kill.Stop()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	for polling := true; polling; {
		if kb := vmHWM(status); kb<<10 > peak {
			peak = kb << 10
		}
		select {
		case <-done:
			polling = false
		case <-time.After(10 * time.Millisecond):
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss<<10 > peak {
		peak = ru.Maxrss << 10
	}
	return peakRun{out: out.String(), code: cmd.ProcessState.ExitCode(), peak: peak, took: time.Since(start)}
}

func vmHWM(file string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// gzipBomb is n zero bytes, gzipped (about n/1000 bytes).
func gzipBomb(t *testing.T, n int64) []byte {
	t.Helper()
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := io.CopyN(z, zeros{}, n); err != nil {
		t.Fatal(err)
	}
	z.Close()
	return b.Bytes()
}

// elsewhere listens on 127.0.0.2 (outside 127.0.0.1, still this machine)
// and counts the connections it gets.
func elsewhere(t *testing.T) (addr string, conns *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 to watch for connections outside 127.0.0.1: %v", err)
	}
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), conns
}

func TestIntegrationBumpHostileUpstream(t *testing.T) {
	bin := builderBinary(t)
	root, dir, _, files := bumpExample(t)
	const compPath = "/cluster-api-provider-proxmox/v0.7.8/infrastructure-components.yaml"
	const metaPath = "/cluster-api-provider-proxmox/v0.7.8/metadata.yaml"
	other, otherConns := elsewhere(t)
	bomb := gzipBomb(t, 2<<30)
	aliasBomb := []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\n" +
		"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
		"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\ni: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n" +
		"releaseSeries: *i\n")
	const timeout = 3 * time.Second

	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc // the components file
		meta  []byte           // nil: the release's own
		want  []string
		// maxRSS bounds the process's peak RSS; maxTook its time.
		maxRSS int64
	}{
		{"gzip bomb", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		}, nil, []string{compPath, "larger than the 64.0 MiB limit", "--max-bytes"}, 256 << 20},
		{"endless body", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(w, zeros{})
		}, nil, []string{compPath, "larger than the 64.0 MiB limit", "--max-bytes"}, 256 << 20},
		{"declared too large", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.FormatInt(8<<30, 10))
			w.Write([]byte("x"))
		}, nil, []string{compPath, "larger than the 64.0 MiB limit", "--max-bytes"}, 128 << 20},
		{"trickle", func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 600; i++ {
				if _, err := w.Write([]byte("#")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
		}, nil, []string{compPath, "timed out after 3s"}, 128 << 20},
		{"redirect elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+other+r.URL.Path, http.StatusFound)
		}, nil, []string{compPath, other, "not among the allowed hosts", "--allow-host " + other}, 128 << 20},
		{"alias bomb in metadata.yaml", func(w http.ResponseWriter, r *http.Request) {
			w.Write(files[compPath])
		}, aliasBomb, []string{"metadata.yaml", "alias"}, 256 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case compPath:
					tc.serve(w, r)
				case metaPath:
					if tc.meta != nil {
						w.Write(tc.meta)
					} else {
						w.Write(files[metaPath])
					}
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			before := readTree(t, root)
			cache, tmp := t.TempDir(), t.TempDir()
			r := runBuilderPeak(t, bin, []string{"TMPDIR=" + tmp, "PINSEAL_MIRRORS="}, "bump", dir, "--to", "v0.7.8",
				"--mirror", "http://127.0.0.1:8089/="+srv.URL+"/", "--tree", root, "--cache", cache,
				"--trust-on-first-use", "--timeout", timeout.String(), "--retries", "0")
			t.Logf("exit %d in %s, peak RSS %d MiB: %s", r.code, r.took.Round(time.Millisecond), r.peak>>20, lastLine(r.out))
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.out, w) {
					t.Errorf("the error does not say %q:\n%s", w, r.out)
				}
			}
			if r.peak > tc.maxRSS {
				t.Errorf("peak RSS %d MiB, want at most %d MiB", r.peak>>20, tc.maxRSS>>20)
			}
			if timebound.Over(r.took, timeout) {
				t.Errorf("took %s, the download timeout is %s", r.took, timeout)
			}
			if got := readTree(t, root); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Error("the refused bump changed the package tree")
			}
			if left := readTree(t, cache); len(left) != 0 {
				t.Errorf("the cache holds %d files after a refused bump", len(left))
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if n := otherConns.Load(); n != 0 {
				t.Errorf("%d connections to %s, outside 127.0.0.1", n, other)
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestIntegrationVendorHostileUpstream: the same hostile answers against
// the real `builder vendor`, its release downloads sent by the releases-API
// stand-in's objects host to the hostile server (an allowed host), and a
// hostile API host; the vendored chart and the cache stay as they were.
func TestIntegrationVendorHostileUpstream(t *testing.T) {
	bin := builderBinary(t)
	root := t.TempDir()
	if err := fixture.WriteFetched(root); err != nil {
		t.Fatal(err)
	}
	var p fixture.FetchedProvider
	for _, fp := range fixture.FetchedProviders {
		if fp.ID() == "BootstrapProvider/kubeadm" {
			p = fp
		}
	}
	comp, meta := fixture.FetchedRelease(p)
	other, otherConns := elsewhere(t)
	bomb := gzipBomb(t, 2<<30)
	compPath := strings.TrimPrefix(p.Components(), "https://github.com")
	const timeout = 3 * time.Second
	endless := func(w http.ResponseWriter, r *http.Request) { io.Copy(w, zeros{}) }

	for _, tc := range []struct {
		name     string
		download http.HandlerFunc // the components file ("": the release's)
		api      http.HandlerFunc // the API host (nil: the stand-in)
		redirect string           // where the objects host sends downloads ("": the hostile server)
		want     []string
		maxRSS   int64
	}{
		{name: "gzip bomb", download: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb)
		}, want: []string{compPath, "larger than the 64.0 MiB limit", "--max-bytes"}, maxRSS: 256 << 20},
		{name: "endless body", download: endless, want: []string{compPath, "larger than the 64.0 MiB limit", "--max-bytes"}, maxRSS: 256 << 20},
		{name: "trickle", download: func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i < 600; i++ {
				if _, err := w.Write([]byte("#")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
		}, want: []string{compPath, "timed out after 3s"}, maxRSS: 128 << 20},
		{name: "redirect elsewhere", redirect: "http://" + other, want: []string{other, "not among the allowed hosts", "--allow-host " + other}, maxRSS: 128 << 20},
		{name: "endless API page", api: endless, want: []string{"/repos/" + p.Repo + "/releases/tags/" + p.Version, "larger than 8388608 bytes", "--api-url"}, maxRSS: 128 << 20},
		{name: "gzip bomb API page", api: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/json")
			w.Write(bomb)
		}, want: []string{"/repos/" + p.Repo + "/releases/tags/" + p.Version, "larger than 8388608 bytes", "--api-url"}, maxRSS: 128 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == compPath && tc.download != nil:
					tc.download(w, r)
				case r.URL.Path == compPath:
					w.Write(comp)
				case strings.HasSuffix(r.URL.Path, "/metadata.yaml"):
					w.Write(meta)
				default:
					http.NotFound(w, r)
				}
			}))
			defer hostile.Close()
			host := releaseapi.New(t)
			host.Add(p.Repo, releaseapi.Release{Tag: p.Version, Files: []releaseapi.File{{Name: p.Asset, Data: comp}, {Name: "metadata.yaml", Data: meta}}})
			to := hostile.URL
			if tc.redirect != "" {
				to = tc.redirect
			}
			host.RedirectDownloads(to)
			apiURL := host.URL()
			if tc.api != nil {
				api := httptest.NewServer(tc.api)
				defer api.Close()
				apiURL = api.URL
			}
			dir := fixture.FetchedChartDir(root, p.Chart)
			before := readTree(t, root)
			cache, tmp := t.TempDir(), t.TempDir()
			r := runBuilderPeak(t, bin, []string{"TMPDIR=" + tmp, "PINSEAL_MIRRORS=", "XDG_CACHE_HOME=" + cache, "GITHUB_TOKEN="},
				"vendor", dir, "--provider", p.ID(), "--api-url", apiURL, "--mirror", host.Mirror(),
				"--allow-host", host.ObjectsHost(), "--allow-host", strings.TrimPrefix(hostile.URL, "http://"),
				"--timeout", timeout.String(), "--retries", "0")
			t.Logf("exit %d in %s, peak RSS %d MiB: %s", r.code, r.took.Round(time.Millisecond), r.peak>>20, lastLine(r.out))
			if r.code != 1 {
				t.Errorf("exit %d, want 1", r.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.out, w) {
					t.Errorf("the error does not say %q:\n%s", w, r.out)
				}
			}
			if r.peak > tc.maxRSS {
				t.Errorf("peak RSS %d MiB, want at most %d MiB", r.peak>>20, tc.maxRSS>>20)
			}
			// Two requests at most before the one refused: the release and
			// its digest, each within the timeout.
			if timebound.Over(r.took, 2*timeout) {
				t.Errorf("took %s, the request timeout is %s", r.took, timeout)
			}
			if got := readTree(t, root); fmt.Sprint(got) != fmt.Sprint(before) {
				t.Error("the refused vendor changed the tree")
			}
			if left := readTree(t, cache); len(left) != 0 {
				t.Errorf("the cache holds %d files after a refused vendor", len(left))
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
			if n := otherConns.Load(); n != 0 {
				t.Errorf("%d connections to %s, outside 127.0.0.1", n, other)
			}
		})
	}
}
