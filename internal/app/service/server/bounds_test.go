package server

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/internal/testkit/untartest"
)

// TestVerifyQueueTimeout: with every slot busy, an upload waits
// limits.verifyQueueTimeout for one, then gets 503 with Retry-After; the
// wait does not start before its body has arrived.
func TestVerifyQueueTimeout(t *testing.T) {
	eng := newBlockingEngine()
	cfg := testConfig(t)
	cfg.Limits.MaxConcurrentVerifies = 1
	const queueTimeout = 300 * time.Millisecond
	cfg.Limits.VerifyQueueTimeout = Duration(queueTimeout)
	ts := startServer(t, cfg, eng)
	upload := untartest.TarGz(t, untartest.File("p/Chart.yaml", "name: p"))

	first := make(chan int, 1)
	go func() {
		resp, _ := ts.Do(http.MethodPost, "/v1/verify", "application/gzip", bytes.NewReader(upload))
		first <- resp.StatusCode
	}()
	<-eng.started // the only slot is busy
	start := time.Now()
	resp, body := ts.Do(http.MethodPost, "/v1/verify", "application/gzip", bytes.NewReader(upload))
	waited := time.Since(start)
	wantStatus(t, "upload with every slot busy", resp, body, http.StatusServiceUnavailable)
	if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "verifyQueueTimeout") {
		t.Fatalf("503 without Retry-After or without naming the bound: %v %s", resp.Header, body)
	}
	// Not before the queue timeout; at it, within timebound.Slack.
	if waited < queueTimeout || timebound.Over(waited, queueTimeout) {
		t.Fatalf("answered after %s, want at the %s queue timeout", waited, queueTimeout)
	}
	close(eng.release)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("the first upload: %d", code)
	}
}

func TestMetricLabels(t *testing.T) {
	for m, want := range map[string]string{"GET": "GET", "POST": "POST", "OPTIONS": "OPTIONS", "get": "other", "XFOO": "other", "": "other"} {
		if got := methodLabel(m); got != want {
			t.Errorf("methodLabel(%q) = %q, want %q", m, got, want)
		}
	}
	for code, want := range map[int]string{200: "200", 413: "413", 503: "503", 418: "4xx", 299: "2xx", 999: "other", 0: "other"} {
		if got := codeLabel(code); got != want {
			t.Errorf("codeLabel(%d) = %q, want %q", code, got, want)
		}
	}
	s := &Server{cfg: &Config{}, metrics: newMetrics()}
	pats := routePatterns(s.routes())
	for _, p := range []string{"/v1/verify", "/v1/scans/{id}", "/metrics", "/"} {
		if !pats[p] {
			t.Errorf("route pattern %s missing from %v", p, pats)
		}
	}
	if len(pats) > 20 {
		t.Errorf("%d route patterns", len(pats))
	}
}
