//go:build integration

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/server"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// Hostile charts against a real `verifier serve`: what a chart can reach
// (schema references, links, FIFOs), what it can write into the log, and
// what the server leaves behind and tells the client when it stops or its
// disk is full. After each attack the same process answers a clean upload
// 200, every answer comes within requestTimeout (plus timebound.Slack), nothing is left in
// dataDir/uploads, and a counting listener (whose address the attacks
// name) sees no connection.

// leftUploads lists what is in dataDir/uploads.
func leftUploads(t *testing.T, dataDir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dataDir, "uploads"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// hostileTree is a tree holding one hostile chart (writeHostileChart).
func hostileTree(t *testing.T, schema string) []byte {
	t.Helper()
	tree := filepath.Join(t.TempDir(), "tree")
	writeHostileChart(t, tree, "pkg", schema)
	return tarGzDir(t, tree)
}

func writeConfig(t *testing.T, dir, cfg string) string {
	t.Helper()
	f := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(f, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestIntegrationServeHostileCharts: schema references, a FIFO
// .helmignore and a values key that Helm logs, as uploads and in a scanned
// source.
func TestIntegrationServeHostileCharts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the verifier")
	}
	const requestTimeout = 8 * time.Second
	dir := t.TempDir()
	examplesAbs, _ := filepath.Abs("../../examples")
	examples := tarGzDir(t, examplesAbs)
	watch := netwatch.Listen(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Source "ignore": a chart whose .helmignore is a FIFO, beside one
	// whose .helmignore links out of the tree.
	src := filepath.Join(dir, "src")
	writeHostileChart(t, src, "fifo", "")
	if err := syscall.Mkfifo(filepath.Join(src, "fifo", ".helmignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeHostileChart(t, src, "link", "")
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link", ".helmignore")); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	cfgFile := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
publicReads: true
sources:
  - name: ignore
    path: %s
limits:
  requestTimeout: %s
  renderTimeout: 3s
`, dataDir, src, requestTimeout))
	s := startRealServer(t, cfgFile)
	s.stillServing("start", examples)
	baseHWM, _ := s.memKiB()

	answered := func(t *testing.T, what string, d time.Duration) {
		t.Helper()
		hwm, _ := s.memKiB()
		t.Logf("%s answered in %s; server peak RSS %d MiB (+%d MiB since start)", what, d.Round(time.Millisecond), hwm>>10, (hwm-baseHWM)>>10)
		if hwm-baseHWM > 64<<10 {
			t.Errorf("%s raised the server's peak RSS by %d MiB", what, (hwm-baseHWM)>>10)
		}
		if timebound.Over(d, requestTimeout) {
			t.Errorf("%s answered after %s; requestTimeout is %s", what, d, requestTimeout)
		}
		if left := leftUploads(t, dataDir); len(left) > 0 {
			t.Errorf("after %s, dataDir/uploads holds %v", what, left)
		}
	}
	for _, tc := range []struct{ name, schema, ref string }{
		{"http ref", `{"properties":{"a":{"$ref":"` + watch.URL("/a.json") + `"}}}`, watch.URL("/a.json")},
		{"metaschema", `{"$schema":"` + watch.URL("/meta") + `"}`, watch.URL("/meta")},
		{"etc passwd", `{"$ref":"file:///etc/passwd"}`, "file:///etc/passwd"},
		{"fifo", `{"$ref":"file://` + fifo + `"}`, "file://" + fifo},
		{"proc stdin", `{"$ref":"file:///proc/self/fd/0"}`, "file:///proc/self/fd/0"},
	} {
		t.Run("schema "+tc.name, func(t *testing.T) {
			s := s.in(t)
			code, r, d := s.upload(hostileTree(t, tc.schema))
			if code != http.StatusOK {
				t.Fatalf("answered %d, want 200 with a finding", code)
			}
			f := finding(t, r, "package-load", `refers to "`+tc.ref+`"`)
			if f.File != "pkg/values.schema.json" {
				t.Errorf("finding at %s, want pkg/values.schema.json", f.File)
			}
			if strings.Contains(f.Message, "root:") {
				t.Errorf("the finding shows /etc/passwd: %s", f.Message)
			}
			answered(t, "upload", d)
			s.stillServing("schema "+tc.name, examples)
		})
	}
	t.Run("values key logged", func(t *testing.T) {
		s := s.in(t)
		code, _, d := s.upload(hostileTree(t, ""))
		if code != http.StatusOK {
			t.Fatalf("answered %d", code)
		}
		answered(t, "upload", d)
		log := s.logText()
		checkForgedLog(t, log)
		if !strings.Contains(log, "skipped value for") {
			t.Errorf("Helm's warning is not in the server log (the test no longer tries to forge a record):\n%s", tail(log, 4<<10))
		}
	})
	t.Run("scan helmignore fifo and link", func(t *testing.T) {
		s := s.in(t)
		for i := range 2 { // the second trigger is 202, not 409
			start := time.Now()
			sc := s.scan("ignore")
			if sc.Scan.Status != store.Succeeded || sc.Report == nil {
				t.Fatalf("scan %d: %+v, want succeeded with a report", i, sc.Scan)
			}
			t.Logf("scan %d ended in %s", i, time.Since(start).Round(time.Millisecond))
			if f := finding(t, sc.Report, "package-load", ".helmignore cannot be read: not a regular file (a FIFO)"); f.File != "fifo/.helmignore" {
				t.Errorf("FIFO finding at %s", f.File)
			}
			link := false
			for _, f := range sc.Report.Findings {
				link = link || (f.File == "link/.helmignore" && strings.Contains(f.Message, ".helmignore cannot be read"))
				if strings.Contains(f.Message, "root:") {
					t.Errorf("a finding shows /etc/passwd: %+v", f)
				}
			}
			if !link {
				t.Errorf("no finding for link/.helmignore in %+v", sc.Report.Findings)
			}
		}
		s.stillServing("scans of a FIFO .helmignore", examples)
	})
	if n := watch.Count(); n != 0 {
		t.Fatalf("%d connections reached the listener the charts named", n)
	}
}

// TestIntegrationServeShutdownStopsVerifications: a verification that
// outlasts shutdownTimeout is answered 503 with Retry-After, its upload is
// removed and its render child killed, and the server exits: the
// verification gets its whole shutdownTimeout and is stopped at it (within
// timebound.Slack), the server is gone within shutdownTimeout and
// server.ShutdownGrace. requestTimeout and renderTimeout are far past both,
// so an answer by either bound fails the test.
func TestIntegrationServeShutdownStopsVerifications(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the verifier")
	}
	const requestTimeout, shutdownTimeout = 20 * time.Second, 2 * time.Second
	if shutdownTimeout+server.ShutdownGrace+timebound.Slack >= 15*time.Second {
		t.Fatal("renderTimeout (15s) must be past the shutdown's bound, or the test cannot tell which bound stopped the verification")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	cfgFile := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
limits:
  requestTimeout: %s
  shutdownTimeout: %s
  renderTimeout: 15s
`, dataDir, requestTimeout, shutdownTimeout))
	s := startRealServer(t, cfgFile)
	tree := filepath.Join(t.TempDir(), "tree")
	writeBombChart(t, tree, "pkg", timeBombTemplate)
	tgz := tarGzDir(t, tree)

	type answer struct {
		code       int
		retryAfter string
		body       string
		d          time.Duration
		err        error
		resp       *http.Response
	}
	req, _ := http.NewRequest("POST", s.base+"/v1/verify", bytes.NewReader(tgz))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/gzip")
	got := make(chan answer, 1)
	go func() {
		start := time.Now()
		resp, err := s.http.Do(req)
		if err != nil {
			got <- answer{err: err, d: time.Since(start)}
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		got <- answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: b.String(), d: time.Since(start), resp: resp}
	}()
	// A second client sends its headers and part of its body, then stalls:
	// it is stopped at shutdown too, not at requestTimeout.
	stalled := make(chan string, 1)
	go func() {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
		if err != nil {
			stalled <- err.Error()
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/gzip\r\nContent-Length: 1048576\r\n\r\n", s.token)
		c.Write(tgz[:100])
		c.SetReadDeadline(time.Now().Add(requestTimeout + 5*time.Second))
		b, _ := io.ReadAll(c)
		stalled <- string(b)
	}()
	// Wait for the render child to be at work on the bomb: any CPU it
	// uses counts (a loaded machine gives it little), and the bomb keeps
	// it at work until the 15s renderTimeout.
	var kids map[string][2]int64
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if busy := s.childrenUsingCPU(0); len(busy) > 0 {
			kids = s.children()
			break
		}
	}
	if len(kids) == 0 {
		t.Fatal("no render child at work on the bomb")
	}
	if len(leftUploads(t, dataDir)) == 0 {
		t.Fatal("no upload in dataDir/uploads while it is checked (the test would prove nothing)")
	}
	stop := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	a := <-got
	answered := time.Since(stop)
	t.Logf("answer %d (Retry-After %q) %s after SIGTERM, %s after the request: %s", a.code, a.retryAfter, answered.Round(time.Millisecond), a.d.Round(time.Millisecond), a.body)
	if a.err != nil {
		t.Fatalf("no answer: %v", a.err)
	}
	servertest.ValidateResponse(t, req, a.resp, []byte(a.body))
	if a.code != http.StatusServiceUnavailable || a.retryAfter == "" || !strings.Contains(a.body, "shutting down") {
		t.Errorf("answer %d Retry-After %q %s, want 503 with Retry-After saying the server is shutting down", a.code, a.retryAfter, a.body)
	}
	// Stopped by the shutdown at shutdownTimeout: not before (running
	// requests get that long to finish), not later than the machine takes
	// to act on it.
	if answered < shutdownTimeout || timebound.Over(answered, shutdownTimeout) {
		t.Errorf("answered %s after SIGTERM; want at shutdownTimeout %s (within %s)", answered, shutdownTimeout, timebound.Slack)
	}
	st := <-stalled
	t.Logf("stalled upload answered %s after SIGTERM: %q", time.Since(stop).Round(time.Millisecond), firstLine(st))
	if !strings.HasPrefix(st, "HTTP/1.1 503") || !strings.Contains(st, "Retry-After:") {
		t.Errorf("stalled upload answered %q, want 503 with Retry-After", st)
	}
	// The server exits once the stopped requests have ended, within
	// ShutdownGrace of shutdownTimeout.
	exitBound := shutdownTimeout + server.ShutdownGrace
	select {
	case <-s.exited:
	case <-time.After(exitBound + timebound.Slack - time.Since(stop)):
		t.Fatalf("the server had not exited %s after SIGTERM; shutdownTimeout %s and ShutdownGrace %s", time.Since(stop), shutdownTimeout, server.ShutdownGrace)
	}
	t.Logf("server exited %s after SIGTERM", time.Since(stop).Round(time.Millisecond))
	if left := leftUploads(t, dataDir); len(left) > 0 {
		t.Errorf("dataDir/uploads holds %v after shutdown", left)
	}
	// Killed before the server exited; the kernel takes a moment to end
	// a killed process, so each gets timebound.Slack to be gone.
	for pid := range kids {
		for gone := time.Now().Add(timebound.Slack); ; time.Sleep(20 * time.Millisecond) {
			b, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				break
			}
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) == 0 || f[0] == "Z" || f[0] == "X" {
				break
			}
			if time.Now().After(gone) {
				t.Errorf("render child %s outlived the server by %s: %s", pid, timebound.Slack, b)
				break
			}
		}
	}
}

// gzTarOf is a .tar.gz with one file of size bytes of zeros (a few KiB
// packed).
func gzTarOf(t *testing.T, name string, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for n := size; n > 0; n -= len(zeros) {
		tw.Write(zeros[:min(n, len(zeros))])
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// TestIntegrationServeDiskFull: with dataDir on a small tmpfs, an upload
// that fills it while it is received, and one that fills it while it is
// extracted, are 507 with Retry-After naming no server path; the next
// clean upload is 200.
func TestIntegrationServeDiskFull(t *testing.T) {
	const requestTimeout = 10 * time.Second
	if testing.Short() {
		t.Skip("builds and starts the verifier")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	os.Mkdir(dataDir, 0o700)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", dataDir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs for dataDir: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dataDir).Run() })
	examplesAbs, _ := filepath.Abs("../../examples")
	examples := tarGzDir(t, examplesAbs)
	cfgFile := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
limits:
  requestTimeout: %s
`, dataDir, requestTimeout))
	s := startRealServer(t, cfgFile)
	s.stillServing("start", examples)

	noise := make([]byte, 40<<20)
	rand.Read(noise)
	for name, body := range map[string][]byte{
		"receiving":  noise,                              // 40 MiB on 24 MiB
		"extracting": gzTarOf(t, "pkg/big.yaml", 40<<20), // 40 KiB packed
	} {
		t.Run(name, func(t *testing.T) {
			s := s.in(t)
			code, b, d := s.do("POST", "/v1/verify", "application/gzip", body)
			t.Logf("answered %d in %s: %s", code, d.Round(time.Millisecond), b)
			if code != http.StatusInsufficientStorage || !strings.Contains(string(b), "no room") {
				t.Errorf("answered %d %s, want 507 saying the server has no room", code, b)
			}
			if strings.Contains(string(b), dataDir) || strings.Contains(string(b), dir) {
				t.Errorf("the answer names a server path: %s", b)
			}
			if timebound.Over(d, requestTimeout) {
				t.Errorf("answered after %s; requestTimeout is %s", d, requestTimeout)
			}
			if left := leftUploads(t, dataDir); len(left) > 0 {
				t.Errorf("dataDir/uploads holds %v", left)
			}
			s.stillServing("a full disk "+name, examples)
		})
	}
	// Retry-After comes with the 507.
	req, _ := http.NewRequest("POST", s.base+"/v1/verify", bytes.NewReader(noise))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/gzip")
	resp, err := s.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	servertest.ValidateResponse(t, req, resp, b)
	if resp.StatusCode != http.StatusInsufficientStorage || resp.Header.Get("Retry-After") == "" {
		t.Errorf("answered %d Retry-After %q, want 507 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

// TestIntegrationServeKilledTakesRenderChildren: a server killed with
// SIGKILL (no shutdown at all) while a render child is busy takes the
// child with it: the kernel kills it (PR_SET_PDEATHSIG), it does not run on
// to its own time bound.
func TestIntegrationServeKilledTakesRenderChildren(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the verifier")
	}
	dir := t.TempDir()
	cfgFile := writeConfig(t, dir, fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
limits:
  requestTimeout: 30s
  renderTimeout: 25s
`, filepath.Join(dir, "data")))
	s := startRealServer(t, cfgFile)
	tree := filepath.Join(t.TempDir(), "tree")
	writeBombChart(t, tree, "pkg", timeBombTemplate)
	tgz := tarGzDir(t, tree)
	go func() {
		req, _ := http.NewRequest("POST", s.base+"/v1/verify", bytes.NewReader(tgz))
		req.Header.Set("Authorization", "Bearer "+s.token)
		req.Header.Set("Content-Type", "application/gzip")
		if resp, err := s.http.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	var busy []string
	for deadline := time.Now().Add(15 * time.Second); len(busy) == 0 && time.Now().Before(deadline); {
		busy = s.busyChildren()
	}
	if len(busy) == 0 {
		t.Fatal("no render child at work on the bomb")
	}
	kids := s.children()
	s.kill(t)
	killed := time.Now()
	for pid := range kids {
		for {
			b, err := os.ReadFile("/proc/" + pid + "/stat")
			if err != nil {
				break
			}
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "Z" {
				break
			}
			if time.Since(killed) > timebound.Slack {
				// The kernel ends a child with its parent (PR_SET_PDEATHSIG).
				t.Fatalf("render child %s still running %s after the server was killed: %s", pid, timebound.Slack, b)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("%d render children gone %s after SIGKILL of the server", len(kids), time.Since(killed).Round(time.Millisecond))
}
