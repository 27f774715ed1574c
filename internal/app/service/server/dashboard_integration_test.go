//go:build integration

package server

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
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

// TestDashboardChartInChromium: the findings-over-time chart is drawn by
// Chromium with scripts forbidden: the SVG is in the DOM with a link and
// a tooltip per scan, and a screenshot of it shows its error line (red
// pixels) where a page without it has none.
func TestDashboardChartInChromium(t *testing.T) {
	ts, _ := dashboardServer(t)
	dom := dumpDOM(t, ts.Base+"/")
	chart := section(dom, `id="history"`)
	for _, want := range []string{
		`id="chart-tree"`,
		`class="history-chart"`,
		`<polyline class="errors"`,
		`href="/scans/1"`,
		`href="/scans/2"`,
		"scan #2, ",
		": 2 errors, 1 warnings",
	} {
		if !strings.Contains(chart, want) {
			t.Errorf("chart DOM lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("chart section of /:\n%s", chart)
	}
	// The chart as the server sent it, alone on a page (no stylesheet: the
	// only red is what the SVG draws), and a page with no chart.
	_, body := ts.Get("/")
	fig := string(body)
	i, j := strings.Index(fig, `<figure class="chart"`), strings.Index(fig, "</figure>")
	if i < 0 || j < i {
		t.Fatalf("no chart figure in the page")
	}
	dir := t.TempDir()
	page := func(name, html string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte("<!doctype html><html><body>"+html+"</body></html>"), 0o644); err != nil {
			t.Fatal(err)
		}
		return "file://" + f
	}
	shot := screenshot(t, page("chart.html", fig[i:j+len("</figure>")]))
	os.WriteFile(filepath.Join(os.TempDir(), "pinseal-chart.png"), shot, 0o644)
	if n := redPixels(t, shot); n < 200 {
		t.Errorf("screenshot of the chart has %d pixels of the error line's red, want the line and points drawn", n)
	}
	if n := redPixels(t, screenshot(t, page("none.html", "<p>no chart</p>"))); n != 0 {
		t.Errorf("a page with no chart has %d red pixels", n)
	}
}

// screenshot loads url in headless Chromium and returns the PNG it took.
func screenshot(t *testing.T, url string) []byte {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		testpeer.Missing(t, "%s (apt-get install chromium)", chromium)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	file := filepath.Join(dir, "shot.png")
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--window-size=1200,900",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+file, url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot %s: %v\n%s", url, err, out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// redPixels counts the pixels of the chart's error colour (#cf222e, give
// or take anti-aliasing) that are not in text: the error line and points.
func redPixels(t *testing.T, b []byte) int {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	n := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if near(cr>>8, 0xcf) && near(cg>>8, 0x22) && near(cb>>8, 0x2e) {
				n++
			}
		}
	}
	return n
}

func near(v uint32, want int) bool { d := int(v) - want; return d > -12 && d < 12 }
