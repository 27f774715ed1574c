package load

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/chartbomb"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/render"
)

// TestParseBounds: each chart, a few kilobytes, expands past a parse bound
// when Helm loads it; the package gets one package-load problem naming the
// file and the bound, in the render child and in process alike, quickly,
// and a chart with a packed subchart within the bounds still renders.
func TestParseBounds(t *testing.T) {
	many := map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML)}
	for i := range render.MaxArchiveEntries + 1 {
		many[fmt.Sprintf("files/f%05d", i)] = nil
	}
	inner := chartbomb.Tgz(t, "deep", map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: deep\nversion: 0.1.0\n"), "files/zero": make([]byte, render.MaxArchiveBytes)})
	tests := []struct {
		name  string
		files map[string][]byte
		file  string
		want  string
	}{
		{"values aliases", map[string][]byte{"values.yaml": []byte(chartbomb.AliasBomb("v", 20, 3))},
			"values.yaml", "more than 100000 YAML nodes"},
		{"values long string aliases", map[string][]byte{"values.yaml": []byte(chartbomb.Padding("p", 1100) + "s: &s " + strings.Repeat("y", 4096) + "\nl: [" + strings.TrimSuffix(strings.Repeat("*s,", 1100), ",") + "]\n")},
			"values.yaml", "more than 4 MiB of strings"},
		{"Chart.yaml aliases", map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: bomb\nversion: 0.1.0\n" + chartbomb.AliasBomb("x", 20, 3))},
			"Chart.yaml", "more than 100000 YAML nodes"},
		{"subchart values aliases", map[string][]byte{"charts/sub/Chart.yaml": []byte(chartbomb.SubChartYAML), "charts/sub/values.yaml": []byte(chartbomb.AliasBomb("v", 20, 3))},
			"charts/sub/values.yaml", "more than 100000 YAML nodes"},
		{"packed subchart values aliases", map[string][]byte{"charts/sub-0.1.0.tgz": chartbomb.Tgz(t, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML), "values.yaml": []byte(chartbomb.AliasBomb("v", 20, 3))})},
			"charts/sub-0.1.0.tgz", "more than 100000 YAML nodes"},
		{"packed subchart inflates", map[string][]byte{"charts/sub-0.1.0.tgz": chartbomb.Tgz(t, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML), "files/zero": make([]byte, render.MaxArchiveBytes+1)})},
			"charts/sub-0.1.0.tgz", "more than 16 MiB once inflated"},
		{"nested packed subchart inflates", map[string][]byte{"charts/sub-0.1.0.tgz": chartbomb.Tgz(t, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML), "charts/deep-0.1.0.tgz": inner})},
			"charts/sub-0.1.0.tgz", "more than 16 MiB once inflated"},
		{"packed subchart entries", map[string][]byte{"charts/sub-0.1.0.tgz": chartbomb.Tgz(t, "sub", many)},
			"charts/sub-0.1.0.tgz", "more than 10000 entries"},
		{"schema", map[string][]byte{"values.schema.json": []byte("[" + strings.TrimSuffix(strings.Repeat("0,", render.MaxChartValueNodes), ",") + "]")},
			"values.schema.json", "more than 100000 YAML nodes"},
	}
	for _, tc := range tests {
		for _, inProcess := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inProcess=%v", tc.name, inProcess), func(t *testing.T) {
				root := t.TempDir()
				writeBombChart(t, root, "bomb", "")
				for n, c := range tc.files {
					write(t, root, "bomb/"+n, c)
				}
				// A work bound, in this process's CPU time (a render child is held
				// to its own time bound): a busy machine does not stretch it.
				var tr *model.Tree
				if used := timebound.Work(func() { tr = loadTree(t, root, Options{Render: render.Limits{InProcess: inProcess}}) }); used > 10*time.Second {
					t.Errorf("load used %s of CPU", used)
				}
				if len(tr.Packages) != 1 {
					t.Fatalf("%d packages, want the bomb chart (skipped: %+v)", len(tr.Packages), tr.Skipped)
				}
				probs := tr.Packages[0].Problems
				if len(probs) != 1 || probs[0].Check != model.CheckPackageLoad || probs[0].File != tc.file || !strings.Contains(probs[0].Message, tc.want) {
					t.Fatalf("problems %+v, want one package-load problem at %s saying %q", probs, tc.file, tc.want)
				}
			})
		}
	}
}

// TestParseBoundsClean: charts with subcharts, packed and not, and values
// with aliases, all within the bounds, load and render as before.
func TestParseBoundsClean(t *testing.T) {
	root := t.TempDir()
	writeBombChart(t, root, "clean", "")
	write(t, root, "clean/values.yaml", []byte(chartbomb.AliasBomb("v", 10, 3)))
	write(t, root, "clean/charts/sub-0.1.0.tgz", chartbomb.Tgz(t, "sub", map[string][]byte{"Chart.yaml": []byte(chartbomb.SubChartYAML),
		"values.yaml": []byte("a: 1\n"), "templates/p.yaml": []byte(strings.Replace(chartbomb.ProviderTemplate, "name: cluster-api", "name: sub", 1))}))
	write(t, root, "clean/charts/dir/Chart.yaml", []byte("apiVersion: v2\nname: dir\nversion: 0.1.0\n"))
	write(t, root, "clean/charts/dir/templates/p.yaml", []byte(strings.Replace(chartbomb.ProviderTemplate, "name: cluster-api", "name: dir", 1)))
	tr := loadTree(t, root, Options{})
	if len(tr.Packages) != 1 {
		t.Fatalf("%d packages", len(tr.Packages))
	}
	p := tr.Packages[0]
	var names []string
	for _, pr := range p.Providers {
		names = append(names, pr.Name+"@"+pr.File)
	}
	slices.Sort(names)
	if got := strings.Join(names, " "); got != "cluster-api@templates/provider.yaml dir@charts/dir/templates/p.yaml sub@charts/sub/templates/p.yaml" {
		t.Fatalf("providers %s; problems %+v", got, p.Problems)
	}
	for _, pr := range p.Problems {
		if pr.Check == model.CheckPackageLoad {
			t.Errorf("problem %+v", pr)
		}
	}
}

// TestParseBoundRenderMemory: a values.yaml whose aliases name a 64 KiB
// string ten thousand times (650 MB once Helm's YAML library turns it into
// JSON) takes the render child over its memory bound while it reads the
// file, before the verifier's process loads anything: the problem names
// values.yaml and the bound. The memory builds up over time, so on a
// loaded machine the render time bound can stop it first; that keeps the
// promise (a bound stops it, and the problem names that bound).
func TestParseBoundRenderMemory(t *testing.T) {
	root := t.TempDir()
	writeBombChart(t, root, "bomb", "")
	hundred := func(alias string) string { return strings.TrimSuffix(strings.Repeat("*"+alias+",", 100), ",") }
	write(t, root, "bomb/values.yaml", []byte(chartbomb.Padding("p", 10100)+"s: &s "+strings.Repeat("y", 64<<10)+
		"\nl1: &l1 ["+hundred("s")+"]\nl2: ["+hundred("l1")+"]\n"))
	tr := loadTree(t, root, Options{Render: testRenderLimits})
	probs := tr.Packages[0].Problems
	if len(probs) != 1 || probs[0].File != "values.yaml" ||
		!strings.Contains(probs[0].Message, "parsing values.yaml went over the render memory limit of 256 MiB") &&
			!strings.Contains(probs[0].Message, "parsing values.yaml took longer than the render time limit of 2s") {
		t.Fatalf("problems %+v, want one at values.yaml naming the render memory or time limit", probs)
	}
}

// TestLoadStopsAtDeadline: a chart whose files/ hold gzip bombs (each
// inflating to the 256 MiB inflate limit) is inspected blob by blob until
// ctx ends, not to the last one: the load returns soon after its deadline.
func TestLoadStopsAtDeadline(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zero := make([]byte, 1<<20)
	for range 256 {
		zw.Write(zero)
	}
	zw.Close()
	root := t.TempDir()
	writeBombChart(t, root, "pkg", "")
	for i := range 16 {
		write(t, root, fmt.Sprintf("pkg/files/bomb%02d.gz", i), buf.Bytes())
	}
	const deadline = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := Tree(ctx, root, Options{})
	took := time.Since(start)
	t.Logf("Tree returned %v after %s", err, took)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Tree: %v, want the deadline", err)
	}
	if timebound.Over(took, deadline) {
		t.Errorf("Tree returned %s after it started; the deadline was %s", took, deadline)
	}
}
