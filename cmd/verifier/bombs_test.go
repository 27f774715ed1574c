package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/report"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// copyDir copies the regular files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-r", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// TestCheckTemplateBombs: `verifier check` on a tree holding the examples
// and the two template bombs reports a package-load finding for each bomb,
// naming the template and the limit, checks the example packages as
// usual, and ends within the render bound.
func TestCheckTemplateBombs(t *testing.T) {
	root := t.TempDir()
	copyDir(t, "../../examples", root)
	writeBombChart(t, root, "bombs/memory", `{{ repeat 1000000000000 "aaaaaaaaaa" }}`)
	writeBombChart(t, root, "bombs/time", `{{ range until 100000 }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}`)
	const renderTimeout = 2 * time.Second
	cleanStart := time.Now()
	clean, code, err := runVerifier(t, "check", "../../examples", "-o", "json")
	cleanTook := time.Since(cleanStart)
	if code != 0 {
		t.Fatalf("examples alone: exit %d %v", code, err)
	}
	var want report.Report
	json.Unmarshal([]byte(clean), &want)

	start := time.Now()
	out, code, err := runVerifier(t, "check", root, "-o", "json", "--render-timeout", "2s", "--render-max-memory", "268435456")
	// Each bomb is stopped by one of its bounds: past the clean tree's check,
	// at most one render bound a bomb (rendered one after the other at worst).
	if d := time.Since(start); timebound.Over(d-cleanTook, 2*renderTimeout) {
		t.Errorf("check took %s, %s more than the example tree alone, with a %s render bound for each of two bombs", d, d-cleanTook, renderTimeout)
	}
	if code != 1 {
		t.Fatalf("exit %d (%v), want 1 (error findings)\n%s", code, err, out)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, f := range r.Findings {
		if strings.HasPrefix(f.Package, "bombs/") {
			if f.Check != "package-load" || f.File != f.Package+"/templates/bomb.yaml" {
				t.Errorf("bomb finding %+v, want package-load at templates/bomb.yaml", f)
			}
			found[f.Package] = f.Message
		} else {
			t.Errorf("finding outside the bombs: %+v", f)
		}
	}
	if m := found["bombs/memory"]; !strings.Contains(m, "templates/bomb.yaml went over the render memory limit of 256 MiB") {
		t.Errorf("memory bomb: %q", m)
	}
	if m := found["bombs/time"]; !strings.Contains(m, "templates/bomb.yaml took longer than the render time limit of 2s") {
		t.Errorf("time bomb: %q", m)
	}
	// The example packages were still checked: same packages as alone.
	if r.Summary.Packages != want.Summary.Packages+2 || want.Summary.Packages < 2 {
		t.Errorf("%d packages checked, want the %d examples and the 2 bombs", r.Summary.Packages, want.Summary.Packages)
	}
}

// TestCheckRenderFlags: bad render bounds are usage errors.
func TestCheckRenderFlags(t *testing.T) {
	runCases(t, []cliCase{
		{"zero timeout", []string{"check", "../../examples", "--render-timeout", "0s"}, 2, "--render-timeout"},
		{"negative memory", []string{"check", "../../examples", "--render-max-memory", "-1"}, 2, "must be positive"},
	})
}

// writeBombChart writes a chart holding a provider and templates/bomb.yaml.
func writeBombChart(t *testing.T, root, rel, bomb string) {
	t.Helper()
	writeFiles(t, filepath.Join(root, rel), map[string]string{
		"Chart.yaml":              "apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
		"templates/provider.yaml": "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  version: v1.10.1-core\n",
		"templates/bomb.yaml":     bomb + "\n",
	})
}

// writeFiles writes each file of files (path relative to dir: content),
// making the directories it needs.
func writeFiles[T string | []byte](t *testing.T, dir string, files map[string]T) {
	t.Helper()
	for n, c := range files {
		p := filepath.Join(dir, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
