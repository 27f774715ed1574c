package gentree

import (
	"crypto/sha256"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// generateMonorepo writes the monorepo the bench times (4 provider
// packages at the bench's scale, the 160 measured charts) and measures it.
func generateMonorepo(t *testing.T, seed uint64) (string, *Result, map[string]ChartStats) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "mono")
	res, err := Generate(root, Options{Packages: 4, Size: 1 << 20, Seed: seed, Shape: Monorepo})
	if err != nil {
		t.Fatal(err)
	}
	charts, err := MeasureCharts(filepath.Join(root, "packages"))
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]ChartStats{}
	for _, c := range charts {
		byPath[c.Path] = c
	}
	return root, res, byPath
}

// measuredStats is the measured table as ChartStats.
func measuredStats() []ChartStats {
	out := make([]ChartStats, len(measuredOthers))
	for i, m := range measuredOthers {
		out[i] = ChartStats{Path: m.path, Files: m.files, Bytes: m.bytes, Values: m.values, Schema: m.schema,
			Templates: m.templates, TemplateBytes: m.templateBytes, Uses: m.uses,
			Subcharts: m.subcharts, SubFiles: m.subFiles, SubBytes: m.subBytes,
			SubTemplates: m.subTemplates, SubTemplateBytes: m.subTemplateBytes, SubUses: m.subUses,
			CRDFiles: m.crdFiles, CRDBytes: m.crdBytes, Actions: m.actions, SubActions: m.subActions}
	}
	return out
}

// TestMonorepoShapeIsMeasured holds the generated monorepo to the charts
// it was measured from (MeasuredMonorepo), measured the same way
// (MeasureCharts): chart by chart, the same files, templates, subcharts
// and their templates, values and schema bytes, the bytes within a few
// percent (a template the constructs it must use do not fit in comes out
// longer), every construct the measured chart's templates use; over the
// tree, the measured counts (227 charts, 164 top-level, 50 with
// subcharts, 63 subcharts) and distributions, template actions (what a
// render executes) included.
func TestMonorepoShapeIsMeasured(t *testing.T) {
	_, res, gen := generateMonorepo(t, 3)
	if len(gen) != len(measuredOthers)+len(res.Packages) || res.Others != len(measuredOthers) {
		t.Fatalf("%d top-level charts, %d others; want %d and %d", len(gen), res.Others, len(measuredOthers)+len(res.Packages), len(measuredOthers))
	}
	var others []ChartStats
	for _, m := range measuredOthers {
		g, ok := gen[m.path]
		if !ok {
			t.Errorf("%s: not generated", m.path)
			continue
		}
		others = append(others, g)
		for _, c := range []struct {
			what      string
			got, want int
		}{
			{"files", g.Files, m.files}, {"templates", g.Templates, m.templates}, {"values.yaml bytes", g.Values, m.values},
			{"values.schema.json bytes", g.Schema, m.schema}, {"subcharts", g.Subcharts, m.subcharts},
			{"files under charts/", g.SubFiles, m.subFiles}, {"subchart templates", g.SubTemplates, m.subTemplates},
		} {
			if c.got != c.want {
				t.Errorf("%s: %d %s, measured %d", m.path, c.got, c.what, c.want)
			}
		}
		for _, c := range []struct {
			what      string
			got, want int
			slack     int // bytes a template's constructs may add
		}{
			{"bytes", g.Bytes, m.bytes, 700 * (m.templates + m.subTemplates)},
			{"template bytes", g.TemplateBytes, m.templateBytes, 700 * m.templates},
			{"subchart template bytes", g.SubTemplateBytes, m.subTemplateBytes, 700 * m.subTemplates},
			{"bytes under charts/", g.SubBytes, m.subBytes, 700 * m.subTemplates},
		} {
			if c.got < c.want*99/100 || c.got > c.want*102/100+c.slack {
				t.Errorf("%s: %d %s, measured %d", m.path, c.got, c.what, c.want)
			}
		}
		if g.Uses&m.uses != m.uses || g.SubUses&m.subUses != m.subUses {
			t.Errorf("%s: templates use %v (subcharts %v), measured %v (%v)", m.path, g.Uses, g.SubUses, m.uses, m.subUses)
		}
	}

	// Over the tree, counted as docs/performance.md counts the real one.
	measured := measuredStats()
	count := func(cs []ChartStats) (charts, with, subs int) {
		for _, c := range cs {
			charts += 1 + c.Subcharts
			subs += c.Subcharts
			if c.Subcharts > 0 {
				with++
			}
		}
		return
	}
	gc, gw, gs := count(others)
	mc, mw, ms := count(measured)
	if gc != mc || gw != mw || gs != ms || mc+len(res.Packages) != 227 || mw != 50 || ms != 63 {
		t.Errorf("generated: %d charts, %d with subcharts, %d subcharts; measured %d (+%d provider packages: 227), %d (50), %d (63)", gc, gw, gs, mc, len(res.Packages), mw, ms)
	}
	for _, d := range []struct {
		what string
		f    func(ChartStats) int
		tol  float64 // of the measured figure
		abs  float64 // and this much
	}{
		{"bytes per chart", func(c ChartStats) int { return c.Bytes }, 0.03, 0},
		{"files per chart", func(c ChartStats) int { return c.Files }, 0, 0},
		{"templates per chart", func(c ChartStats) int { return c.Templates }, 0, 0},
		{"template bytes per chart", func(c ChartStats) int { return c.TemplateBytes }, 0.15, 0},
		{"subchart template bytes per chart", func(c ChartStats) int { return c.SubTemplateBytes }, 0.03, 0},
		// What a render executes: the lines of a template's constructs add
		// a few.
		{"template actions per chart", func(c ChartStats) int { return c.Actions }, 0.2, 12},
		{"subchart template actions per chart", func(c ChartStats) int { return c.SubActions }, 0.05, 12},
	} {
		g, m := Distribute(others, d.f), Distribute(measured, d.f)
		for _, q := range []struct {
			name      string
			got, want int
		}{{"median", g.Median, m.Median}, {"p90", g.P90, m.P90}, {"max", g.Max, m.Max}, {"sum", g.Sum, m.Sum}} {
			if diff := float64(q.got - q.want); diff < -d.tol*float64(q.want)-d.abs-0.5 || diff > d.tol*float64(q.want)+d.abs+0.5 {
				t.Errorf("%s, %s: generated %d, measured %d (within %.0f %% and %.0f)", d.what, q.name, q.got, q.want, 100*d.tol, d.abs)
			}
		}
	}
}

// TestMonorepoChartsAreTheirOwn: every chart's templates are its own
// bytes, the same for a seed and different under another.
func TestMonorepoChartsAreTheirOwn(t *testing.T) {
	tmp := t.TempDir()
	sums := map[string]map[string][32]byte{}
	for _, run := range []struct {
		name string
		seed uint64
	}{{"a", 5}, {"b", 5}, {"c", 6}} {
		root := filepath.Join(tmp, run.name)
		if n, err := writeOthers(root, Options{Seed: run.seed, Others: len(measuredOthers)}); err != nil || n != len(measuredOthers) {
			t.Fatal(n, err)
		}
		sums[run.name] = templateSums(t, filepath.Join(root, "packages"))
	}
	seen := map[[32]byte]string{}
	for chart, sum := range sums["a"] {
		if sums["b"][chart] != sum {
			t.Errorf("%s: other templates under the same seed", chart)
		}
		if sums["c"][chart] == sum {
			t.Errorf("%s: the same templates under another seed", chart)
		}
		if other, ok := seen[sum]; ok {
			t.Errorf("%s and %s have the same templates", chart, other)
		}
		seen[sum] = chart
	}
	if len(seen) < len(measuredOthers)-3 { // core/flux-aio, core/talos, core/testing have none
		t.Errorf("%d charts with templates, want %d", len(seen), len(measuredOthers)-3)
	}
}

// templateSums is the SHA-256 of the templates of each chart under root
// (charts without templates left out).
func templateSums(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	texts := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		chart, _, ok := strings.Cut(rel, "/templates/")
		if !ok {
			return nil
		}
		if top, _, sub := strings.Cut(chart, "/charts/"); sub {
			chart = top
		}
		data, err := os.ReadFile(p)
		texts[chart] = append(texts[chart], path.Base(rel)+"\x00"+string(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][32]byte{}
	for chart, ts := range texts {
		sort.Strings(ts)
		out[chart] = sha256.Sum256([]byte(strings.Join(ts, "\x00")))
	}
	return out
}
