//go:build integration

package server

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

const chromium = "/usr/bin/chromium"

// dumpDOM loads url in headless Chromium and returns the DOM it rendered.
// The pages' Content-Security-Policy forbids every script, so what Chromium
// shows is what works without JavaScript.
func dumpDOM(t *testing.T, url string) string {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		testpeer.Missing(t, "%s (apt-get install chromium)", chromium)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--dump-dom", url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return stdout.String()
}

func TestDashboardInChromium(t *testing.T) {
	ts, _ := dashboardServer(t)

	dom := dumpDOM(t, ts.Base+"/")
	for _, want := range []string{
		"Drift dashboard",
		`id="source-tree"`,
		"scan #2</a>",
		"succeeded",
		"Open findings (3)",
		"packages/core",
		"packages/talos",
		`<h4 class="check">blob-yaml</h4>`,
		`<h4 class="check">pin-missing</h4>`,
		`<h4 class="check">configmap-version</h4>`,
		"the blob differs from the YAML at line 12",
		"&lt;script&gt;alert(1)&lt;/script&gt;", // shown as text, not run
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("dashboard DOM lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM of /:\n%s", dom)
	}
	if strings.Contains(dom, `<h4 class="check">blob-header</h4>`) {
		t.Error("the dashboard shows the resolved blob-header finding as open")
	}

	dom = dumpDOM(t, ts.Base+"/scans/2")
	for _, want := range []string{
		"Scan #2 of",
		`id="status">succeeded`,
		"New since the previous scan (2)",
		"Resolved since the previous scan (1)",
		"blob-header",
		"rebuild with gzip -9 -n",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("scan page DOM lacks %q", want)
		}
	}
}
