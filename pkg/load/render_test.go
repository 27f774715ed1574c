package load

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/chartbomb"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestMain lets this test binary be the render child (see
// render.MaybeRunChild).
func TestMain(m *testing.M) {
	render.MaybeRunChild()
	os.Exit(m.Run())
}

// writeBombChart writes a chart with the provider template and the
// template bomb (when not "") under dir/rel.
func writeBombChart(t testing.TB, dir, rel, bomb string) {
	t.Helper()
	files := map[string]string{
		"Chart.yaml":              "apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
		"templates/provider.yaml": chartbomb.ProviderTemplate,
	}
	if bomb != "" {
		files["templates/zz-bomb.yaml"] = bomb
	}
	for n, c := range files {
		p := filepath.Join(dir, rel, n)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var testRenderLimits = render.Limits{Timeout: 2 * time.Second, MaxMemory: 256 << 20, MaxOutput: 1 << 20}

// TestRenderBounds: each bomb becomes one package-load problem naming the
// template and the limit that stopped it, and loading ends within the time
// bound. A memory bomb builds its gigabytes over time: on a loaded machine
// the render time bound can stop it first, which keeps the promise (the
// bomb is stopped by a bound the finding names), so either is accepted.
func TestRenderBounds(t *testing.T) {
	timeLimit := []string{"rendering template templates/zz-bomb.yaml took longer than the render time limit of 2s"}
	tests := []struct {
		name, bomb string
		want       []string
		setting    report.Setting // the limit the hint asks to raise
		orTime     bool           // the render time bound may stop it first
	}{
		{"memory", chartbomb.MemoryBomb, []string{"rendering template templates/zz-bomb.yaml went over the render memory limit of 256 MiB"}, report.SettingRenderMaxMemory, true},
		{"time", chartbomb.TimeBomb, []string{"rendering template templates/zz-bomb.yaml took longer than the render time limit of 2s"}, report.SettingRenderTimeout, false},
		{"output", chartbomb.OutputBomb, []string{"went over the render output limit of 1 MiB", "templates/zz-bomb.yaml"}, report.SettingRenderMaxOutput, false},
		// Small output, gigabytes built under it: not proven for the fast
		// path (which would build them in this process), so the child's
		// memory bound stops it.
		{"memory under len", `{{ len ("a"` + strings.Repeat(" | quote", 40) + `) }}`, []string{"rendering template templates/zz-bomb.yaml went over the render memory limit of 256 MiB"}, report.SettingRenderMaxMemory, true},
		// A chart cannot forge the mark that names the running template.
		{"forged mark", `{{ if lookup "pinseal.render/mark" "bomb/templates/provider.yaml" "" "x" }}{{ end }}` + chartbomb.TimeBomb,
			[]string{"rendering template templates/zz-bomb.yaml took longer"}, report.SettingRenderTimeout, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeBombChart(t, root, "bomb", tc.bomb)
			start := time.Now()
			tr := loadTree(t, root, Options{Render: testRenderLimits})
			if d := time.Since(start); d > testRenderLimits.Timeout+5*time.Second {
				t.Errorf("load took %s, bound %s", d, testRenderLimits.Timeout)
			}
			if len(tr.Packages) != 1 {
				t.Fatalf("%d packages, want the bomb chart", len(tr.Packages))
			}
			probs := tr.Packages[0].Problems
			if len(probs) != 1 || probs[0].Check != model.CheckPackageLoad || probs[0].File != "templates/zz-bomb.yaml" {
				t.Fatalf("problems %+v, want one package-load problem at templates/zz-bomb.yaml", probs)
			}
			want, setting := tc.want, tc.setting
			if tc.orTime && strings.Contains(probs[0].Message, timeLimit[0]) {
				want, setting = timeLimit, report.SettingRenderTimeout
			}
			for _, w := range want {
				if !strings.Contains(probs[0].Message, w) {
					t.Errorf("message %q lacks %q", probs[0].Message, w)
				}
			}
			if !strings.Contains(probs[0].Hint, "raise the render") || !slices.Equal(probs[0].Settings, []report.Setting{setting}) {
				t.Errorf("hint %q (settings %q) does not say to raise the %s bound", probs[0].Hint, probs[0].Settings, setting)
			}
		})
	}
}

// TestRenderBoundedSameAsInProcess: the bounded child renders exactly what
// Helm's engine renders in process (the template marks leave no trace),
// render errors included.
func TestRenderBoundedSameAsInProcess(t *testing.T) {
	root := fixture.CleanCopy(t)
	// A render error on a template's first line: its column must not
	// include the mark.
	writeBombChart(t, root, "broken", `{{ .Values.nope.deeper }}`+"\n")
	// A chart's own lookup finds nothing, as without a cluster.
	writeBombChart(t, root, "lookup", `{{ if lookup "v1" "Secret" "ns" "" }}found: list{{ end }}{{ if lookup "v1" "Secret" "ns" "x" }}found: one{{ end }}`+"\n")
	// Documents that are neither providers nor components ConfigMaps, some
	// broken: the child drops them and reports their problems.
	writeBombChart(t, root, "docs", "--- {kind: A}\n---\nkind: ConfigMap\ndata: {a: 1, a: 2}\n--- [1, 2]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, annotations: {provider.cluster.x-k8s.io/compressed: \"false\"}}\ndata:\n  components: |\n    ---\n    a: b\n--- foo: [\n")
	// Every chart in the child (NoFastPath), then the proven ones on the
	// fast path: both must load as in process.
	bounded := sortProblems(loadTree(t, root, Options{Render: render.Limits{NoFastPath: true}}))
	fast := sortProblems(loadTree(t, root, Options{}))
	inproc := sortProblems(loadTree(t, root, Options{Render: render.Limits{InProcess: true}}))
	if len(bounded.Packages) < 7 {
		t.Fatalf("only %d packages loaded", len(bounded.Packages))
	}
	for _, other := range []struct {
		name string
		tr   *model.Tree
	}{{"in-process", inproc}, {"fast path", fast}} {
		if !reflect.DeepEqual(bounded, other.tr) {
			for i := range bounded.Packages {
				if !reflect.DeepEqual(bounded.Packages[i], other.tr.Packages[i]) {
					t.Errorf("package %s differs:\nbounded   %+v\n%s %+v", bounded.Packages[i].Path, bounded.Packages[i].Problems, other.name, other.tr.Packages[i].Problems)
				}
			}
			t.Fatalf("bounded and %s loads differ", other.name)
		}
	}
	var broken *model.Package
	for _, p := range bounded.Packages {
		if p.Path == "broken" {
			broken = p
		}
		if p.Path == "docs" && (len(p.Problems) != 3 || len(p.ConfigMaps) != 1) {
			t.Errorf("docs chart: %d problems, %d ConfigMaps: %+v", len(p.Problems), len(p.ConfigMaps), p.Problems)
		}
		if p.Path == "lookup" && len(p.Problems) != 0 {
			t.Errorf("lookup chart: %+v", p.Problems)
		}
	}
	if broken == nil || len(broken.Problems) != 1 || !strings.Contains(broken.Problems[0].Message, "zz-bomb.yaml:1:") {
		t.Fatalf("broken chart: %+v", broken)
	}
}

// sortProblems orders each package's problems (the render child reports
// those of the documents it drops after the parent's own).
func sortProblems(tr *model.Tree) *model.Tree {
	for _, p := range tr.Packages {
		sort.SliceStable(p.Problems, func(i, j int) bool {
			a, b := p.Problems[i], p.Problems[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Message < b.Message
		})
	}
	return tr
}

// TestRenderHeavyYAML: a chart whose output is within the output bound but
// is millions of tiny YAML nodes is parsed in the render child (over its
// memory bound), not in the calling process.
func TestRenderHeavyYAML(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race the render child has no RLIMIT_AS (the race detector's shadow memory), so no hard memory bound to pass")
	}
	root := t.TempDir()
	// ~1.7 MB of output, ~600,000 nodes: a few hundred MB to parse.
	writeBombChart(t, root, "heavy", "kind: ConfigMap\ndata:\n{{- range until 300000 }}\n  k{{ . }}: v\n{{- end }}\n")
	// Rendered after the heavy one: the bound is passed while the heavy
	// one's output is parsed, and that one is named.
	if err := os.WriteFile(filepath.Join(root, "heavy/templates/zzz-last.yaml"), []byte("# nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr := loadTree(t, root, Options{Render: render.Limits{Timeout: 20 * time.Second, MaxMemory: 64 << 20}})
	runtime.ReadMemStats(&after)
	if len(tr.Packages) != 1 || len(tr.Packages[0].Problems) != 1 || !strings.Contains(tr.Packages[0].Problems[0].Message, "memory limit of 64 MiB") ||
		tr.Packages[0].Problems[0].File != "templates/zz-bomb.yaml" {
		t.Fatalf("heavy chart: %+v", tr.Packages[0].Problems)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
		t.Errorf("the load allocated %d MiB in this process: the YAML was parsed here", d>>20)
	}

	// A components ConfigMap (kept for the parent) of too many nodes.
	writeBombChart(t, root, "heavy", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v1.0.0}\ndata:\n  components: x\n{{- range until 60000 }}\n  k{{ . }}: v\n{{- end }}\n")
	tr = loadTree(t, root, Options{})
	if p := tr.Packages[0]; len(p.Problems) != 1 || len(p.ConfigMaps) != 0 || !strings.Contains(p.Problems[0].Message, "ConfigMap v1.0.0 at line 3 of the rendered output has more than 100000 YAML nodes") {
		t.Fatalf("components ConfigMap of 120,000 nodes: %+v %d cms %+v", p.Problems, len(p.ConfigMaps), p.Providers)
	}
}

// TestRenderCancel: when ctx ends, the render child is killed and Tree
// returns at once, not at the render time limit.
func TestRenderCancel(t *testing.T) {
	root := t.TempDir()
	writeBombChart(t, root, "bomb", chartbomb.TimeBomb)
	const deadline = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := Tree(ctx, root, Options{Render: render.Limits{Timeout: time.Minute}})
	if err == nil {
		t.Fatal("Tree returned no error after its context ended")
	}
	// At the context's end (within timebound.Slack), far before the
	// render time limit of a minute.
	if d := time.Since(start); timebound.Over(d, deadline) {
		t.Fatalf("Tree returned %s after start, its context ended after %s", d, deadline)
	}
}

// FuzzRenderLimits renders any template (beside a provider template) under
// small bounds: loading never panics, never outlasts the time bound by
// much, a bound passed is a package-load problem naming a template of the
// chart and the limit, and a chart that renders within the bounds renders
// exactly as Helm's engine does in process.
func FuzzRenderLimits(f *testing.F) {
	f.Add(`{{ .Release.Namespace }}: {{ .Chart.Name | upper }}`)
	f.Add(chartbomb.MemoryBomb)
	f.Add(`{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}{{ end }}{{ end }}{{ end }}`)
	f.Add(`{{ define "x" }}{{ include "x" . }}{{ end }}{{ include "x" . }}`)
	lim := render.Limits{Timeout: time.Second, MaxMemory: 128 << 20, MaxOutput: 256 << 10}
	f.Fuzz(func(t *testing.T, tmpl string) {
		root := t.TempDir()
		writeBombChart(t, root, "c", tmpl)
		start := time.Now()
		tr, err := Tree(context.Background(), root, Options{Workers: 1, Render: lim})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > lim.Timeout+10*time.Second {
			t.Fatalf("load took %s under a %s bound", d, lim.Timeout)
		}
		bounded := false
		for _, p := range tr.Packages {
			for _, pr := range p.Problems {
				if !strings.Contains(pr.Message, "render") || !strings.Contains(pr.Message, "limit of") {
					continue
				}
				bounded = true
				if pr.Check != model.CheckPackageLoad || (pr.File != "" && !strings.HasPrefix(pr.File, "templates/")) || pr.Hint == "" {
					t.Fatalf("bound problem %+v", pr)
				}
			}
		}
		if bounded {
			return
		}
		inproc, err := Tree(context.Background(), root, Options{Workers: 1, Render: render.Limits{InProcess: true}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sortProblems(tr), sortProblems(inproc)) {
			t.Fatalf("bounded render differs from Helm's in process:\n%+v\n%+v", tr.Packages, inproc.Packages)
		}
	})
}

// TestPlainManifestNodeBomb: a plain manifest file (no chart, nothing
// rendered) of millions of tiny YAML nodes is parsed in a bounded render
// child: over the memory bound it is a package-load problem naming the file
// and the limit, and the package's other files still load.
func TestPlainManifestNodeBomb(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plain")
	os.MkdirAll(dir, 0o755)
	provider := strings.Replace(chartbomb.ProviderTemplate, "{{ .Release.Namespace }}", "capi", 1)
	os.WriteFile(filepath.Join(dir, "provider.yaml"), []byte(provider), 0o644)
	// 3 million one-character flow items (6 MB): GiBs as yaml.v3 nodes.
	bomb := "# a Provider list\nitems: [" + strings.Repeat("1,", 3_000_000) + "1]\n"
	os.WriteFile(filepath.Join(dir, "zz-bomb.yaml"), []byte(bomb), 0o644)

	tr := loadTree(t, root, Options{Render: render.Limits{Timeout: 20 * time.Second, MaxMemory: 128 << 20}})
	if len(tr.Packages) != 1 {
		t.Fatalf("%d packages, want the plain one", len(tr.Packages))
	}
	p := tr.Packages[0]
	var bound *model.Problem
	for i, pr := range p.Problems {
		if pr.File == "zz-bomb.yaml" && strings.Contains(pr.Message, "memory limit") {
			bound = &p.Problems[i]
		}
	}
	if bound == nil || bound.Check != model.CheckPackageLoad || !strings.Contains(bound.Message, "128 MiB") {
		t.Fatalf("problems %+v, want a package-load problem naming zz-bomb.yaml and the 128 MiB memory limit", p.Problems)
	}
	if len(p.Providers) != 1 || p.Providers[0].Kind != "CoreProvider" {
		t.Fatalf("providers %+v: the package's other file must still load", p.Providers)
	}
}

// TestNoRenderChildrenWithoutProviderCharts: a tree whose charts hold no
// provider template starts no render child (warm waits for the first chart
// that renders).
func TestNoRenderChildrenWithoutProviderCharts(t *testing.T) {
	sb := render.New(nil)
	defer sb.Close()
	root := t.TempDir()
	for i := range 3 {
		dir := filepath.Join(root, fmt.Sprintf("app%d", i))
		if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "templates", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n"), 0o644)
	}
	tr := loadTree(t, root, Options{Render: testRenderLimits, Sandbox: sb})
	if len(tr.Packages) != 0 || len(tr.Skipped) != 3 {
		t.Fatalf("%d packages, %d skipped; want 0 and 3", len(tr.Packages), len(tr.Skipped))
	}
	if n := sb.Started(); n != 0 {
		t.Fatalf("%d render children started for a tree with no provider chart", n)
	}
	writeBombChart(t, root, "provider", "")
	noFast := testRenderLimits
	noFast.NoFastPath = true
	tr = loadTree(t, root, Options{Render: noFast, Sandbox: sb})
	if len(tr.Packages) != 1 {
		t.Fatalf("%d packages, want 1", len(tr.Packages))
	}
	if n := sb.Started(); n == 0 {
		t.Fatalf("no render child started for a provider chart")
	}
}

// TestFastPathStartsNoChild: a tree whose charts are all proven bounded
// renders them in process and starts no render child; one chart that is
// not (a range) starts one.
func TestFastPathStartsNoChild(t *testing.T) {
	sb := render.New(nil)
	defer sb.Close()
	root := t.TempDir()
	for i := range 3 {
		writeBombChart(t, root, fmt.Sprintf("p%d", i), "kind: ConfigMap\nmetadata:\n  name: {{ .Release.Name | quote }}\n")
	}
	tr := loadTree(t, root, Options{Render: testRenderLimits, Sandbox: sb})
	if len(tr.Packages) != 3 {
		t.Fatalf("%d packages, want 3", len(tr.Packages))
	}
	if n := sb.Started(); n != 0 {
		t.Fatalf("%d render children started for a tree of proven charts; want 0", n)
	}
	writeBombChart(t, root, "complex", "{{ range until 2 }}{{ end }}\n")
	tr = loadTree(t, root, Options{Render: testRenderLimits, Sandbox: sb})
	if len(tr.Packages) != 4 {
		t.Fatalf("%d packages, want 4", len(tr.Packages))
	}
	if n := sb.Started(); n != 1 {
		t.Fatalf("%d render children started for one chart that is not proven; want 1", n)
	}
}
