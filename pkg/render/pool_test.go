package render

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/pinseal/pinseal/internal/testkit/chartbomb"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// TestMain lets this test binary be the render child (see MaybeRunChild).
func TestMain(m *testing.M) {
	MaybeRunChild()
	os.Exit(m.Run())
}

var testLimits = Limits{Timeout: 2 * time.Second, MaxMemory: 256 << 20, MaxOutput: 1 << 20}

// bombChart is a chart with the provider template and the template bomb
// (when not "").
func bombChart(bomb string) Chart {
	files := []*loader.BufferedFile{
		{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: bomb\nversion: 0.1.0\n")},
		{Name: "templates/provider.yaml", Data: []byte(chartbomb.ProviderTemplate)},
	}
	if bomb != "" {
		files = append(files, &loader.BufferedFile{Name: "templates/zz-bomb.yaml", Data: []byte(bomb)})
	}
	return Chart{Files: files, Namespace: "default", Limits: testLimits}
}

// mustRender renders c and fails unless it rendered the provider template.
func mustRender(t *testing.T, s *Sandbox, c Chart) {
	t.Helper()
	r, prob := s.Render(context.Background(), c)
	if prob != nil {
		t.Fatalf("render: %+v", prob)
	}
	if r.Err != nil || !strings.Contains(r.Rendered["bomb/templates/provider.yaml"], "CoreProvider") {
		t.Fatalf("render: %v, %v", r.Err, r.Rendered)
	}
}

// TestRenderWorkers: a child that rendered within bounds renders the next
// chart too; one that passed a bound is gone, and the next chart gets a new
// one.
func TestRenderWorkers(t *testing.T) {
	s := New(nil)
	defer s.Close()
	for range 5 {
		mustRender(t, s, bombChart(""))
	}
	if n := s.Started(); n != 1 {
		t.Fatalf("%d render children started for 5 charts in a row, want 1", n)
	}
	if _, prob := s.Render(context.Background(), bombChart(chartbomb.MemoryBomb)); prob == nil || !strings.Contains(prob.Message, "memory limit") {
		t.Fatalf("bomb: %+v", prob)
	}
	mustRender(t, s, bombChart(""))
	if n := s.Started(); n != 2 {
		t.Fatalf("%d render children started, want 2 (one replaced the bomb's)", n)
	}
	// An idle child that died is replaced, not reported.
	s.pool.mu.Lock()
	for _, w := range s.pool.idle {
		w.kill()
		<-w.exited
	}
	s.pool.mu.Unlock()
	mustRender(t, s, bombChart(""))
}

// TestRenderChildBackstop: a render child whose parent stopped caring (or
// died) ends a chart that runs past its time bound by itself.
func TestRenderChildBackstop(t *testing.T) {
	s := New(nil)
	w, err := s.startWorker(256 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer w.kill()
	req := renderRequest{Seq: 1, Timeout: 500 * time.Millisecond, MaxOutput: 1 << 20, Files: []renderFile{
		{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: bomb\nversion: 0.1.0\n")},
		{Name: "templates/bomb.yaml", Data: []byte(chartbomb.TimeBomb)},
	}}
	if err := w.enc.Encode(&req); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.exited:
	case <-time.After(req.Timeout + childBackstopGrace + timebound.Slack):
		t.Fatalf("the render child still runs %s into a chart bounded to %s (its backstop is the bound + %s)", req.Timeout+childBackstopGrace+timebound.Slack, req.Timeout, childBackstopGrace)
	}
	code := w.cmd.ProcessState.ExitCode()
	if code != 4 && code != 5 {
		t.Fatalf("render child exit code %d (%v), want 4 (watchdog) or 5 (CPU limit)", code, w.waitErr)
	}
}

// TestRenderHookMissing: a program that did not call MaybeRunChild gets a
// clear problem, not a child that cannot render.
func TestRenderHookMissing(t *testing.T) {
	hookWired.Store(false)
	defer hookWired.Store(true)
	s := New(nil)
	defer s.Close()
	_, prob := s.Render(context.Background(), bombChart(""))
	if prob == nil || !strings.Contains(prob.Message, "MaybeRunChild") {
		t.Fatalf("want a problem naming MaybeRunChild, got %+v", prob)
	}
	if s.Started() != 0 {
		t.Fatalf("%d children started", s.Started())
	}
}

// TestRenderWarm: Warm starts render children ahead of the charts, and the
// charts then render in those: no more children start than the render
// slots, however many charts there are.
func TestRenderWarm(t *testing.T) {
	s := New(nil)
	defer s.Close()
	mem := testLimits.MaxMemory
	s.Warm(6, testLimits)
	s.pool.mu.Lock()
	for s.pool.warming[mem] > 0 {
		s.pool.ready.Wait()
	}
	idle := len(s.pool.idle)
	s.pool.mu.Unlock()
	most := cap(s.slots)
	if n := s.Started(); n != int64(most) || idle != most {
		t.Fatalf("Warm started %d children (%d idle), want %d (the render slots)", n, idle, most)
	}
	for range 6 {
		mustRender(t, s, bombChart(""))
	}
	if n := s.Started(); n != int64(most) {
		t.Fatalf("%d render children started for 6 charts, want %d (the warm ones)", n, most)
	}
}

// TestClose: after a render, Close leaves no idle child and every child it
// ended has been reaped.
func TestClose(t *testing.T) {
	s := New(nil)
	mustRender(t, s, bombChart(""))
	s.pool.mu.Lock()
	idle := slices.Clone(s.pool.idle)
	s.pool.mu.Unlock()
	if len(idle) == 0 {
		t.Fatal("no idle render child after a render")
	}
	s.Close()
	s.pool.mu.Lock()
	left := len(s.pool.idle)
	s.pool.mu.Unlock()
	if left != 0 {
		t.Errorf("%d idle render children left", left)
	}
	for _, w := range idle {
		select {
		case <-w.exited:
		default:
			t.Errorf("render child %d not reaped", w.cmd.Process.Pid)
		}
	}
}
