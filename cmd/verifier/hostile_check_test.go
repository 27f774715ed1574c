package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/netwatch"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// forgedKey is a values key that, logged raw, starts a record of its own.
const forgedKey = "k\nlevel=ERROR msg=forged"

// writeHostileChart writes, under root/rel, a provider chart that tries
// what a pull request could: a provider name with terminal controls, a
// values key that Helm logs (a subchart's value that is not a table, where
// the parent gives one), and, when schema is not "", values.schema.json.
func writeHostileChart(t *testing.T, root, rel, schema string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":              "apiVersion: v2\nname: hostile\nversion: 0.1.0\n",
		"values.yaml":             "sub:\n  \"k\\nlevel=ERROR msg=forged\": {a: 1}\n",
		"templates/provider.yaml": "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: \"evil\\e[2J\\e]0;pwned\\a\\rX\"\nspec:\n  version: v1.10.1-core\n",
		"charts/sub/Chart.yaml":   "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/values.yaml":  "\"k\\nlevel=ERROR msg=forged\": 1\n",
	}
	if schema != "" {
		files["values.schema.json"] = schema
	}
	writeFiles(t, filepath.Join(root, rel), files)
}

// checkForgedLog fails when a line of log starts a forged record.
func checkForgedLog(t *testing.T, log string) {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "level=ERROR msg=forged") {
			t.Errorf("a values key forged a log record:\n%s", log)
			return
		}
	}
}

// TestCheckHostileChart runs the real `verifier check` binary on charts a
// pull request could bring: its schema reaches nothing (a counting
// listener sees no connection; a file or FIFO ref is a finding, not
// content, and does not block), a .helmignore FIFO does not block, a
// values key cannot forge a log record, and the human output holds no
// terminal control.
func TestCheckHostileChart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the verifier")
	}
	bin := verifierBinary(t)
	watch := netwatch.Listen(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	writeHostileChart(t, tree, "http", `{"properties":{"a":{"$ref":"`+watch.URL("/schema.json")+`"}}}`)
	writeHostileChart(t, tree, "passwd", `{"$ref":"file:///etc/passwd"}`)
	writeHostileChart(t, tree, "fifo", `{"$ref":"file://`+fifo+`"}`)
	writeHostileChart(t, tree, "ignore", "")
	if err := syscall.Mkfifo(filepath.Join(tree, "ignore", ".helmignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeHostileChart(t, tree, "plain", "")

	cmd := exec.Command(bin, "check", tree, "--render-timeout", "5s")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(timebound.Hang):
		cmd.Process.Kill()
		<-done
		t.Fatalf("verifier check blocked for %s:\n%s\n%s", timebound.Hang, stdout.String(), stderr.String())
	}
	t.Logf("verifier check answered in %s", time.Since(start).Round(time.Millisecond))
	out := stdout.String()
	for _, want := range []string{
		"package-load  http/values.schema.json\n          values.schema.json refers to \"" + watch.URL("/schema.json") + `"`,
		"package-load  passwd/values.schema.json\n          values.schema.json refers to \"file:///etc/passwd\"",
		"package-load  fifo/values.schema.json\n          values.schema.json refers to \"file://" + fifo + `"`,
		"package-load  ignore/.helmignore\n          .helmignore cannot be read: not a regular file (a FIFO)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "root:") {
		t.Errorf("output shows /etc/passwd:\n%s", out)
	}
	for _, bad := range []string{"\x1b", "\r", "\a"} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, `evil\x1b[2J\x1b]0;pwned\a\rX`) {
		t.Errorf("output lacks the escaped provider name:\n%s", out)
	}
	checkForgedLog(t, stderr.String())
	if !strings.Contains(stderr.String(), `skipped value for`) {
		t.Errorf("Helm's warning is not in the log (the test no longer tries to forge a record):\n%s", stderr.String())
	}
	if n := watch.Count(); n != 0 {
		t.Errorf("%d connections reached the listener the schema named", n)
	}
}
