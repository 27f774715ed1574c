package releasesize

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/pinseal/pinseal/pkg/model"
)

// treeReleases is the release of every chart under root that loads and
// renders in process with no user values (Helm's engine, release "x" in
// namespace "ns", templates in name order as the loader adds them), keyed
// by the chart's directory relative to root.
func treeReleases(t testing.TB, root string) map[string]*Input {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "Chart.yaml" {
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	out := map[string]*Input{}
	for _, dir := range dirs {
		ch, err := loader.Load(dir)
		if err != nil {
			continue
		}
		vals, err := chartutil.ToRenderValues(ch, map[string]any{}, chartutil.ReleaseOptions{Name: "x", Namespace: "ns", IsInstall: true}, nil)
		if err != nil {
			continue
		}
		rendered, err := engine.Render(ch, vals)
		if err != nil {
			continue
		}
		in := &Input{Chart: ch, Values: map[string]any{}, Name: "x", Namespace: "ns"}
		for _, k := range slices.Sorted(maps.Keys(rendered)) {
			if text := rendered[k]; !strings.HasSuffix(k, "NOTES.txt") && strings.TrimSpace(text) != "" {
				in.AddManifest(k, text)
			}
		}
		rel, _ := filepath.Rel(root, dir)
		out[filepath.ToSlash(rel)] = in
	}
	return out
}

// TestReleaseStagesOnTree is a measuring tool, not a check: on the tree
// PINSEAL_RELSIZE_TREE names it counts the releases each stage of size
// reaches and takes the CPU time of each (this thread's: the stages run on
// one goroutine), against the stages without measureTwins. With
// PINSEAL_RELSIZE_EXACT=1 it also encodes every release exactly and logs
// where the bounds of each stage lie against the exact size; with
// PINSEAL_RELSIZE_EXACT=straddling, only those past the first stage.
func TestReleaseStagesOnTree(t *testing.T) {
	root := os.Getenv("PINSEAL_RELSIZE_TREE")
	if root == "" {
		t.Skip("PINSEAL_RELSIZE_TREE names no tree")
	}
	all := os.Getenv("PINSEAL_RELSIZE_EXACT") == "1"
	ins := treeReleases(t, root)
	var names []string
	for n := range ins {
		names = append(names, n)
	}
	sort.Strings(names)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	clock := func() time.Duration { return threadCPU(t) }
	var nTwin, nStream, nExact, twinBytes, yamlBytes int
	var took [4]time.Duration
	// The stages as they were before the twins were measured alone (the
	// whole JSON at streamLevel, then exact), from the same first bounds.
	var oldStream, oldExact int
	var oldTook time.Duration
	var loR, hiR, tloR, thiR, sloR, shiR []float64
	for _, name := range names {
		in := ins[name]
		log := stageLog{clock: clock}
		got := in.sizeStaged(&log)
		if lo, hi := in.bounds(); straddles(lo, hi) {
			t0 := clock()
			oldStream++
			if slo, shi, ok := in.streamBounds(); !ok || straddles(slo, shi) {
				oldExact++
				in.exact()
			}
			oldTook += clock() - t0
		}
		for i, d := range log.took {
			took[i] += d
		}
		nTwin += btoi(log.twin)
		twinBytes += log.twinBytes
		if log.twin {
			for _, tw := range in.parts().twins {
				yamlBytes += len(tw.yaml)
			}
		}
		nStream += btoi(log.stream)
		nExact += btoi(log.exact)
		if !all && !(log.twin && os.Getenv("PINSEAL_RELSIZE_EXACT") == "straddling") {
			continue
		}
		exact, _ := in.exact()
		e := float64(exact)
		p := in.parts()
		lo, hi := p.bounds(ratioTwin)
		loR, hiR = append(loR, float64(lo)/e), append(hiR, float64(hi)/e)
		tlo, thi := lo, hi
		if len(p.twins) > 0 {
			tlo, thi = p.bounds(measuredTwin)
			tloR, thiR = append(tloR, float64(tlo)/e), append(thiR, float64(thi)/e)
		}
		slo, shi, _ := in.streamBounds()
		sloR, shiR = append(sloR, float64(slo)/e), append(shiR, float64(shi)/e)
		if lo > exact || exact > hi || tlo > exact || exact > thi || slo > exact || exact > shi || got.Bytes < exact {
			t.Errorf("%s: exact %d outside the bounds [%d, %d], [%d, %d], [%d, %d] or over the size given %d", name, exact, lo, hi, tlo, thi, slo, shi, got.Bytes)
		}
		t.Logf("%s: exact %d (%.1f %%), bounds %.3f–%.3f, twin bounds %.3f–%.3f, stages %+v", name, exact, 100*e/model.ReleaseLimit,
			float64(lo)/e, float64(hi)/e, float64(tlo)/e, float64(thi)/e, log)
	}
	t.Logf("%d releases, CPU time: bounds %v; %d twin-bounded (%v; %d of their %d bytes of twins compressed); %d streamed (%v); %d encoded exactly (%v)",
		len(names), took[0], nTwin, took[1], twinBytes, yamlBytes, nStream, took[2], nExact, took[3])
	t.Logf("the same releases past the first bounds, streamed whole then encoded exactly: %d streamed, %d encoded exactly (%v)", oldStream, oldExact, oldTook)
	for _, r := range []struct {
		name string
		v    []float64
	}{{"lower bound", loR}, {"upper bound", hiR}, {"twin lower", tloR}, {"twin upper", thiR}, {"stream lower", sloR}, {"stream upper", shiR}} {
		if len(r.v) > 0 {
			sort.Float64s(r.v)
			t.Logf("%s / exact: min %.3f median %.3f max %.3f", r.name, r.v[0], r.v[len(r.v)/2], r.v[len(r.v)-1])
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReleaseStageCPU reports the CPU time (of this thread: the stages
// run on one goroutine) each stage of size takes on the release of the
// chart PINSEAL_RELSIZE_CHART names, the mean of ten runs: a measuring tool for a
// busy machine, where wall time says little.
func TestReleaseStageCPU(t *testing.T) {
	dir := os.Getenv("PINSEAL_RELSIZE_CHART")
	if dir == "" {
		t.Skip("PINSEAL_RELSIZE_CHART names no chart")
	}
	var in *Input
	for _, r := range treeReleases(t, dir) {
		in = r
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := in.parts()
	for _, st := range []struct {
		name string
		run  func()
	}{
		{"bounds", func() { in.bounds() }},
		{"twinBounds", func() { p.bounds(measuredTwin) }},
		{"streamBounds", func() { in.streamBounds() }},
		{"exact", func() { in.exact() }},
	} {
		const runs = 10
		t0 := threadCPU(t)
		for range runs {
			st.run()
		}
		t.Logf("%-12s %8.2f ms CPU", st.name, float64((threadCPU(t)-t0).Microseconds())/1000/runs)
	}
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		t.Skip("no per-thread CPU time here:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWritersReused: a writer put back is the one the next get returns,
// across a collection (where a sync.Pool drops what it holds); with none
// kept, get makes one; past its capacity, put drops the writer.
func TestWritersReused(t *testing.T) {
	made := 0
	p := newWriters(func() *[]byte { made++; b := make([]byte, 1); return &b })
	w := p.get()
	p.put(w)
	runtime.GC()
	runtime.GC()
	if got := p.get(); got != w || made != 1 {
		t.Errorf("after a put and two collections: got %p (made %d), want the writer put, %p, and none made", got, made, w)
	}
	if p.get() == w || made != 2 {
		t.Errorf("with none kept, get made %d writers, want a second one", made)
	}
	for range cap(p.free) + 1 {
		p.put(p.alloc())
	}
	if len(p.free) != cap(p.free) {
		t.Errorf("%d writers kept, want at most %d", len(p.free), cap(p.free))
	}
}
