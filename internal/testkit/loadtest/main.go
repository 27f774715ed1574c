// Command loadtest measures the verifier service's latency and memory on
// 127.0.0.1.
//
// It measures the verifier service on 127.0.0.1 (run by
// scripts/bench-serve.sh, part of `make bench`):
//
//   - cached POST /v1/verify {"ref": …}: latency percentiles at a fixed
//     request rate (open loop: requests leave on schedule whether or not
//     earlier ones have returned), after one uncached request;
//   - POST /v1/verify with a .tar.gz tree: the server's resident memory while
//     N uploads arrive at once, and their latencies.
//
// The server runs in a child process (this binary with -serve), so its
// memory is measured alone. Trees are verified by the real engine
// (pkg/verify); registry artifacts by a stand-in that answers at once, as
// only the cached path is measured.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/pinseal/pinseal/internal/app/service/server"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

const benchRepo = "127.0.0.1:5000/bench/core-cluster-api"

func main() {
	render.MaybeRunChild()
	serve := flag.String("serve", "", "run as the server child with this data directory")
	rate := flag.Int("rate", 200, "cached verify requests per second")
	dur := flag.Duration("duration", 10*time.Second, "how long to send cached verify requests")
	uploads := flag.Int("uploads", 100, "concurrent tar uploads")
	packages := flag.Int("packages", 4, "packages in the uploaded tree")
	size := flag.String("size", "1MiB", "size of each package's components YAML")
	flag.Parse()
	if *serve != "" {
		if err := runServer(*serve); err != nil {
			fmt.Fprintln(os.Stderr, "loadtest server:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*rate, *dur, *uploads, *packages, *size); err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// engine verifies trees with pkg/verify and answers artifacts at once.
type engine struct{}

func (engine) CheckTree(ctx context.Context, root string, _ server.CheckOptions) (*report.Report, error) {
	_, r, err := verify.Run(ctx, root, verify.Options{})
	return r, err
}

func (engine) Resolve(context.Context, string) (string, error) {
	return "", errors.New("the load test sends references by digest")
}

func (engine) VerifyArtifact(_ context.Context, ref string, _ server.VerifyOptions) (*report.Report, error) {
	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		Tool:          report.Tool{Name: "verifier", Version: "loadtest"},
		Root:          ref,
		Findings:      []report.Finding{},
		Packages: []report.PackageSummary{{Path: ".", Namespace: "cozy-cluster-api", Providers: []report.ProviderSummary{
			{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1-core", ConfigMap: "v1.10.1-core", Artifact: ref},
		}}},
	}
	r.Tally()
	return r, nil
}

func runServer(dataDir string) error {
	cfg := &server.Config{
		Listen:     "127.0.0.1:0",
		DataDir:    dataDir,
		Registries: []string{"127.0.0.1:5000/bench"},
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv, err := server.New(ctx, cfg, engine{}, log)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	return srv.Run(ctx, ln)
}

func run(rate int, dur time.Duration, uploads, packages int, sizeText string) error {
	size, err := gentree.ParseSize(sizeText)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "pinseal-loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// The uploaded tree: a clean synthetic tree, as a .tar.gz in memory.
	res, err := gentree.Generate(filepath.Join(tmp, "tree"), gentree.Options{Packages: packages, Size: size, Seed: 1})
	if err != nil {
		return err
	}
	upload, files, err := tarGz(res.Root)
	if err != nil {
		return err
	}

	token := randomToken()
	child := exec.Command(os.Args[0], "-serve", filepath.Join(tmp, "data"))
	child.Env = append(os.Environ(), server.TokensEnv+"="+token)
	child.Stderr = os.Stderr
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		return err
	}
	defer func() {
		child.Process.Signal(syscall.SIGTERM)
		child.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		return fmt.Errorf("server child did not start: %q %v", line, err)
	}
	base := "http://" + strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
	pid := child.Process.Pid

	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: time.Minute,
	}}
	post := func(contentType string, body []byte) (int, []byte, time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/verify", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", "Bearer "+token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, 0, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, data, time.Since(start), err
	}

	fmt.Printf("server: pid %d at %s; RSS at start %s\n", pid, base, mib(rss(pid, "VmRSS")))

	// Cached verify at a fixed rate.
	refBody, _ := json.Marshal(map[string]string{"ref": benchRepo + "@sha256:" + strings.Repeat("ab", 32)})
	if code, body, d, err := post("application/json", refBody); err != nil || code != http.StatusOK {
		return fmt.Errorf("first verify: %d %s %v", code, body, err)
	} else {
		fmt.Printf("cached verify: first (uncached) request %s\n", ms(d))
	}
	n := int(dur.Seconds() * float64(rate))
	lat := make([]time.Duration, n)
	failures := make([]string, 0)
	var mu sync.Mutex
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, d, err := post("application/json", refBody)
			lat[i] = d
			if err != nil || code != http.StatusOK || !bytes.Contains(body, []byte(`"passed":true`)) {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%d %v %.80s", code, err, body))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Printf("cached verify: %d requests in %s (%.0f req/s offered %d/s), %d failed\n",
		n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), rate, len(failures))
	p50, p90, p99, pmax := percentiles(lat)
	fmt.Printf("cached verify latency (client): p50 %s  p90 %s  p99 %s  max %s   (target p99 <= 5 ms: %s)\n",
		ms(p50), ms(p90), ms(p99), ms(pmax), verdict(p99 <= 5*time.Millisecond))
	if q, err := serverQuantile(client, base, token, 0.99); err != nil {
		fmt.Printf("cached verify latency (server): %v\n", err)
	} else {
		fmt.Printf("cached verify latency (server, pinseal_http_request_duration_seconds): p99 <= %s\n", ms(q))
	}
	fmt.Printf("load average %s on %d cores (other work on the machine inflates the tail)\n", loadAverage(), runtime.NumCPU())
	if len(failures) > 0 {
		return fmt.Errorf("cached verify failures, first: %s", failures[0])
	}

	// Concurrent uploads.
	before := rss(pid, "VmRSS")
	fmt.Printf("uploads: %d at once of a %d-package tree (%d files, %s uncompressed, %s as .tar.gz); RSS before %s\n",
		uploads, packages, files.count, mib(files.bytes), mib(int64(len(upload))), mib(before))
	peak := before
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
				if v := rss(pid, "VmRSS"); v > peak {
					peak = v
				}
			}
		}
	}()
	ulat := make([]time.Duration, uploads)
	ufail := []string{}
	gate := make(chan struct{})
	for i := range uploads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			code, body, d, err := post("application/gzip", upload)
			ulat[i] = d
			var r report.Report
			if err == nil && code == http.StatusOK {
				err = json.Unmarshal(body, &r)
			}
			if err != nil || code != http.StatusOK || !r.Summary.Passed || r.Summary.Packages != packages {
				mu.Lock()
				ufail = append(ufail, fmt.Sprintf("%d %v %.200s", code, err, body))
				mu.Unlock()
			}
		}()
	}
	ustart := time.Now()
	close(gate)
	wg.Wait()
	uelapsed := time.Since(ustart)
	close(stopSampling)
	<-sampled
	p50, _, p99, pmax = percentiles(ulat)
	fmt.Printf("uploads: %d done in %s, %d failed; latency p50 %s  p99 %s  max %s\n",
		uploads, uelapsed.Round(time.Millisecond), len(ufail), ms(p50), ms(p99), ms(pmax))
	fmt.Printf("uploads: server RSS peak %s (sampled every 5 ms; VmHWM %s), %s above the %s before (bounded by limits.maxConcurrentVerifies = 4)\n",
		mib(peak), mib(rss(pid, "VmHWM")), mib(peak-before), mib(before))
	if len(ufail) > 0 {
		return fmt.Errorf("upload failures, first: %s", ufail[0])
	}
	return nil
}

type treeStats struct {
	count int
	bytes int64
}

// tarGz packs dir (regular files and directories) into a .tar.gz.
func tarGz(dir string) ([]byte, treeStats, error) {
	var buf bytes.Buffer
	var st treeStats
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr.Name = filepath.ToSlash(rel)
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		st.count++
		if !info.Mode().IsRegular() {
			return nil
		}
		st.bytes += info.Size()
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	return buf.Bytes(), st, err
}

// rss reads a size field (VmRSS, VmHWM) of /proc/PID/status in bytes.
func rss(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// serverQuantile reads the server's request duration histogram of
// POST /v1/verify and returns the upper bound of the bucket holding quantile q.
func serverQuantile(client *http.Client, base, token string, q float64) (time.Duration, error) {
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	type bucket struct {
		le    float64
		count float64
	}
	var bs []bucket
	prefix := `pinseal_http_request_duration_seconds_bucket{method="POST",route="/v1/verify",le="`
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		le, val, _ := strings.Cut(rest, `"} `)
		l, err1 := strconv.ParseFloat(le, 64)
		c, err2 := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err1 == nil && err2 == nil {
			bs = append(bs, bucket{l, c})
		}
	}
	if len(bs) == 0 {
		return 0, errors.New("no histogram")
	}
	total := bs[len(bs)-1].count
	for _, b := range bs {
		if b.count >= q*total {
			return time.Duration(b.le * float64(time.Second)), nil
		}
	}
	return 0, errors.New("quantile beyond the last bucket")
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

func percentiles(ds []time.Duration) (p50, p90, p99, max time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.90), at(0.99), s[len(s)-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func randomToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}
