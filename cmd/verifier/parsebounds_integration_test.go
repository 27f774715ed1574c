//go:build integration

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/gitbomb"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/report"
)

// Hostile input that parses, inflates, reverses or checks out to far more
// than it weighs: YAML aliases in values.yaml and Chart.yaml, packed
// subcharts inflating to hundreds of megabytes, a ConfigMap's
// data.metadata of millions of YAML nodes, a patch whose reversal a naive
// search takes minutes over, and a git repository of a few kilobytes that
// checks out as a million files. Each upload is under 64 KiB; against a
// real `verifier serve` each is answered within requestTimeout (plus timebound.Slack), the
// server's peak RSS rises by at most 64 MiB, and a clean upload right
// after is answered 200. `verifier check` on each tree reports the same
// finding within the render bounds.

// hostileChart writes a chart worth rendering (a provider template) at
// root/rel with extra files.
func hostileChart(t *testing.T, root, rel string, files map[string][]byte) {
	t.Helper()
	writeBombChart(t, root, rel, "")
	writeFiles(t, filepath.Join(root, rel), files)
}

// chartTgz packs files as a chart archive under dir/.
func chartTgz(t *testing.T, dir string, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for n, c := range files {
		if err := tw.WriteHeader(&tar.Header{Name: dir + "/" + n, Mode: 0o644, Size: int64(len(c)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(c)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// aliases is YAML whose key l<depth> expands to fanout^(depth+1) copies
// of leaf, with the plain nodes Helm's YAML library wants beside aliases
// (1 %: pad).
func aliases(leaf string, fanout, depth, pad int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pad: [%s]\nl0: &l0 [%s]\n", strings.TrimSuffix(strings.Repeat("0,", pad), ","), strings.TrimSuffix(strings.Repeat(leaf+",", fanout), ","))
	for d := 1; d <= depth; d++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", d, d, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", d-1), fanout), ","))
	}
	return b.String()
}

// resetPeak makes the process's VmHWM its current RSS (Linux clear_refs).
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
}

func TestIntegrationServeParseBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the verifier")
	}
	dir := t.TempDir()
	examplesAbs, _ := filepath.Abs("../../examples")
	examples := tarGzDir(t, examplesAbs)

	// The packed subchart: deep.tgz holds 90 MB of zeros (under Helm's own
	// 100 MiB bound), sub.tgz holds deep.tgz; gzip of gzip of zeros
	// weighs a few kilobytes.
	subChart := []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n")
	deep := chartTgz(t, "deep", map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: deep\nversion: 0.1.0\n"), "files/zero": make([]byte, 90<<20)})
	metadataCM := `apiVersion: v1
kind: ConfigMap
metadata:
  name: v1.10.1-core
  labels: {core-components: cozy}
data:
  components: "kind: List"
  metadata: "[{{ repeat 2000000 "0," }}0]"
`
	selectingProvider := `apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: CoreProvider
metadata:
  name: cluster-api
spec:
  version: v1.10.1-core
  fetchConfig:
    selector:
      matchLabels: {core-components: cozy}
`
	// The patch: a 1 MiB vendored file of "a" lines with a line "yN" every
	// 64, and a hunk of 4000 "a" lines then "y64", which matches nowhere.
	var vendored, hunk strings.Builder
	for i := range 1 << 19 {
		if i > 0 && i%64 == 0 && i < 1<<18 {
			fmt.Fprintf(&vendored, "y%d\n", i)
		} else {
			vendored.WriteString("a\n")
		}
	}
	hunk.WriteString("--- a/files/infrastructure-components.yaml\n+++ b/files/infrastructure-components.yaml\n@@ -1,4001 +1,4001 @@\n")
	hunk.WriteString(strings.Repeat(" a\n", 4000) + "-y64\n+z\n")

	attacks := []struct {
		name  string
		tree  func(t *testing.T, root string)
		pkg   string // the package and file of the finding, and what it says
		file  string
		want  string
		check string // the finding's check, "package-load" when ""
	}{
		{"values aliases", func(t *testing.T, root string) {
			hostileChart(t, root, "pkg", map[string][]byte{"values.yaml": []byte(aliases("x", 20, 3, 4000))})
		}, "pkg", "pkg/values.yaml", "more than 100000 YAML nodes", ""},
		{"values aliases of a long string", func(t *testing.T, root string) {
			hostileChart(t, root, "pkg", map[string][]byte{"values.yaml": []byte(aliases(strings.Repeat("y", 32<<10), 100, 1, 200))})
		}, "pkg", "pkg/values.yaml", "values.yaml went over the render memory limit of 256 MiB", ""},
		{"Chart.yaml aliases", func(t *testing.T, root string) {
			hostileChart(t, root, "pkg", map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: bomb\nversion: 0.1.0\n" + aliases("x", 20, 3, 4000))})
		}, "pkg", "pkg/Chart.yaml", "more than 100000 YAML nodes", ""},
		{"nested packed subcharts", func(t *testing.T, root string) {
			hostileChart(t, root, "pkg", map[string][]byte{"charts/sub-0.1.0.tgz": chartTgz(t, "sub", map[string][]byte{"Chart.yaml": subChart, "charts/deep-0.1.0.tgz": deep})})
		}, "pkg", "pkg/charts/sub-0.1.0.tgz", "more than 16 MiB once inflated", ""},
		{"ConfigMap data.metadata", func(t *testing.T, root string) {
			hostileChart(t, root, "pkg", map[string][]byte{"templates/cm.yaml": []byte(metadataCM), "templates/provider.yaml": []byte(selectingProvider)})
		}, "pkg", "", "more than the 65536 read", "metadata-series"},
		{"patch reversal", func(t *testing.T, root string) {
			copyDir(t, filepath.Join(examplesAbs, "packages/capi-providers-infraprovider"), filepath.Join(mkdir(t, root, "infra")))
			os.WriteFile(filepath.Join(root, "infra/files/infrastructure-components.yaml"), []byte(vendored.String()), 0o644)
			os.WriteFile(filepath.Join(root, "infra/patches/0001-capmox-startup-probe.diff"), []byte(hunk.String()), 0o644)
		}, "infra", "", "cannot be reversed", "pin-digest"},
	}

	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
publicReads: true
sources:
  - name: gitbomb
    git: {url: "file://%s", ref: main}
limits:
  requestTimeout: 10s
  scanTimeout: 5s
  renderTimeout: 5s
  renderMaxMemory: 268435456
`, filepath.Join(dir, "data"), gitBombRepo(t))
	cfgFile := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startRealServer(t, cfgFile)
	s.stillServing("start", examples)
	pid := s.cmd.Process.Pid
	const requestTimeout = 10 * time.Second

	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			s := s.in(t)
			root := filepath.Join(t.TempDir(), "tree")
			a.tree(t, root)
			tgz := tarGzDir(t, root)
			if len(tgz) >= 64<<10 {
				t.Fatalf("the upload is %d bytes; the attacks are under 64 KiB", len(tgz))
			}
			_, before := s.memKiB()
			resetPeak(t, pid)
			code, r, d := s.upload(tgz)
			peak, _ := s.memKiB()
			t.Logf("%d-byte upload answered %d in %s; server RSS %d MiB before, peak %d MiB during", len(tgz), code, d.Round(time.Millisecond), before>>10, peak>>10)
			if code != http.StatusOK {
				t.Fatalf("answered %d, want 200 with the finding", code)
			}
			if timebound.Over(d, requestTimeout) {
				t.Errorf("answered after %s; requestTimeout is %s", d, requestTimeout)
			}
			if rise := (peak - before) << 10; rise > 64<<20 {
				t.Errorf("server peak RSS rose by %d MiB, more than 64 MiB", rise>>20)
			}
			want := a.check
			if want == "" {
				want = "package-load"
			}
			hostileFinding(t, r, want, a.pkg, a.file, a.want)
			s.stillServing("the "+a.name+" upload", examples)

			// verifier check on the same tree: the same finding, in time.
			start := time.Now()
			cmd := exec.Command(verifierBinary(t), "check", root, "-o", "json", "--render-max-memory", "268435456", "--render-timeout", "5s")
			out, _ := cmd.Output()
			took := time.Since(start)
			var cr report.Report
			if err := json.Unmarshal(out, &cr); err != nil {
				t.Fatalf("verifier check: %v\n%s", err, out)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
			t.Logf("verifier check: exit %d in %s, max RSS %d MiB", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), rss>>10)
			// A work bound: a refused file costs parsing up to its bound, and a
			// render at most the 5s render bound of CPU.
			if work := timebound.ProcessWork(cmd.ProcessState); timebound.Over(work, 5*time.Second) {
				t.Errorf("verifier check used %s of CPU with a 5s render bound", work)
			}
			hostileFinding(t, &cr, want, a.pkg, a.file, a.want)
		})
	}

	t.Run("git source that checks out as a million files", func(t *testing.T) {
		s := s.in(t)
		_, before := s.memKiB()
		resetPeak(t, pid)
		start := time.Now()
		sc := s.scan("gitbomb")
		took := time.Since(start)
		peak, _ := s.memKiB()
		t.Logf("scan %s after %s: %s; server RSS %d MiB before, peak %d MiB during", sc.Scan.Status, took.Round(time.Millisecond), sc.Scan.Error, before>>10, peak>>10)
		if sc.Scan.Status != store.Failed || !strings.Contains(sc.Scan.Error, "more than 100000 files, directories and links (limits.gitMaxFiles)") {
			t.Fatalf("scan %+v, want failed naming limits.gitMaxFiles", sc.Scan)
		}
		// Refused before scanTimeout (5s) ends it: the scan's own
		// record, started to finished, within timebound.Slack.
		if sc.Scan.FinishedAt == nil || timebound.Over(sc.Scan.FinishedAt.Sub(sc.Scan.StartedAt), 5*time.Second) {
			t.Errorf("scan %+v ended past scanTimeout 5s", sc.Scan)
		}
		if rise := (peak - before) << 10; rise > 64<<20 {
			t.Errorf("server peak RSS rose by %d MiB, more than 64 MiB", rise>>20)
		}
		ents, _ := os.ReadDir(filepath.Join(dir, "data", "git", "gitbomb"))
		if len(ents) != 0 {
			t.Errorf("the refused checkout left %v", ents)
		}
		s.stillServing("the git bomb scan", examples)
	})
}

func mkdir(t *testing.T, root, rel string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// gitBombRepo is a repository of a few kilobytes whose main branch checks
// out as 10^6 files of 4 KiB (4 GB).
func gitBombRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	if _, err := gitbomb.Write(repo, 10, 6, gitbomb.Blob(4096)); err != nil {
		t.Fatal(err)
	}
	return repo
}

// hostileFinding wants a finding of check in pkg at file ("" any) whose
// message or detail says want.
func hostileFinding(t *testing.T, r *report.Report, check, pkg, file, want string) {
	t.Helper()
	for _, f := range r.Findings {
		if f.Check == check && f.Package == pkg && (file == "" || f.File == file) && strings.Contains(f.Message+"\n"+f.Detail, want) {
			return
		}
	}
	b, _ := json.MarshalIndent(r.Findings, "", " ")
	t.Fatalf("no %s finding of %s at %q saying %q in %s", check, pkg, file, want, b)
}
