//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/server"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/report"
)

// Template bombs: a ~300-byte chart whose template asks for
// 10 TB, and nested loops that run for ever.
const (
	memoryBombTemplate = `{{ repeat 1000000000000 "aaaaaaaaaa" }}` + "\n"
	timeBombTemplate   = `{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}` + "\n"
)

// realServer is a `verifier serve` process and a client reporting to t.
type realServer struct {
	*serveProcess
	t     *testing.T
	token string
	http  *http.Client
}

const bombToken = "bomb-test-token-0123456789"

func startRealServer(t *testing.T, cfgFile string) *realServer {
	t.Helper()
	p := startServeProcess(t, cfgFile, serveProcOptions{env: []string{server.TokensEnv + "=" + bombToken}})
	return &realServer{serveProcess: p, t: t, token: bombToken, http: &http.Client{Timeout: 2 * time.Minute}}
}

// in is s reporting to the (sub)test t.
func (s *realServer) in(t *testing.T) *realServer {
	c := *s
	c.t = t
	return &c
}

func (s *realServer) do(method, path, ctype string, body []byte) (int, []byte, time.Duration) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	start := time.Now()
	resp, err := s.http.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v (is the server still alive?)", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, time.Since(start)
}

// upload POSTs a tree to /v1/verify.
func (s *realServer) upload(tgz []byte) (int, *report.Report, time.Duration) {
	s.t.Helper()
	code, body, d := s.do("POST", "/v1/verify", "application/gzip", tgz)
	if code != http.StatusOK {
		return code, nil, d
	}
	var r report.Report
	if err := json.Unmarshal(body, &r); err != nil {
		s.t.Fatalf("report: %v: %s", err, body)
	}
	return code, &r, d
}

// memKiB reads VmHWM (peak RSS) and VmRSS of the server process.
func (s *realServer) memKiB() (hwm, rss int64) {
	s.t.Helper()
	return s.memStatus(s.t, "VmHWM") >> 10, s.memStatus(s.t, "VmRSS") >> 10
}

// children maps each live child process of the server to its CPU time
// (utime+stime, clock ticks) and RSS (pages).
func (s *realServer) children() map[string][2]int64 {
	out := map[string][2]int64{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime(14) stime(15) ... rss(24)
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 21 && f[0] != "Z" && f[1] == strconv.Itoa(s.cmd.Process.Pid) {
			ut, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			rss, _ := strconv.ParseInt(f[21], 10, 64)
			out[e.Name()] = [2]int64{ut + st, rss}
		}
	}
	return out
}

// busyChildren lists the server's children that used more than 0.1s of CPU
// over 0.5s: render children still at work. Idle ones (kept for the next
// chart) use none; a loaded machine gives a busy one less, so this never
// calls an idle child busy.
func (s *realServer) busyChildren() []string { return s.childrenUsingCPU(10) }

// childrenUsingCPU lists the server's children that used more than ticks
// clock ticks (1/100 s) of CPU over 0.5s.
func (s *realServer) childrenUsingCPU(ticks int64) []string {
	before := s.children()
	time.Sleep(500 * time.Millisecond)
	var busy []string
	for pid, now := range s.children() {
		if b, ok := before[pid]; ok && now[0]-b[0] > ticks {
			busy = append(busy, pid)
		}
	}
	return busy
}

// stillServing: the same process answers a clean upload of examples/ with
// 200 (which it does only within its requestTimeout: how much sooner is the
// machine's load, not a promise), its memory stayed under 1 GiB and no
// render child is still at work (idle ones wait for the next chart).
func (s *realServer) stillServing(after string, examples []byte) {
	s.t.Helper()
	code, r, d := s.upload(examples)
	if code != http.StatusOK || r.Summary.Packages != 2 {
		s.t.Fatalf("after %s: clean upload of examples/ answered %d (%v)", after, code, r)
	}
	hwm, rss := s.memKiB()
	s.t.Logf("after %s: clean upload %d in %s; server VmHWM %d MiB, VmRSS %d MiB", after, code, d.Round(time.Millisecond), hwm>>10, rss>>10)
	if hwm > 1<<20 || rss > 1<<20 {
		s.t.Errorf("after %s: server memory VmHWM %d KiB, VmRSS %d KiB: over 1 GiB", after, hwm, rss)
	}
	if busy := s.busyChildren(); len(busy) > 0 {
		s.t.Errorf("after %s: render children still at work: %v", after, busy)
	}
	kids := s.children()
	var kidsRSS int64
	for _, c := range kids {
		kidsRSS += c[1] * int64(os.Getpagesize())
	}
	s.t.Logf("after %s: %d idle render children, %d MiB RSS in all", after, len(kids), kidsRSS>>20)
	if len(kids) > max(2, runtime.NumCPU()) {
		s.t.Errorf("after %s: %d render children, more than the %d render slots", after, len(kids), max(2, runtime.NumCPU()))
	}
}

// loadFinding finds the package-load finding of pkg and checks it names
// the template and one of the limits: a bomb two bounds can stop (one that
// builds gigabytes slowly passes the memory bound on a quiet machine, the
// time bound on a busy one) is held to being stopped, by either, with a
// finding naming the bound that stopped it.
func loadFinding(t *testing.T, r *report.Report, pkg string, limits ...string) {
	t.Helper()
	for _, f := range r.Findings {
		if f.Check == "package-load" && f.Package == pkg {
			named := false
			for _, l := range limits {
				named = named || strings.Contains(f.Message, l)
			}
			if f.File != pkg+"/templates/bomb.yaml" || !strings.Contains(f.Message, "templates/bomb.yaml") || !named {
				t.Fatalf("package-load finding of %s: %+v; want it at %s/templates/bomb.yaml naming one of %q", pkg, f, pkg, limits)
			}
			return
		}
	}
	t.Fatalf("no package-load finding for %s in %+v", pkg, r.Findings)
}

// TestIntegrationServeTemplateBombs runs the template bombs above
// against a real `verifier serve` process: as uploads to POST /v1/verify,
// as charts in a scanned source, and as more charts than requestTimeout
// and scanTimeout allow. After each, the same process answers a clean
// upload of examples/ at once, with its RSS under 1 GiB.
func TestIntegrationServeTemplateBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the verifier")
	}
	dir := t.TempDir()
	examplesAbs, _ := filepath.Abs("../../examples")
	examples := tarGzDir(t, examplesAbs)

	// Source "bombs": both bombs beside a clean package: the scan ends
	// with their findings. Source "slow": more time bombs than scanTimeout
	// allows: the scan ends failed at scanTimeout.
	bombs := filepath.Join(dir, "bombs")
	writeBombChart(t, bombs, "memory", memoryBombTemplate)
	writeBombChart(t, bombs, "time", timeBombTemplate)
	slow := filepath.Join(dir, "slow")
	for i := range 12 {
		writeBombChart(t, slow, fmt.Sprintf("time%02d", i), timeBombTemplate)
	}
	// The bounds each subtest holds the server to; requestTimeout is
	// more than timebound.Slack past renderTimeout, so an answer at the
	// render bound and one at the request bound are told apart.
	const (
		requestTimeout = 6 * time.Second
		scanTimeout    = 5 * time.Second
		renderTimeout  = 2 * time.Second
	)
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
publicReads: true
sources:
  - name: bombs
    path: %s
  - name: slow
    path: %s
limits:
  requestTimeout: %s
  scanTimeout: %s
  renderTimeout: %s
  renderMaxMemory: 268435456
`, filepath.Join(dir, "data"), bombs, slow, requestTimeout, scanTimeout, renderTimeout)
	cfgFile := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startRealServer(t, cfgFile)
	s.stillServing("start", examples)

	t.Run("upload memory bomb", func(t *testing.T) {
		s := s.in(t)
		tree := filepath.Join(t.TempDir(), "tree")
		writeBombChart(t, tree, "pkg", memoryBombTemplate)
		tgz := tarGzDir(t, tree)
		t.Logf("upload of %d bytes", len(tgz))
		code, r, d := s.upload(tgz)
		if code != http.StatusOK {
			t.Fatalf("answered %d, want 200 with a package-load finding", code)
		}
		loadFinding(t, r, "pkg", "render memory limit of 256 MiB")
		t.Logf("answered in %s", d)
		s.stillServing("the memory bomb upload", examples)
	})
	t.Run("upload memory bomb under len", func(t *testing.T) {
		// A few bytes of output, gigabytes built under them: the fast
		// path must not render it in the service's process. The quotes
		// double the string 40 times, about a second of work on a quiet
		// machine before it passes 256 MiB: on a loaded one the 2s
		// render time bound can stop it first. The promise is that one of
		// them does (the finding names it) and that the service did not
		// grow (stillServing).
		s := s.in(t)
		tree := filepath.Join(t.TempDir(), "tree")
		writeBombChart(t, tree, "pkg", `{{ len ("a"`+strings.Repeat(" | quote", 40)+`) }}`+"\n")
		code, r, d := s.upload(tarGzDir(t, tree))
		if code != http.StatusOK {
			t.Fatalf("answered %d after %s, want 200 with a package-load finding", code, d)
		}
		loadFinding(t, r, "pkg", "render memory limit of 256 MiB", fmt.Sprintf("render time limit of %s", renderTimeout))
		if timebound.Over(d, renderTimeout) {
			t.Errorf("answered after %s; the render time limit is %s", d, renderTimeout)
		}
		s.stillServing("the memory bomb under len", examples)
	})
	t.Run("upload time bomb", func(t *testing.T) {
		s := s.in(t)
		tree := filepath.Join(t.TempDir(), "tree")
		writeBombChart(t, tree, "pkg", timeBombTemplate)
		code, r, d := s.upload(tarGzDir(t, tree))
		if code != http.StatusOK {
			t.Fatalf("answered %d, want 200 with a package-load finding", code)
		}
		loadFinding(t, r, "pkg", fmt.Sprintf("render time limit of %s", renderTimeout))
		if timebound.Over(d, renderTimeout) {
			t.Errorf("answered after %s; the render time limit is %s", d, renderTimeout)
		}
		s.stillServing("the time bomb upload", examples)
	})
	t.Run("upload plain manifest node bomb", func(t *testing.T) {
		s := s.in(t)
		// No chart: a plain manifest directory whose file is 3 million
		// one-character flow items (6 MB, GiBs as YAML nodes), parsed in a
		// render child under renderMaxMemory.
		tree := filepath.Join(t.TempDir(), "tree", "plain")
		os.MkdirAll(tree, 0o755)
		os.WriteFile(filepath.Join(tree, "provider.yaml"), []byte("apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\n  namespace: capi\nspec:\n  version: v1.10.1-core\n"), 0o644)
		os.WriteFile(filepath.Join(tree, "zz-bomb.yaml"), []byte("# a Provider list\nitems: ["+strings.Repeat("1,", 3_000_000)+"1]\n"), 0o644)
		code, r, _ := s.upload(tarGzDir(t, filepath.Dir(tree)))
		if code != http.StatusOK {
			t.Fatalf("answered %d, want 200 with a package-load finding", code)
		}
		found := false
		for _, f := range r.Findings {
			if f.Check == "package-load" && f.Package == "plain" && strings.HasSuffix(f.File, "zz-bomb.yaml") &&
				// Parsing GiBs of nodes passes the memory bound on a quiet
				// machine; on a loaded one the 2s time bound can come first.
				// Either bound stopping it, named with the file, is the rule.
				(strings.Contains(f.Message, "memory limit of 256 MiB") || strings.Contains(f.Message, fmt.Sprintf("time limit of %s", renderTimeout))) {
				found = true
			}
		}
		if !found {
			t.Fatalf("no package-load finding naming zz-bomb.yaml and the memory or time limit in %+v", r.Findings)
		}
		s.stillServing("the plain manifest node bomb upload", examples)
	})
	t.Run("upload past requestTimeout", func(t *testing.T) {
		s := s.in(t)
		// 12 time bombs at 2s each, 2 at a time: 12s of rendering, the
		// request has 6s. It must end at requestTimeout and kill its
		// renders.
		tree := filepath.Join(t.TempDir(), "tree")
		for i := range 12 {
			writeBombChart(t, tree, fmt.Sprintf("time%02d", i), timeBombTemplate)
		}
		code, _, d := s.upload(tarGzDir(t, tree))
		if code != http.StatusGatewayTimeout {
			t.Fatalf("answered %d after %s, want 504 at requestTimeout", code, d)
		}
		if timebound.Over(d, requestTimeout) {
			t.Errorf("answered after %s; requestTimeout is %s", d, requestTimeout)
		}
		s.stillServing("an upload past requestTimeout", examples)
	})
	t.Run("scan with bombs", func(t *testing.T) {
		s := s.in(t)
		sc := s.scan("bombs")
		if sc.Scan.Status != store.Succeeded || sc.Report == nil {
			t.Fatalf("scan %+v, want succeeded with a report", sc.Scan)
		}
		loadFinding(t, sc.Report, "memory", "render memory limit")
		loadFinding(t, sc.Report, "time", "render time limit")
		s.stillServing("a scan of bombs", examples)
	})
	t.Run("scan past scanTimeout", func(t *testing.T) {
		s := s.in(t)
		start := time.Now()
		sc := s.scan("slow")
		if sc.Scan.Status != store.Failed || !strings.Contains(sc.Scan.Error, fmt.Sprintf("limits.scanTimeout (%s)", scanTimeout)) {
			t.Fatalf("scan %+v, want failed at scanTimeout, saying so", sc.Scan)
		}
		// The scan's own record: started to finished, not the polling.
		if sc.Scan.FinishedAt == nil || timebound.Over(sc.Scan.FinishedAt.Sub(sc.Scan.StartedAt), scanTimeout) {
			t.Errorf("scan %+v ended past scanTimeout %s", sc.Scan, scanTimeout)
		}
		t.Logf("scan failed after %s: %s", time.Since(start).Round(time.Millisecond), sc.Scan.Error)
		// A new trigger starts a scan (202), not 409.
		code, body, _ := s.do("POST", "/v1/scans", "application/json", []byte(`{"source":"slow"}`))
		if code != http.StatusAccepted {
			t.Fatalf("new trigger after the timed-out scan: %d %s", code, body)
		}
		var again store.Scan
		json.Unmarshal(body, &again)
		s.waitScan(again.ID)
		s.stillServing("scans past scanTimeout", examples)
	})
}

// scanDetailJSON is GET /v1/scans/{id}.
type scanDetailJSON struct {
	Scan   store.Scan     `json:"scan"`
	Report *report.Report `json:"report"`
}

// scan triggers a scan of source and waits for it to end.
func (s *realServer) scan(source string) scanDetailJSON {
	s.t.Helper()
	code, body, _ := s.do("POST", "/v1/scans", "application/json", []byte(`{"source":"`+source+`"}`))
	if code != http.StatusAccepted {
		s.t.Fatalf("POST /v1/scans %s: %d %s", source, code, body)
	}
	var sc store.Scan
	if err := json.Unmarshal(body, &sc); err != nil {
		s.t.Fatal(err)
	}
	return s.waitScan(sc.ID)
}

func (s *realServer) waitScan(id int64) scanDetailJSON {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		code, body, _ := s.do("GET", fmt.Sprintf("/v1/scans/%d", id), "", nil)
		var d scanDetailJSON
		if code == http.StatusOK && json.Unmarshal(body, &d) == nil && d.Scan.Status != store.Running {
			return d
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.t.Fatalf("scan %d still running after 60s", id)
	return scanDetailJSON{}
}
