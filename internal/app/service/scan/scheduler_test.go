package scan

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/report"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func errReport(checks ...string) *report.Report {
	r := &report.Report{SchemaVersion: report.SchemaVersion, Packages: []report.PackageSummary{}}
	for _, c := range checks {
		r.Findings = append(r.Findings, report.Finding{Check: c, Severity: report.Error, Package: "p", Message: c})
	}
	return r
}

// waitFor polls cond until it holds; the deadline only guards against hangs.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func finished(t *testing.T, st *store.Store, id int64) store.Scan {
	t.Helper()
	var sc store.Scan
	waitFor(t, "scan to finish", func() bool {
		var err error
		sc, err = st.Scan(context.Background(), id)
		return err == nil && sc.Status != store.Running
	})
	return sc
}

func TestTriggerOneAtATime(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	release := make(chan struct{})
	var results []Result
	var mu sync.Mutex
	s := New(Options{
		Store:   st,
		Sources: []Source{{Name: "tree"}, {Name: "other"}},
		Check: func(ctx context.Context, source string) (*report.Report, error) {
			if source == "tree" {
				<-release
			}
			return errReport("blob-yaml"), nil
		},
		Observe: func(r Result) { mu.Lock(); results = append(results, r); mu.Unlock() },
	})
	sc, err := s.Trigger(ctx, "tree", ByAPI)
	if err != nil || sc.Status != store.Running {
		t.Fatalf("Trigger = %+v, %v", sc, err)
	}
	var busy *BusyError
	if _, err := s.Trigger(ctx, "tree", BySchedule); !errors.As(err, &busy) || busy.Running != sc.ID {
		t.Fatalf("second Trigger: %v, want BusyError naming scan %d", err, sc.ID)
	}
	if id, ok := s.Running("tree"); !ok || id != sc.ID {
		t.Fatalf("Running(tree) = %d, %v", id, ok)
	}
	other, err := s.Trigger(ctx, "other", ByAPI)
	if err != nil {
		t.Fatalf("another source is independent: %v", err)
	}
	if got := finished(t, st, other.ID); got.Status != store.Succeeded {
		t.Fatalf("other scan %+v", got)
	}
	close(release)
	got := finished(t, st, sc.ID)
	if got.Status != store.Succeeded || got.Errors != 1 {
		t.Fatalf("scan %+v, want succeeded with 1 error", got)
	}
	waitFor(t, "observe", func() bool { mu.Lock(); defer mu.Unlock(); return len(results) == 2 })
	if _, ok := s.Running("tree"); ok {
		t.Fatal("source still marked running")
	}
	if _, err := s.Trigger(ctx, "nope", ByAPI); !errors.Is(err, ErrUnknownSource) {
		t.Fatalf("unknown source: %v", err)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trigger(ctx, "tree", ByAPI); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("Trigger after Shutdown: %v", err)
	}
}

func TestFailedScans(t *testing.T) {
	tests := []struct {
		name  string
		check CheckFunc
		want  string
	}{
		{"error", func(context.Context, string) (*report.Report, error) {
			return nil, errors.New("render packages/core: template: bad")
		}, "render packages/core"},
		{"panic", func(context.Context, string) (*report.Report, error) { panic("boom") }, "panic"},
		{"nil report", func(context.Context, string) (*report.Report, error) { return nil, nil }, "no report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			s := New(Options{Store: st, Sources: []Source{{Name: "tree"}}, Check: tt.check})
			sc, err := s.Trigger(context.Background(), "tree", ByAPI)
			if err != nil {
				t.Fatal(err)
			}
			got := finished(t, st, sc.ID)
			if got.Status != store.Failed || !strings.Contains(got.Error, tt.want) {
				t.Fatalf("scan %+v, want failed with %q", got, tt.want)
			}
		})
	}
}

func TestSchedule(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := openStore(t)
	// "recent" was scanned just now: its next scan is an hour away.
	prev, _ := st.Begin(ctx, "recent", BySchedule)
	st.Succeed(ctx, prev.ID, errReport())
	var calls, asked sync.Map // asked: the bounds the schedule asked Jitter for
	s := New(Options{
		Store:   st,
		Sources: []Source{{Name: "fast", Interval: 10 * time.Millisecond}, {Name: "recent", Interval: time.Hour}, {Name: "manual"}},
		Check: func(_ context.Context, source string) (*report.Report, error) {
			n, _ := calls.LoadOrStore(source, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return errReport(), nil
		},
		Jitter: func(max time.Duration) time.Duration {
			asked.Store(max, true)
			return 0
		},
	})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "three scheduled scans of fast", func() bool {
		scans, _ := st.Scans(ctx, "fast", 10)
		return len(scans) >= 3
	})
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"recent", "manual"} {
		if scans, _ := st.Scans(ctx, src, 10); len(scans) > 1 || (src == "manual" && len(scans) > 0) {
			t.Errorf("source %s was scanned on schedule: %+v", src, scans)
		}
	}
	scans, _ := st.Scans(ctx, "fast", 100)
	for _, sc := range scans {
		if sc.TriggeredBy != BySchedule || sc.Status != store.Succeeded {
			t.Errorf("scheduled scan %+v", sc)
		}
	}
	// Every scheduled scan is delayed by a jitter of up to a tenth of its interval.
	for _, max := range []time.Duration{MaxJitter(10 * time.Millisecond), MaxJitter(time.Hour)} {
		if _, ok := asked.Load(max); !ok {
			t.Errorf("the schedule never asked for a jitter of up to %v", max)
		}
	}
}

func TestDefaultJitter(t *testing.T) {
	s := New(Options{})
	seen := map[time.Duration]bool{}
	for range 100 {
		d := s.opts.Jitter(time.Hour)
		if d < 0 || d >= time.Hour {
			t.Fatalf("jitter %v outside [0, 1h)", d)
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Fatalf("the default jitter is constant: %v", seen)
	}
	if d := s.opts.Jitter(0); d != 0 {
		t.Fatalf("jitter of up to 0 = %v", d)
	}
}

func TestShutdown(t *testing.T) {
	defer func(g time.Duration) { cancelGrace = g }(cancelGrace)
	cancelGrace = 100 * time.Millisecond
	tests := []struct {
		name       string
		check      func(ctx context.Context, started chan<- struct{}, release <-chan struct{}) error
		finishSoon bool // release the check before shutdown's deadline
		wantStatus store.Status
		wantErr    string
		wantShut   string
	}{
		{"finishes in time", func(ctx context.Context, started chan<- struct{}, release <-chan struct{}) error {
			started <- struct{}{}
			<-release
			return nil
		}, true, store.Succeeded, "", ""},
		{"cancelled", func(ctx context.Context, started chan<- struct{}, _ <-chan struct{}) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}, false, store.Failed, "server shut down during the scan", ""},
		{"ignores cancellation", func(ctx context.Context, started chan<- struct{}, release <-chan struct{}) error {
			started <- struct{}{}
			<-release
			return nil
		}, false, store.Failed, "server shut down during the scan", "did not stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			started, release := make(chan struct{}, 1), make(chan struct{})
			defer close(release)
			s := New(Options{Store: st, Sources: []Source{{Name: "tree"}},
				Check: func(ctx context.Context, _ string) (*report.Report, error) {
					if err := tt.check(ctx, started, release); err != nil {
						return nil, err
					}
					return errReport(), nil
				}})
			sc, err := s.Trigger(context.Background(), "tree", ByAPI)
			if err != nil {
				t.Fatal(err)
			}
			<-started
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if tt.finishSoon {
				ctx = context.Background()
				go func() { release <- struct{}{} }()
			}
			err = s.Shutdown(ctx)
			if (tt.wantShut == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantShut)) {
				t.Fatalf("Shutdown: %v, want error %q", err, tt.wantShut)
			}
			got, _ := st.Scan(context.Background(), sc.ID)
			if got.Status != tt.wantStatus || !strings.Contains(got.Error, tt.wantErr) {
				t.Fatalf("scan after shutdown %+v, want %s with %q", got, tt.wantStatus, tt.wantErr)
			}
		})
	}
}

func TestWebhook(t *testing.T) {
	var events []Event
	var mu sync.Mutex
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, other.URL, http.StatusFound)
			return
		}
		var e Event
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &e); err != nil || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook body %s: %v", body, err)
		}
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}))
	defer hook.Close()

	st := openStore(t)
	reports := []*report.Report{
		errReport("blob-yaml"), // new error: event
		errReport("blob-yaml"), // nothing new: no event
		{Findings: []report.Finding{{Check: "pin-missing", Severity: report.Warning, Package: "p"}}}, // new warning only
	}
	var n atomic.Int32
	wh, err := NewWebhook(hook.URL+"/hook", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Store: st, Sources: []Source{{Name: "tree"}}, Webhook: wh,
		Check: func(context.Context, string) (*report.Report, error) { return reports[n.Add(1)-1], nil }})
	for range reports {
		sc, err := s.Trigger(context.Background(), "tree", ByAPI)
		if err != nil {
			t.Fatal(err)
		}
		finished(t, st, sc.ID)
		waitFor(t, "source idle", func() bool { _, busy := s.Running("tree"); return !busy })
	}
	s.Shutdown(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].Event != EventNewErrors || events[0].Source != "tree" ||
		len(events[0].Findings) != 1 || events[0].Findings[0].Check != "blob-yaml" {
		t.Fatalf("events %+v, want one naming the new blob-yaml error", events)
	}

	redirecting, _ := NewWebhook(hook.URL+"/redirect", time.Second)
	err = redirecting.Notify(context.Background(), store.Scan{Source: "tree"}, nil)
	if err == nil || !strings.Contains(err.Error(), "302") || elsewhere.Load() != 0 {
		t.Fatalf("redirect: err %v, %d requests elsewhere; want refused, none", err, elsewhere.Load())
	}
	if _, err := NewWebhook("file:///etc/passwd", time.Second); err == nil {
		t.Fatal("NewWebhook accepted a file URL")
	}
	secret, _ := NewWebhook("http://127.0.0.1:1/services/T000/B000/SECRET", time.Second)
	if err := secret.Notify(context.Background(), store.Scan{}, nil); err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("error %v: want a failure that does not repeat the URL path", err)
	}
}
