package server

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/internal/testkit/untartest"
)

func TestPathScrubber(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p := newPathScrubber(link)
	for _, tc := range []struct {
		in   string
		all  bool
		want string
	}{
		{`{"error":"open ` + link + `/uploads/verify-123/pkg/x.yaml: denied"}`, true, `{"error":"open upload/pkg/x.yaml: denied"}`},
		{`{"error":"open ` + real + `/uploads/verify-9.upload: no space"}`, true, `{"error":"open upload: no space"}`},
		{`{"status":"not ready: database: ` + real + `/pinseal.db: locked"}`, true, `{"status":"not ready: database: [dataDir]/pinseal.db: locked"}`},
		{`{"error":"at ` + real + `"}`, true, `{"error":"at [dataDir]"}`},
		{`{"error":"nothing to hide in /srv/other"}`, true, `{"error":"nothing to hide in /srv/other"}`},
		// Reports: only what the service makes under dataDir.
		{`{"root":"` + link + `/git/src/abc","x":"` + real + `/uploads/verify-1"}`, false, `{"root":"[dataDir]/git/src/abc","x":"upload"}`},
		{`{"message":"hostPath ` + real + `/pinseal.db"}`, false, `{"message":"hostPath ` + real + `/pinseal.db"}`},
		// Not a mention of dataDir: a longer name, or inside a longer path.
		{`{"error":"` + real + `ity/x and /srv` + real + `/x"}`, true, `{"error":"` + real + `ity/x and /srv` + real + `/x"}`},
	} {
		if got := string(p.scrub([]byte(tc.in), tc.all)); got != tc.want {
			t.Errorf("scrub(%s, %v)\n = %s\nwant %s", tc.in, tc.all, got, tc.want)
		}
	}
}

// TestShutdownStopsUpload: an upload still checked when shutdownTimeout
// ends is stopped, answered 503 with Retry-After (as openapi.yaml says),
// and its upload removed before the server returns.
func TestShutdownStopsUpload(t *testing.T) {
	eng := newBlockingEngine()
	cfg := testConfig(t)
	const shutdownTimeout = 200 * time.Millisecond
	cfg.Limits.ShutdownTimeout = Duration(shutdownTimeout)
	ts := startServer(t, cfg, eng)
	type answer struct {
		resp *http.Response
		body []byte
	}
	got := make(chan answer, 1)
	go func() {
		resp, body := ts.Do(http.MethodPost, "/v1/verify", "application/gzip", bytes.NewReader(untartest.TarGz(t, untartest.File("p/Chart.yaml", "name: p\n"))))
		got <- answer{resp, body}
	}()
	<-eng.started
	start := time.Now()
	if err := ts.stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	a := <-got
	wantStatus(t, "upload stopped by the shutdown", a.resp, a.body, http.StatusServiceUnavailable)
	if a.resp.Header.Get("Retry-After") == "" || !strings.Contains(string(a.body), "shutting down") {
		t.Errorf("answer %v %s, want Retry-After and the reason", a.resp.Header, a.body)
	}
	// Stopped at shutdownTimeout, within timebound.Slack; not before.
	if d := time.Since(start); d < shutdownTimeout || timebound.Over(d, shutdownTimeout) {
		t.Errorf("shutdown took %s; shutdownTimeout is %s", d, shutdownTimeout)
	}
	ents, _ := os.ReadDir(filepath.Join(cfg.DataDir, "uploads"))
	if len(ents) != 0 {
		t.Errorf("uploads left: %v", ents)
	}
}
