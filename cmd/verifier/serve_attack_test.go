package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/server"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/internal/testkit/untartest"
	"github.com/pinseal/pinseal/pkg/report"
)

// The tests in this file attack a real `verifier serve` process, built from
// this package, and after each attack check that the same process still
// verifies a clean upload of examples/ within a few seconds and that its
// resident memory stays under 1 GiB.

type serveProc struct {
	*serveProcess
	token, dataDir string
	clean          []byte // examples/ as .tar.gz
}

const attackToken = "attack-test-token-0123456789"

// startServe runs `verifier serve` with a config of the example tree as an
// on-demand source, limits and extra YAML; prepare runs on the data
// directory before the start.
func startServe(t *testing.T, limits, extra string, prepare func(dataDir string)) *serveProc {
	t.Helper()
	dir := t.TempDir()
	examples, _ := filepath.Abs("../../examples")
	dataDir := filepath.Join(dir, "data")
	if prepare != nil {
		os.MkdirAll(filepath.Join(dataDir, "uploads"), 0o700)
		prepare(dataDir)
	}
	cfg := fmt.Sprintf("listen: 127.0.0.1:0\ndataDir: %s\npublicReads: true\nsources:\n- name: examples\n  path: %s\nlimits: {%s}\n%s",
		dataDir, examples, limits, extra)
	cfgFile := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{token: attackToken, dataDir: dataDir}
	p.serveProcess = startServeProcess(t, cfgFile, serveProcOptions{env: []string{server.TokensEnv + "=" + attackToken}})
	p.clean = tarGzDir(t, examples)
	return p
}

var httpClient = &http.Client{Timeout: 2 * time.Minute}

// post sends body to /v1/verify as application/gzip.
func (p *serveProc) post(t *testing.T, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	return p.postTo(t, "/v1/verify", body, hdr)
}

// postTo sends body to path as application/gzip, with the token, and the
// headers in hdr ("" deletes one).
func (p *serveProc) postTo(t *testing.T, path string, body []byte, hdr map[string]string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.base+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/gzip")
	req.Header.Set("Authorization", "Bearer "+p.token)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

func (p *serveProc) rss(t *testing.T) int64 { return p.memStatus(t, "VmRSS") }

// stillServes: after an attack the same process verifies a clean upload of
// examples/ with 200 within a few seconds, and its RSS is under 1 GiB.
func (p *serveProc) stillServes(t *testing.T, after string) {
	t.Helper()
	start := time.Now()
	resp, body, err := p.post(t, p.clean, nil)
	if err != nil {
		t.Fatalf("after %s: clean upload: %v", after, err)
	}
	var rep report.Report
	json.Unmarshal(body, &rep)
	if resp.StatusCode != http.StatusOK || rep.Summary.Packages == 0 || !rep.Summary.Passed {
		t.Fatalf("after %s: clean upload of examples/: %d %.300s", after, resp.StatusCode, body)
	}
	// A 200 is an answer within limits.requestTimeout; how fast a busy
	// machine verifies is not the promise.
	t.Logf("after %s: the clean upload answered in %s", after, time.Since(start).Round(time.Millisecond))
	if rss := p.rss(t); rss >= 1<<30 {
		t.Fatalf("after %s: server RSS %d MiB, want under 1 GiB", after, rss>>20)
	}
}

func randomMethod() string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, 10)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(letters))))
		b[i] = letters[n.Int64()]
	}
	return "X" + string(b)
}

// TestServeAttackMetricsCardinality: 3,000 unauthenticated requests with
// made-up methods and paths add no series to /metrics.
func TestServeAttackMetricsCardinality(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := startServe(t, "", "", nil)
	metrics := func() []byte {
		resp, err := http.Get(p.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	p.stillServes(t, "start")
	before := len(metrics())

	const n, workers = 3000, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				path := "/v1/verify"
				if i%2 == 1 {
					path = "/" + randomMethod()
				}
				req, _ := http.NewRequest(randomMethod(), p.base+path, nil)
				resp, err := httpClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				codes[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	m := metrics()
	series := 0
	for _, line := range strings.Split(string(m), "\n") {
		if strings.HasPrefix(line, "pinseal_http_requests_total{") {
			series++
			if strings.Contains(line, `method="X`) {
				t.Fatalf("a made-up method became a label value: %s", line)
			}
		}
	}
	t.Logf("/metrics: %d bytes before, %d after %d requests with made-up methods (answers %v); %d request series",
		before, len(m), n, codes, series)
	if len(m) > before+16<<10 || series > 10 {
		t.Fatalf("/metrics grew from %d to %d bytes, %d pinseal_http_requests_total series", before, len(m), series)
	}
	if !bytes.Contains(m, []byte(`method="other",route="unmatched"`)) && !bytes.Contains(m, []byte(`method="other",route="/v1/verify"`)) {
		t.Fatalf("the requests are not counted under method=\"other\":\n%s", m)
	}
	p.stillServes(t, "3,000 made-up methods")
}

// deepTar is a .tar.gz whose entries make many directories: a path of
// depth directories per entry, entries of them, each under its own top.
func deepTar(t *testing.T, entries, depth int) []byte {
	es := make([]untartest.Entry, entries)
	for i := range es {
		es[i] = untartest.File(fmt.Sprintf("t%d/", i)+strings.Repeat("d/", depth-2)+"f", "x")
	}
	return untartest.TarGz(t, es...)
}

// TestServeAttackTarDirectories: uploads that make unbounded directory
// trees (one very deep path; many entries under the entry count that make
// many directories; a flood of PAX global headers) are refused at once, and
// leave nothing behind. A tree 20,000 directories deep left in the upload
// directory by an older server is removed at start-up.
func TestServeAttackTarDirectories(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	left := ""
	p := startServe(t, "maxTarFiles: 2000", "", func(dataDir string) {
		left = filepath.Join(dataDir, "uploads", "verify-left")
		os.Mkdir(left, 0o700)
		untartest.DeepTree(t, left, 20000)
	})
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Fatalf("the deep tree an older server left in the upload directory is still there: %v", err)
	}
	p.stillServes(t, "start")

	var globals []untartest.Entry
	for i := range 3000 {
		globals = append(globals, untartest.Entry{Name: fmt.Sprintf("g%d", i), Type: tar.TypeXGlobalHeader})
	}
	attacks := []struct {
		name string
		body []byte
		want string
	}{
		// 60,000 bytes of path in a PAX record: 30,000 directories.
		{"one deep path", untartest.TarGz(t, untartest.File(strings.Repeat("a/", 30000)+"f", "x")), "maxTarPathBytes"},
		{"deep but short path", untartest.TarGz(t, untartest.File(strings.Repeat("a/", 200)+"f", "x")), "maxTarDepth"},
		// 100 entries, 3,100 directories: under maxTarFiles by entries.
		{"many directories", deepTar(t, 100, 32), "directories"},
		{"pax global headers", untartest.TarGz(t, globals...), "maxTarFiles"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			if len(a.body) > 64<<10 {
				t.Fatalf("the attack is %d bytes; it should be small", len(a.body))
			}
			start := time.Now()
			resp, body, err := p.post(t, a.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), a.want) {
				t.Fatalf("%d bytes: answer %d %s, want 413 naming %s", len(a.body), resp.StatusCode, body, a.want)
			}
			t.Logf("%d bytes refused in %s: %s", len(a.body), time.Since(start).Round(time.Millisecond), body)
			if es, _ := os.ReadDir(filepath.Join(p.dataDir, "uploads")); len(es) != 0 {
				t.Fatalf("left in the upload directory: %v", es)
			}
			p.stillServes(t, a.name)
		})
	}
}

// TestServeAttackStalledUploads: clients that send an upload's headers and
// then nothing, more of them than there are verification slots, do not
// keep a clean upload from 200; each stalled one ends at the request
// timeout with 408.
func TestServeAttackStalledUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := startServe(t, "maxConcurrentVerifies: 1, requestTimeout: 20s", "", nil)
	p.stillServes(t, "start")
	var conns []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/gzip\r\nContent-Length: 100000\r\n\r\n", p.token)
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond) // the server has read the headers
	start := time.Now()
	p.stillServes(t, "4 stalled uploads (1 slot)")
	t.Logf("clean upload beside 4 stalled ones: 200 in %s", time.Since(start).Round(time.Millisecond))
	conns[0].SetReadDeadline(time.Now().Add(40 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conns[0]), nil)
	if err != nil {
		t.Fatalf("the stalled upload got no answer: %v", err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled upload: %d, want 408", resp.StatusCode)
	}
	p.stillServes(t, "stalled uploads timed out")
}

// bombUpload is a .tar.gz whose first entry declares 1 GiB, followed by
// 4.6 MB of incompressible bytes: refused on its first header.
func bombUpload(t *testing.T) []byte {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	if err := tw.WriteHeader(&tar.Header{Name: "big", Typeflag: tar.TypeReg, Size: 1 << 30, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 4600<<10)
	rand.Read(noise)
	tw.Write(noise)
	return untartest.Gzip(t, tarBuf.Bytes())
}

// TestServeAttackRefusalsReadable: every refusal reaches an ordinary
// client, curl --data-binary and Go's http.Client (with and without
// "Expect: 100-continue"), over several attempts in a row.
func TestServeAttackRefusalsReadable(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		testpeer.Missing(t, "curl not installed (apt-get install curl): %v", err)
	}
	p := startServe(t, "maxBodyBytes: 8388608", "", nil)
	p.stillServes(t, "start")
	dir := t.TempDir()
	bomb := bombUpload(t)
	notGzip := make([]byte, 4600<<10)
	rand.Read(notGzip)
	tooBig := make([]byte, 9<<20)
	rand.Read(tooBig)
	badJSON := bytes.Repeat([]byte("x"), 4600<<10)
	const gz, js = "application/gzip", "application/json"
	cases := []struct {
		name   string
		path   string
		ctype  string
		body   []byte
		token  string
		want   int
		msg    string
		noGoNE bool // Go's client without Expect: not promised (docs/service.md, "Refusals reach the client")
	}{
		{"1 GiB entry", "/v1/verify", gz, bomb, attackToken, 413, "maxTarBytes", false},
		{"not gzip", "/v1/verify", gz, notGzip, attackToken, 400, "gzip", false},
		{"not JSON", "/v1/verify", js, badJSON, attackToken, 400, "request body", false},
		{"no token", "/v1/verify", gz, bomb, "", 401, "bearer token", false},
		{"wrong token", "/v1/verify", gz, bomb, "wrong-token-0123456789", 403, "not accepted", false},
		{"body over maxBodyBytes", "/v1/verify", gz, tooBig, attackToken, 413, "maxBodyBytes", true},
		{"no such path", "/v1/nope", gz, bomb, attackToken, 404, "no such path", false},
		{"method not allowed", "/v1/sources", gz, bomb, attackToken, 405, "not allowed", false},
	}
	const attempts = 8
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, "body")
			if err := os.WriteFile(file, c.body, 0o600); err != nil {
				t.Fatal(err)
			}
			for i := range attempts {
				args := []string{"-sS", "--max-time", "60", "-o", filepath.Join(dir, "out"), "-w", "%{http_code}",
					"-H", "Content-Type: " + c.ctype, "--data-binary", "@" + file, p.base + c.path}
				if c.token != "" {
					args = append(args, "-H", "Authorization: Bearer "+c.token)
				}
				out, err := exec.Command(curl, args...).Output()
				body, _ := os.ReadFile(filepath.Join(dir, "out"))
				if err != nil || string(out) != strconv.Itoa(c.want) || !strings.Contains(string(body), c.msg) {
					t.Fatalf("curl attempt %d: %v, status %q, body %.200q; want %d naming %q", i+1, err, out, body, c.want, c.msg)
				}
			}
			for _, expect := range []bool{false, true} {
				if !expect && c.noGoNE {
					continue
				}
				for i := range attempts {
					hdr := map[string]string{"Authorization": "Bearer " + c.token, "Content-Type": c.ctype}
					if c.token == "" {
						hdr["Authorization"] = ""
					}
					if expect {
						hdr["Expect"] = "100-continue"
					}
					resp, body, err := p.postTo(t, c.path, c.body, hdr)
					if err != nil || resp.StatusCode != c.want || !strings.Contains(string(body), c.msg) {
						code := 0
						if resp != nil {
							code = resp.StatusCode
						}
						t.Fatalf("Go client (Expect %v) attempt %d: %v, status %d, body %.200q; want %d", expect, i+1, err, code, body, c.want)
					}
				}
			}
			p.stillServes(t, c.name)
		})
	}
}

// TestServeRetention: with retention maxScans 2, the service keeps the two
// newest scans of a source.
func TestServeRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := startServe(t, "", "retention: {maxScans: 2}\n", nil)
	c := servertest.NewClient(t, p.base, p.token)
	scans := func() []store.Scan {
		var list struct{ Scans []store.Scan }
		c.GetJSON("/v1/scans?source=examples", http.StatusOK, &list)
		return list.Scans
	}
	var ids []int64
	for range 4 {
		resp, body := c.PostJSON("/v1/scans", map[string]string{"source": "examples"})
		var sc store.Scan
		if err := json.Unmarshal(body, &sc); err != nil || resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST /v1/scans: %d %s", resp.StatusCode, body)
		}
		ids = append(ids, sc.ID)
		servertest.WaitFor(t, fmt.Sprintf("scan %d to end", sc.ID), func() bool {
			list := scans()
			return len(list) > 0 && list[0].ID == sc.ID && list[0].Status != store.Running
		})
	}
	// Retention runs after a scan has ended: wait for it, then require
	// exactly the two newest.
	kept := func(list []store.Scan) bool {
		return len(list) == 2 && list[0].ID == ids[3] && list[1].ID == ids[2]
	}
	servertest.WaitFor(t, "retention to keep the two newest scans", func() bool { return len(scans()) <= 2 })
	if list := scans(); !kept(list) {
		t.Fatalf("scans after 4 with maxScans 2: %+v, want %d and %d", list, ids[3], ids[2])
	}
	if resp, _ := c.Get(fmt.Sprintf("/v1/scans/%d", ids[0])); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET the first scan: %d, want 404 (deleted by retention)", resp.StatusCode)
	}
}
