package server

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/internal/testkit/untartest"

	"github.com/pinseal/pinseal/api"
	"github.com/pinseal/pinseal/internal/app/service/scan"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/report"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

func TestOperationsEndpoints(t *testing.T) {
	ts := startServer(t, testConfig(t), &fakeEngine{})
	c := ts.withToken("")

	c.GetJSON("/healthz", http.StatusOK, nil)
	var ready map[string]string
	c.GetJSON("/readyz", http.StatusOK, &ready)
	if ready["status"] != "ready" {
		t.Fatalf("readyz %v", ready)
	}
	resp, body := c.Get("/openapi.yaml")
	wantStatus(t, "openapi.yaml", resp, body, http.StatusOK)
	if !bytes.Equal(body, api.OpenAPI) || resp.Header.Get("Content-Type") != "application/yaml" {
		t.Fatal("/openapi.yaml is not api/openapi.yaml")
	}
	var doc map[string]any
	if err := yaml.Unmarshal(body, &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi.yaml: %v, version %v", err, doc["openapi"])
	}
	resp, body = c.Get("/report.schema.json")
	wantStatus(t, "report.schema.json", resp, body, http.StatusOK)
	if !bytes.Equal(body, api.ReportSchema) {
		t.Fatal("/report.schema.json is not api/report.schema.json")
	}
	// An unknown path or method: JSON errors (no operation in the
	// document describes them, so they are checked here).
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/nope", http.StatusNotFound},
		{http.MethodDelete, "/v1/scans", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tt.method, ts.Base+tt.path, nil)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		json.NewDecoder(r.Body).Decode(&e)
		r.Body.Close()
		if r.StatusCode != tt.want || r.Header.Get("Content-Type") != "application/json" || e.Error == "" {
			t.Fatalf("%s %s: %d %q %+v, want %d with a JSON error", tt.method, tt.path, r.StatusCode, r.Header.Get("Content-Type"), e, tt.want)
		}
	}
}

func TestReadyzBeforeRun(t *testing.T) {
	s, err := New(context.Background(), testConfig(t), &fakeEngine{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	var st map[string]string
	newClient(t, hs.URL, "").GetJSON("/readyz", http.StatusServiceUnavailable, &st)
	if !strings.Contains(st["status"], "not ready") {
		t.Fatalf("readyz before Run: %v", st)
	}
}

func TestAuth(t *testing.T) {
	t.Setenv(TokensEnv, "env-token-0123456789abcdef, second-env-token-0123456789")
	private := testConfig(t)
	ts := startServer(t, private, &fakeEngine{})
	publicCfg := testConfig(t)
	publicCfg.PublicReads = true
	pub := startServer(t, publicCfg, &fakeEngine{})

	tests := []struct {
		name   string
		srv    *testServer
		method string
		path   string
		token  string
		header string // raw Authorization header, overrides token
		want   int
	}{
		{"POST without token", ts, http.MethodPost, "/v1/scans", "", "", http.StatusUnauthorized},
		{"POST with wrong token", ts, http.MethodPost, "/v1/scans", otherToken, "", http.StatusForbidden},
		{"POST with basic auth", ts, http.MethodPost, "/v1/scans", "", "Basic dXNlcjpwYXNz", http.StatusUnauthorized},
		{"POST with file token", ts, http.MethodPost, "/v1/scans", testToken, "", http.StatusAccepted},
		{"POST with env token", pub, http.MethodPost, "/v1/scans", "second-env-token-0123456789", "", http.StatusAccepted},
		{"POST on public server without token", pub, http.MethodPost, "/v1/scans", "", "", http.StatusUnauthorized},
		{"private read without token", ts, http.MethodGet, "/v1/sources", "", "", http.StatusUnauthorized},
		{"private read with wrong token", ts, http.MethodGet, "/v1/findings", otherToken, "", http.StatusForbidden},
		{"private read with token", ts, http.MethodGet, "/v1/sources", testToken, "", http.StatusOK},
		{"private dashboard without token", ts, http.MethodGet, "/", "", "", http.StatusUnauthorized},
		{"private metrics without token", ts, http.MethodGet, "/metrics", "", "", http.StatusUnauthorized},
		{"public read without token", pub, http.MethodGet, "/v1/sources", "", "", http.StatusOK},
		{"public dashboard without token", pub, http.MethodGet, "/", "", "", http.StatusOK},
		{"health is always public", ts, http.MethodGet, "/healthz", "", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader(`{"source":"tree"}`)
			}
			req, _ := http.NewRequest(tt.method, tt.srv.Base+tt.path, body)
			req.Header.Set("Content-Type", "application/json")
			if tt.header != "" {
				req.Header.Set("Authorization", tt.header)
			} else if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			servertest.ValidateResponse(t, req, resp, data)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, data, tt.want)
			}
			if tt.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a WWW-Authenticate: Bearer challenge")
			}
			if tt.want == http.StatusAccepted {
				var sc store.Scan
				json.Unmarshal(data, &sc)
				tt.srv.waitScan(sc.ID)
			}
		})
	}
}

func TestLoadTokens(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("# comment\n\n  "+testToken+"  \n"+otherToken+"\n"), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	tests := []struct {
		name, file, env string
		n               int
		wantErr         string
	}{
		{"file", good, "", 2, ""},
		{"file and env", good, "a-third-token-0123456789\n", 3, ""},
		{"env only", "", "x-token-0123456789abc,y-token-0123456789abc", 2, ""},
		{"none", "", "", 0, ""},
		{"short token in file", short, "", 0, "shorter than"},
		{"short token in env", "", "tiny", 0, "shorter than"},
		{"missing file", filepath.Join(dir, "nope"), "", 0, "tokens file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := loadTokens(tt.file, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "abc\n") {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(ts) != tt.n {
				t.Fatalf("%d tokens, %v; want %d", len(ts), err, tt.n)
			}
			if tt.file == good && (!ts.match(testToken) || !ts.match(otherToken) || ts.match(testToken+"x") || ts.match("")) {
				t.Fatal("match is wrong")
			}
		})
	}
}

// scriptedEngine returns reports in order for the source scans.
func scriptedEngine(reports ...*report.Report) *fakeEngine {
	var n atomic.Int32
	return &fakeEngine{check: func(context.Context, string, CheckOptions) (*report.Report, error) {
		i := int(n.Add(1)) - 1
		if i >= len(reports) {
			i = len(reports) - 1
		}
		r := *reports[i]
		return &r, nil
	}}
}

var (
	blobYAML = report.Finding{Check: "blob-yaml", Severity: report.Error, Package: "packages/core", Provider: "CoreProvider/cluster-api",
		File: "files/core-components.yaml", Line: 12, Message: "the blob differs from the YAML at line 12"}
	blobHeader = report.Finding{Check: "blob-header", Severity: report.Error, Package: "packages/core", Provider: "CoreProvider/cluster-api",
		File: "files/components.gz", Message: "the gzip header embeds the name \"core-components.yaml\" and a time", Hint: "rebuild with gzip -9 -n"}
	pinMissing = report.Finding{Check: "pin-missing", Severity: report.Warning, Package: "packages/talos", File: "Makefile", Line: 3,
		Message: "upstream URL without a SHA-256 pin"}
)

func TestScans(t *testing.T) {
	cfg := testConfig(t)
	cfg.Sources = append(cfg.Sources, SourceConfig{Name: "second", Path: cfg.Sources[0].Path})
	ts := startServer(t, cfg, scriptedEngine(newReport(blobYAML, blobHeader), newReport(blobYAML, pinMissing)))

	var sources struct{ Sources []sourceInfo }
	ts.GetJSON("/v1/sources", http.StatusOK, &sources)
	if len(sources.Sources) != 2 || sources.Sources[0].Name != "tree" || sources.Sources[0].LastScan != nil {
		t.Fatalf("sources before any scan: %+v", sources)
	}

	// Scan 1: two new errors.
	resp, body := ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	wantStatus(t, "POST /v1/scans", resp, body, http.StatusAccepted)
	var sc1 store.Scan
	json.Unmarshal(body, &sc1)
	if resp.Header.Get("Location") != fmt.Sprintf("/v1/scans/%d", sc1.ID) || sc1.TriggeredBy != scan.ByAPI {
		t.Fatalf("scan %+v, Location %q", sc1, resp.Header.Get("Location"))
	}
	d1 := ts.waitScan(sc1.ID)
	if d1.Scan.Status != store.Succeeded || d1.Report == nil || len(d1.New) != 2 || len(d1.Resolved) != 0 || d1.Scan.Errors != 2 {
		t.Fatalf("scan 1: %+v", d1)
	}

	// Scan 2: blob-header fixed, pin-missing new, blob-yaml still there.
	resp, body = ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	wantStatus(t, "POST /v1/scans", resp, body, http.StatusAccepted)
	var sc2 store.Scan
	json.Unmarshal(body, &sc2)
	d2 := ts.waitScan(sc2.ID)
	if len(d2.New) != 1 || d2.New[0].Check != "pin-missing" || len(d2.Resolved) != 1 || d2.Resolved[0].Check != "blob-header" {
		t.Fatalf("scan 2 new %+v resolved %+v; want pin-missing new, blob-header resolved", d2.New, d2.Resolved)
	}

	var findings struct{ Findings []store.Finding }
	ts.GetJSON("/v1/findings?source=tree", http.StatusOK, &findings)
	if len(findings.Findings) != 2 {
		t.Fatalf("open findings %+v, want blob-yaml and pin-missing", findings.Findings)
	}
	ts.GetJSON("/v1/findings?severity=error", http.StatusOK, &findings)
	if len(findings.Findings) != 1 || findings.Findings[0].Check != "blob-yaml" ||
		findings.Findings[0].FirstScan != sc1.ID || findings.Findings[0].LastScan != sc2.ID ||
		findings.Findings[0].LastSeen.Before(findings.Findings[0].FirstSeen) {
		t.Fatalf("open errors %+v, want blob-yaml first seen in scan %d, last in %d", findings.Findings, sc1.ID, sc2.ID)
	}

	var list struct{ Scans []store.Scan }
	ts.GetJSON("/v1/scans?source=tree&limit=1", http.StatusOK, &list)
	if len(list.Scans) != 1 || list.Scans[0].ID != sc2.ID {
		t.Fatalf("latest scan %+v, want %d", list.Scans, sc2.ID)
	}
	ts.GetJSON("/v1/scans", http.StatusOK, &list)
	if len(list.Scans) != 2 {
		t.Fatalf("scans %+v", list.Scans)
	}
	ts.GetJSON("/v1/sources", http.StatusOK, &sources)
	if s := sources.Sources[0]; s.LastScan == nil || s.LastScan.ID != sc2.ID || s.LastSuccessAt == nil || s.Running {
		t.Fatalf("source after scans: %+v", s)
	}

	for _, tt := range []struct {
		path string
		want int
	}{
		{"/v1/scans?limit=0", http.StatusBadRequest},
		{"/v1/scans?limit=abc", http.StatusBadRequest},
		{"/v1/scans?source=nope", http.StatusNotFound},
		{"/v1/scans/abc", http.StatusBadRequest},
		{"/v1/scans/0", http.StatusBadRequest},
		{"/v1/scans/999", http.StatusNotFound},
		{"/v1/findings?severity=fatal", http.StatusBadRequest},
		{"/v1/findings?source=nope", http.StatusNotFound},
	} {
		resp, body := ts.Get(tt.path)
		wantStatus(t, "GET "+tt.path, resp, body, tt.want)
	}
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"source":"nope"}`, http.StatusNotFound},
		{`{"source":"tree","extra":1}`, http.StatusBadRequest},
		{`{"source":`, http.StatusBadRequest},
		{`{"source":"tree"}{}`, http.StatusBadRequest},
	} {
		resp, body := ts.Do(http.MethodPost, "/v1/scans", "application/json", strings.NewReader(tt.body))
		wantStatus(t, "POST /v1/scans "+tt.body, resp, body, tt.want)
	}

	// Metrics: scan duration, last success, open findings by source/check/severity, requests.
	resp, body = ts.Get("/metrics")
	wantStatus(t, "metrics", resp, body, http.StatusOK)
	for _, want := range []string{
		`pinseal_scan_duration_seconds_count{source="tree",status="succeeded"} 2`,
		`pinseal_scan_last_success_timestamp_seconds{source="tree"} `,
		`pinseal_open_findings{check="blob-yaml",severity="error",source="tree"} 1`,
		`pinseal_open_findings{check="pin-missing",severity="warning",source="tree"} 1`,
		`pinseal_http_requests_total{code="202",method="POST",route="/v1/scans"} 2`,
		`pinseal_http_request_duration_seconds_bucket{method="GET",route="/v1/scans/{id}",le=`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(string(body), `check="blob-header"`) {
		t.Error("metrics still count the resolved blob-header finding")
	}

	// The gauges survive a restart (they are loaded from the history).
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	ts2 := startServer(t, cfg, &fakeEngine{})
	_, body = ts2.Get("/metrics")
	if !strings.Contains(string(body), `pinseal_open_findings{check="blob-yaml",severity="error",source="tree"} 1`) {
		t.Error("open findings gauge not restored after restart")
	}
}

// blockingEngine's tree checks wait until released or cancelled.
type blockingEngine struct {
	fakeEngine
	started chan string
	release chan struct{}
}

func newBlockingEngine() *blockingEngine {
	b := &blockingEngine{started: make(chan string, 16), release: make(chan struct{})}
	b.check = func(ctx context.Context, root string, _ CheckOptions) (*report.Report, error) {
		b.started <- root
		select {
		case <-b.release:
			return newReport(blobYAML), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b
}

func TestScanConflictAndShutdown(t *testing.T) {
	eng := newBlockingEngine()
	cfg := testConfig(t)
	cfg.Limits.ShutdownTimeout = Duration(100 * time.Millisecond)
	ts := startServer(t, cfg, eng)

	resp, body := ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	wantStatus(t, "first scan", resp, body, http.StatusAccepted)
	var sc store.Scan
	json.Unmarshal(body, &sc)
	<-eng.started
	resp, body = ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	wantStatus(t, "second scan while the first runs", resp, body, http.StatusConflict)
	var conflict apiError
	json.Unmarshal(body, &conflict)
	if conflict.Scan != sc.ID {
		t.Fatalf("409 names scan %d, want %d", conflict.Scan, sc.ID)
	}
	var sources struct{ Sources []sourceInfo }
	ts.GetJSON("/v1/sources", http.StatusOK, &sources)
	if !sources.Sources[0].Running {
		t.Fatal("source not shown running")
	}

	// Shutdown gives up waiting after shutdownTimeout and records the scan failed.
	if err := ts.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	st, err := store.Open(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, _ := st.Scan(context.Background(), sc.ID)
	if got.Status != store.Failed || !strings.Contains(got.Error, "shut down") {
		t.Fatalf("scan after shutdown %+v, want failed because of the shutdown", got)
	}
}

func TestShutdownFinishesRunningScan(t *testing.T) {
	eng := newBlockingEngine()
	cfg := testConfig(t)
	ts := startServer(t, cfg, eng)
	resp, body := ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	wantStatus(t, "scan", resp, body, http.StatusAccepted)
	var sc store.Scan
	json.Unmarshal(body, &sc)
	<-eng.started
	stopped := make(chan error)
	go func() { stopped <- ts.stop() }()
	time.Sleep(50 * time.Millisecond) // let shutdown begin; the outcome does not depend on it
	close(eng.release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	st, _ := store.Open(context.Background(), cfg.DataDir)
	defer st.Close()
	if got, _ := st.Scan(context.Background(), sc.ID); got.Status != store.Succeeded {
		t.Fatalf("scan %+v, want it finished during the graceful shutdown", got)
	}
}

func TestScheduledScansAndWebhook(t *testing.T) {
	events := make(chan scan.Event, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		servertest.ValidateSchema(t, "WebhookEvent", body)
		var e scan.Event
		json.Unmarshal(body, &e)
		events <- e
	}))
	defer hook.Close()
	cfg := testConfig(t)
	cfg.Sources[0].Interval = Duration(time.Second)
	cfg.Webhook = &WebhookConfig{URL: hook.URL + "/hooks/pinseal"}
	ts := startServer(t, cfg, scriptedEngine(newReport(blobYAML)))

	var e scan.Event
	select {
	case e = <-events:
	case <-time.After(timebound.Hang):
		t.Fatal("no webhook call after the scheduled scan")
	}
	if e.Source != "tree" || e.Scan.TriggeredBy != scan.BySchedule || len(e.Findings) != 1 || e.Findings[0].Check != "blob-yaml" {
		t.Fatalf("event %+v", e)
	}
	// Later scans find nothing new: no more events; they are scheduled, not triggered.
	waitFor(t, "a second scheduled scan", func() bool {
		var list struct{ Scans []store.Scan }
		ts.GetJSON("/v1/scans?source=tree", http.StatusOK, &list)
		return len(list.Scans) >= 2 && list.Scans[0].Status == store.Succeeded
	})
	select {
	case e := <-events:
		t.Fatalf("webhook called without new error findings: %+v", e)
	default:
	}
}

func TestFailedScanRecorded(t *testing.T) {
	eng := &fakeEngine{check: func(context.Context, string, CheckOptions) (*report.Report, error) {
		return nil, errors.New("load packages: permission denied")
	}}
	ts := startServer(t, testConfig(t), eng)
	_, body := ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	var sc store.Scan
	json.Unmarshal(body, &sc)
	d := ts.waitScan(sc.ID)
	if d.Scan.Status != store.Failed || !strings.Contains(d.Scan.Error, "permission denied") || d.Report != nil {
		t.Fatalf("scan %+v", d)
	}
	// The scan's metrics are observed after its status is stored (scan's
	// Observe), so a loaded machine may show the status first.
	want := `pinseal_scan_duration_seconds_count{source="tree",status="failed"} 1`
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		_, body = ts.Get("/metrics")
		if strings.Contains(string(body), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("failed scan not in the duration histogram")
		}
	}
}

func TestVerifyRef(t *testing.T) {
	digest := "sha256:" + strings.Repeat("cd", 32)
	var mu sync.Mutex
	var verified []string
	unsigned := atomic.Bool{}
	unsigned.Store(true)
	eng := &fakeEngine{}
	eng.resolve = func(_ context.Context, ref string) (string, error) {
		if strings.Contains(ref, "missing") {
			return "", errors.New("MANIFEST_UNKNOWN")
		}
		return digest, nil
	}
	eng.verify = func(_ context.Context, ref string, opts VerifyOptions) (*report.Report, error) {
		mu.Lock()
		verified = append(verified, ref+" tag="+opts.Tag)
		mu.Unlock()
		fs := []report.Finding{{Check: "blob-header", Severity: report.Warning, Package: ".", Message: "gzip header not reproducible"}}
		if unsigned.Load() {
			fs = append(fs, report.Finding{Check: "signature", Severity: report.Error, Package: ".", Message: "no signature under the policy's keys"})
		}
		r := newReport(fs...)
		r.Root = ref
		return r, nil
	}
	ts := startServer(t, testConfig(t), eng)
	ref := "127.0.0.1:5000/capi/infrastructure-proxmox:v0.7.7-infraprovider-proxmox"
	pinned := "127.0.0.1:5000/capi/infrastructure-proxmox@" + digest

	// Not signed: a verdict that changes by itself (once signed), never
	// cached.
	var body []byte
	for i := range 2 {
		var resp *http.Response
		resp, body = ts.PostJSON("/v1/verify", map[string]string{"ref": ref})
		wantStatus(t, "verify", resp, body, http.StatusOK)
		var r report.Report
		json.Unmarshal(body, &r)
		if r.Summary.Passed || len(r.Findings) != 2 || resp.Header.Get("Pinseal-Cache") != "miss" || resp.Header.Get("Pinseal-Digest") != digest {
			t.Fatalf("verify #%d of the unsigned artifact: %s, headers %v", i, body, resp.Header)
		}
	}
	// The engine verifies the ref pinned by digest, told the tag it was
	// resolved from (the tag must be the artifact's release).
	if want := pinned + " tag=v0.7.7-infraprovider-proxmox"; len(verified) != 2 || verified[0] != want {
		t.Fatalf("engine verified %v, want %s", verified, want)
	}
	// Signed now: verified again, then cached.
	unsigned.Store(false)
	resp, body := ts.PostJSON("/v1/verify", map[string]string{"ref": ref})
	if resp.Header.Get("Pinseal-Cache") != "miss" || strings.Contains(string(body), "no signature") {
		t.Fatalf("after signing: cache %q, %s", resp.Header.Get("Pinseal-Cache"), body)
	}
	resp, body2 := ts.PostJSON("/v1/verify", map[string]string{"ref": ref})
	wantStatus(t, "verify again", resp, body2, http.StatusOK)
	if resp.Header.Get("Pinseal-Cache") != "hit" || !bytes.Equal(body, body2) {
		t.Fatalf("verify %s again: cache %q", ref, resp.Header.Get("Pinseal-Cache"))
	}
	// By digest: no tag to hold the artifact to, another verdict.
	resp, body = ts.PostJSON("/v1/verify", map[string]string{"ref": pinned})
	wantStatus(t, "verify by digest", resp, body, http.StatusOK)
	if resp.Header.Get("Pinseal-Cache") != "miss" || verified[len(verified)-1] != pinned+" tag=" {
		t.Fatalf("verify %s: cache %q, engine saw %v", pinned, resp.Header.Get("Pinseal-Cache"), verified)
	}
	if eng.verifies.Load() != 4 || eng.resolves.Load() != 4 {
		t.Fatalf("engine: %d verifications, %d resolutions; want 4, 4 (a digest needs no resolution)", eng.verifies.Load(), eng.resolves.Load())
	}
	// The same digest in another repository is another artifact: its
	// signatures live there.
	resp, body = ts.PostJSON("/v1/verify", map[string]string{"ref": "127.0.0.1:5000/capi/mirror/infrastructure-proxmox@" + digest})
	wantStatus(t, "verify the digest in another repository", resp, body, http.StatusOK)
	if resp.Header.Get("Pinseal-Cache") != "miss" || eng.verifies.Load() != 5 {
		t.Fatalf("the digest in another repository answered from the cache (%q, %d verifications)", resp.Header.Get("Pinseal-Cache"), eng.verifies.Load())
	}

	for _, tt := range []struct {
		name, contentType, body string
		want                    int
	}{
		{"outside the allowlist", "application/json", `{"ref":"evil.example/x/y:v1"}`, http.StatusUnprocessableEntity},
		{"allowed host, other path", "application/json", `{"ref":"127.0.0.1:5000/other/y:v1"}`, http.StatusUnprocessableEntity},
		{"docker hub by default", "application/json", `{"ref":"library/busybox:1"}`, http.StatusBadRequest},
		{"no tag", "application/json", `{"ref":"127.0.0.1:5000/capi/x"}`, http.StatusBadRequest},
		{"not a reference", "application/json", `{"ref":"http://127.0.0.1:5000/capi/x:v1"}`, http.StatusBadRequest},
		{"unknown field", "application/json", `{"ref":"127.0.0.1:5000/capi/x:v1","policy":"x"}`, http.StatusBadRequest},
		{"resolve fails", "application/json", `{"ref":"127.0.0.1:5000/capi/missing:v1"}`, http.StatusBadGateway},
		{"wrong content type", "text/plain", `hello`, http.StatusUnsupportedMediaType},
		{"no content type", "", `{}`, http.StatusUnsupportedMediaType},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := ts.Do(http.MethodPost, "/v1/verify", tt.contentType, strings.NewReader(tt.body))
			wantStatus(t, tt.name, resp, body, tt.want)
		})
	}
	if eng.verifies.Load() != 5 {
		t.Fatal("a refused request reached the engine")
	}
}

func TestVerifyRefSharesOneVerification(t *testing.T) {
	release := make(chan struct{})
	eng := &fakeEngine{}
	eng.verify = func(ctx context.Context, ref string, _ VerifyOptions) (*report.Report, error) {
		<-release
		return newReport(), nil
	}
	ts := startServer(t, testConfig(t), eng)
	var wg sync.WaitGroup
	codes := make(chan int, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := ts.PostJSON("/v1/verify", map[string]string{"ref": "registry.example/a/b:v1"})
			codes <- resp.StatusCode
		}()
	}
	waitFor(t, "the verification to start", func() bool { return eng.verifies.Load() == 1 })
	time.Sleep(50 * time.Millisecond) // let the others queue; the assertion below holds regardless
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Fatalf("status %d", c)
		}
	}
	if n := eng.verifies.Load(); n > 2 {
		t.Fatalf("%d verifications of one artifact for 8 concurrent requests", n)
	}
}

func TestVerifyEngineErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"not configured", fmt.Errorf("%w: no trusted keys", ErrNotConfigured), http.StatusServiceUnavailable},
		{"registry error", errors.New("GET manifest: 500"), http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := &fakeEngine{
				verify: func(context.Context, string, VerifyOptions) (*report.Report, error) { return nil, tt.err },
				check:  func(context.Context, string, CheckOptions) (*report.Report, error) { return nil, tt.err },
			}
			ts := startServer(t, testConfig(t), eng)
			resp, body := ts.PostJSON("/v1/verify", map[string]string{"ref": "registry.example/a/b:v1"})
			wantStatus(t, "verify ref", resp, body, tt.want)
			resp, body = ts.Do(http.MethodPost, "/v1/verify", "application/gzip", bytes.NewReader(untartest.TarGz(t, untartest.File("p/Chart.yaml", "name: p\n"))))
			wantStatus(t, "verify upload", resp, body, tt.want)
		})
	}
}

func TestRequestTimeout(t *testing.T) {
	eng := &fakeEngine{check: func(ctx context.Context, _ string, _ CheckOptions) (*report.Report, error) {
		<-ctx.Done() // never finishes on its own
		return nil, ctx.Err()
	}}
	cfg := testConfig(t)
	cfg.Limits.RequestTimeout = Duration(200 * time.Millisecond)
	ts := startServer(t, cfg, eng)
	resp, body := ts.Do(http.MethodPost, "/v1/verify", "application/gzip", bytes.NewReader(untartest.TarGz(t, untartest.File("p/Chart.yaml", "x"))))
	wantStatus(t, "slow verification", resp, body, http.StatusGatewayTimeout)
}

func TestVerifyUpload(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxTarFiles = 20
	cfg.Limits.MaxTarBytes = 1 << 20
	cfg.Limits.MaxBodyBytes = 256 << 10
	var roots []string
	var mu sync.Mutex
	eng := &fakeEngine{check: func(_ context.Context, root string, opts CheckOptions) (*report.Report, error) {
		mu.Lock()
		roots = append(roots, root)
		mu.Unlock()
		if opts.Registry != "" {
			t.Errorf("upload checked against registry %s", opts.Registry)
		}
		return treeReport(root)
	}}
	ts := startServer(t, cfg, eng)

	good := untartest.TarGz(t,
		untartest.Entry{Name: "packages/", Type: tar.TypeDir},
		untartest.File("packages/core/Chart.yaml", "name: core\n"),
		untartest.File("packages/core/files/BROKEN", "x"),
		untartest.File("packages/infra/Chart.yaml", "name: infra\n"),
		untartest.Entry{Name: "packages/infra/files/link.yaml", Type: tar.TypeSymlink, Linkname: "../Chart.yaml"},
		untartest.Entry{Name: "packages/infra/hard.yaml", Type: tar.TypeLink, Linkname: "packages/infra/Chart.yaml"},
	)
	resp, body := ts.Do(http.MethodPost, "/v1/verify", "application/gzip", bytes.NewReader(good))
	wantStatus(t, "upload", resp, body, http.StatusOK)
	var r report.Report
	json.Unmarshal(body, &r)
	if r.Root != "upload" || len(r.Packages) != 2 || r.Packages[0].Path != "packages/core" || len(r.Findings) != 1 || r.Summary.Passed {
		t.Fatalf("report of the upload: %s", body)
	}
	if _, err := os.Stat(roots[0]); !os.IsNotExist(err) {
		t.Fatalf("upload directory %s left behind: %v", roots[0], err)
	}

	noise := make([]byte, 300<<10)
	rand.Read(noise)
	big := untartest.TarGz(t, untartest.File("noise", string(noise))) // incompressible: over maxBodyBytes as sent
	tests := []struct {
		name        string
		contentType string
		body        []byte
		chunked     bool
		want        int
		wantMsg     string
	}{
		{"absolute path", "application/gzip", untartest.TarGz(t, untartest.File("/etc/cron.d/x", "x")), false, 400, "absolute"},
		{"dot dot", "application/gzip", untartest.TarGz(t, untartest.File("a/../../x", "x")), false, 400, "in path"},
		{"symlink out", "application/gzip", untartest.TarGz(t, untartest.Entry{Name: "l", Type: tar.TypeSymlink, Linkname: "../../etc"}), false, 400, "outside"},
		{"absolute symlink", "application/gzip", untartest.TarGz(t, untartest.Entry{Name: "l", Type: tar.TypeSymlink, Linkname: "/etc/passwd"}), false, 400, "absolute"},
		{"write through symlink", "application/gzip", untartest.TarGz(t, untartest.Entry{Name: "l", Type: tar.TypeSymlink, Linkname: "."}, untartest.File("l/x", "x")), false, 400, "symbolic link"},
		{"device", "application/gzip", untartest.TarGz(t, untartest.Entry{Name: "dev", Type: tar.TypeChar}), false, 400, "device"},
		{"too many files", "application/gzip", untartest.TarGz(t, untartest.Files(21)...), false, 413, "maxTarFiles"},
		{"bomb", "application/gzip", untartest.TarGz(t, untartest.Entry{Name: "bomb", Type: tar.TypeReg, Size: 64 << 20}), false, 413, "maxTarBytes"},
		{"body too large", "application/gzip", big, false, 413, "maxBodyBytes"},
		{"body too large, chunked", "application/gzip", big, true, 413, "maxBodyBytes"},
		{"not gzip", "application/gzip", []byte("PK\x03\x04 a zip"), false, 400, "gzip"},
		{"JSON body too large", "application/json", []byte(`{"ref":"` + strings.Repeat("a", 300<<10) + `"}`), false, 413, "maxBodyBytes"},
		{"JSON body too large, chunked", "application/json", []byte(`{"ref":"` + strings.Repeat("a", 300<<10) + `"}`), true, 413, "maxBodyBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rd io.Reader = bytes.NewReader(tt.body)
			if tt.chunked {
				rd = io.MultiReader(rd) // unknown length: sent chunked
			}
			resp, body := ts.Do(http.MethodPost, "/v1/verify", tt.contentType, rd)
			wantStatus(t, tt.name, resp, body, tt.want)
			if !strings.Contains(string(body), tt.wantMsg) {
				t.Fatalf("message %s, want it to mention %q", body, tt.wantMsg)
			}
		})
	}
	if n := eng.checks.Load(); n != 1 {
		t.Fatalf("the engine checked %d trees; refused uploads must not reach it", n)
	}
	left, _ := os.ReadDir(filepath.Join(cfg.DataDir, "uploads"))
	if len(left) != 0 {
		t.Fatalf("upload directories left behind: %v", left)
	}
}

func TestPolicyWatch(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	key := filepath.Join(dir, "keys", "release.pub")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("key one"), 0o600)
	os.WriteFile(a, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {pin-missing: error}\nkeys: [keys/release.pub]\n"), 0o600)
	os.WriteFile(b, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {pin-missing: off}\nkeys: [keys/release.pub]\n"), 0o600)
	fp := func(w *policyWatch) string {
		t.Helper()
		h, err := w.Fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	wa, wb, wd := &policyWatch{path: a}, &policyWatch{path: b}, &policyWatch{}
	ha, hb, hd := fp(wa), fp(wb), fp(wd)
	if ha == hb || ha == hd || ha != fp(wa) || ha != fp(&policyWatch{path: a}) {
		t.Fatalf("policy fingerprints a=%s b=%s default=%s", ha, hb, hd)
	}
	// The key file the policy names is part of it: replaced (another
	// file renamed over it, as an operator or config management does), a
	// new fingerprint without a reload.
	tmp := key + ".new"
	os.WriteFile(tmp, []byte("key two"), 0o600)
	if err := os.Rename(tmp, key); err != nil {
		t.Fatal(err)
	}
	if h := fp(wa); h == ha {
		t.Fatal("the fingerprint did not change when the key file was replaced")
	}
	// The policy edited in place: noticed too.
	ha = fp(wa)
	os.WriteFile(a, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {pin-missing: warning}\nkeys: [keys/release.pub]\n"), 0o600)
	os.Chtimes(a, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if h := fp(wa); h == ha {
		t.Fatal("the fingerprint did not change when the policy changed")
	}
	// Reload reads everything again, even when no stamp changed.
	if h, err := wa.Reload(); err != nil || h != fp(wa) {
		t.Fatalf("Reload = %s, %v", h, err)
	}
	os.Remove(key)
	if _, err := wa.Fingerprint(); err == nil || !strings.Contains(err.Error(), "keys[0]") {
		t.Fatalf("a missing key file: %v, want an error naming keys[0]", err)
	}
	if _, err := (&policyWatch{path: filepath.Join(dir, "missing")}).Fingerprint(); err == nil {
		t.Fatal("no error for a missing policy")
	}
}

func TestVerdictTTL(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	waived := func(check, expires string) report.Finding {
		return report.Finding{Check: check, Severity: report.Error, Waiver: &report.Waiver{Reason: "r", Expires: expires}}
	}
	for _, tt := range []struct {
		name string
		fs   []report.Finding
		want time.Duration
	}{
		{"passed", nil, time.Hour},
		{"content finding", []report.Finding{{Check: "blob-yaml", Severity: report.Error}}, time.Hour},
		{"not signed", []report.Finding{{Check: "signature", Severity: report.Error}}, 0},
		{"no provenance", []report.Finding{{Check: "provenance", Severity: report.Error}}, 0},
		{"unreadable", []report.Finding{{Check: "registry-digest", Severity: report.Error}}, 0},
		{"waived signature", []report.Finding{waived("signature", "2027-01-01")}, 0},
		{"waiver expires tonight", []report.Finding{waived("blob-header", "2026-11-30")}, 12 * time.Hour},
		{"waiver expires in 10 minutes", []report.Finding{waived("blob-header", "2026-11-30")}, 10 * time.Minute},
		{"waiver far away", []report.Finding{waived("blob-header", "2030-01-01")}, time.Hour},
	} {
		at := now
		if tt.name == "waiver expires in 10 minutes" {
			at = time.Date(2026, 11, 30, 23, 50, 0, 0, time.UTC)
		}
		max := time.Hour
		if tt.name == "waiver expires tonight" {
			max = 24 * time.Hour
		}
		if got := verdictTTL(newReport(tt.fs...), at, max); got != tt.want {
			t.Errorf("%s: TTL %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDataDirLock(t *testing.T) {
	cfg := testConfig(t)
	first, err := New(context.Background(), cfg, &fakeEngine{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), cfg, &fakeEngine{}, nil); err == nil || !strings.Contains(err.Error(), "in use by another") {
		t.Fatalf("second server on one data directory: %v, want refused", err)
	}
	first.Close()
	second, err := New(context.Background(), cfg, &fakeEngine{}, nil)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	second.Close()
}

// A client that never finishes its request headers is cut off after
// limits.readHeaderTimeout (the other timeouts are far longer here).
func TestReadHeaderTimeout(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.ReadHeaderTimeout = Duration(100 * time.Millisecond)
	cfg.Limits.RequestTimeout = Duration(10 * time.Minute)
	ts := startServer(t, cfg, &fakeEngine{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.Base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); err != nil { // no blank line
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(2 * time.Minute)) // a hang guard, not the assertion
	data, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept a connection with unfinished headers open")
	}
	if strings.Contains(string(data), "200 OK") {
		t.Fatalf("the server answered an unfinished request: %q", data)
	}
}

// A verdict that relies on a waiver is served from the cache only until
// the waiver expires; then the engine decides again (and the finding
// counts).
func TestVerifyCacheWaiverExpiry(t *testing.T) {
	eng := &fakeEngine{}
	eng.verify = func(_ context.Context, ref string, _ VerifyOptions) (*report.Report, error) {
		return newReport(report.Finding{Check: "blob-header", Severity: report.Error, Package: ".", Message: "m",
			Waiver: &report.Waiver{Reason: "upstream fix pending", Expires: "2026-11-30"}}), nil
	}
	ts := startServer(t, testConfig(t), eng)
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 30, 23, 58, 0, 0, time.UTC).UnixNano())
	ts.Server.now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	ref := map[string]string{"ref": "registry.example/a/b:v1"}
	for i, want := range []string{"miss", "hit"} {
		if resp, _ := ts.PostJSON("/v1/verify", ref); resp.Header.Get("Pinseal-Cache") != want {
			t.Fatalf("request %d before expiry: cache %q, want %s", i, resp.Header.Get("Pinseal-Cache"), want)
		}
	}
	clock.Store(time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC).UnixNano())
	if resp, _ := ts.PostJSON("/v1/verify", ref); resp.Header.Get("Pinseal-Cache") != "miss" || eng.verifies.Load() != 2 {
		t.Fatalf("after the waiver expired: cache %q, %d verifications; want a new verification", resp.Header.Get("Pinseal-Cache"), eng.verifies.Load())
	}
}

// ReloadPolicy (SIGHUP) drops the cached verdicts.
func TestReloadPolicyClearsCache(t *testing.T) {
	eng := &fakeEngine{}
	ts := startServer(t, testConfig(t), eng)
	ref := map[string]string{"ref": "registry.example/a/b:v1"}
	ts.PostJSON("/v1/verify", ref)
	if resp, _ := ts.PostJSON("/v1/verify", ref); resp.Header.Get("Pinseal-Cache") != "hit" {
		t.Fatal("not cached")
	}
	if err := ts.Server.ReloadPolicy(); err != nil {
		t.Fatal(err)
	}
	if resp, _ := ts.PostJSON("/v1/verify", ref); resp.Header.Get("Pinseal-Cache") != "miss" {
		t.Fatal("served from the cache after ReloadPolicy")
	}
}
