package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/report"
)

// dashboardServer has run two scans of "tree": blob-header was resolved,
// blob-yaml stayed, pin-missing and a finding with markup in its message
// are new.
func dashboardServer(t *testing.T) (*testServer, store.Scan) {
	t.Helper()
	hostile := report.Finding{Check: "configmap-version", Severity: report.Error, Package: "packages/infra",
		Provider: "InfrastructureProvider/proxmox", File: "templates/configmaps.yaml", Line: 4,
		Message: `ConfigMap "<script>alert(1)</script>" is not spec.version v0.7.7-infraprovider-proxmox`}
	cfg := testConfig(t)
	cfg.PublicReads = true
	ts := startServer(t, cfg, scriptedEngine(newReport(blobYAML, blobHeader), newReport(blobYAML, pinMissing, hostile)))
	var last store.Scan
	for range 2 {
		_, body := ts.PostJSON("/v1/scans", map[string]string{"source": "tree"})
		json.Unmarshal(body, &last)
		ts.waitScan(last.ID)
	}
	return ts, last
}

func TestDashboard(t *testing.T) {
	ts, last := dashboardServer(t)
	resp, body := ts.Get("/")
	wantStatus(t, "GET /", resp, body, http.StatusOK)
	page := string(body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type %s", ct)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Fatalf("Content-Security-Policy %q: want scripts forbidden", csp)
	}
	for _, want := range []string{
		`id="source-tree"`,
		`href="/scans/2" class="scan-link">scan #2</a>`,
		`<span class="status-succeeded">succeeded</span>`,
		"Open findings (3)",
		`<span class="mono">packages/core</span>`,
		`<h4 class="check">blob-yaml</h4>`,
		`<h4 class="check">pin-missing</h4>`,
		"files/core-components.yaml:12",
		"&lt;script&gt;alert(1)&lt;/script&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "blob-header</h4>") {
		t.Error("dashboard shows unescaped markup or a resolved finding")
	}
	// Packages with errors come before packages with only warnings.
	if strings.Index(page, "packages/talos") < strings.Index(page, "packages/core") {
		t.Error("packages/talos (warnings only) listed before packages/core (errors)")
	}

	resp, body = ts.Get("/scans/2")
	wantStatus(t, "GET /scans/2", resp, body, http.StatusOK)
	page = string(body)
	new, resolved := section(page, `id="new"`), section(page, `id="resolved"`)
	if !strings.Contains(new, "pin-missing") || strings.Contains(new, "blob-yaml") || !strings.Contains(resolved, "blob-header") {
		t.Errorf("scan page: new section %q, resolved section %q", new, resolved)
	}
	if last.ID != 2 {
		t.Fatalf("last scan %d", last.ID)
	}
	for _, tt := range []struct {
		path string
		want int
	}{{"/scans/99", http.StatusNotFound}, {"/scans/x", http.StatusBadRequest}} {
		resp, body := ts.Get(tt.path)
		wantStatus(t, tt.path, resp, body, tt.want)
	}
}

// section is the page from the heading marked by id to the next heading.
func section(page, id string) string {
	i := strings.Index(page, id)
	if i < 0 {
		return ""
	}
	rest := page[i:]
	if j := strings.Index(rest[1:], "<h2"); j >= 0 {
		return rest[:j+1]
	}
	return rest
}
