package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestLeasedSchedulersShareSources: two schedulers in lease mode on one
// database scan each source once per interval between them, and an
// on-demand scan of a source the other one is scanning is refused.
func TestLeasedSchedulersShareSources(t *testing.T) {
	dir := t.TempDir()
	open := func() *store.Store {
		st, err := store.Open(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	// Short times: the interval is what is timed (each source scanned
	// once per interval between the replicas); the lease TTL only bounds a
	// takeover, which this test does not cause.
	const interval, ttl = 400 * time.Millisecond, time.Second
	var sources []Source
	for i := 0; i < 6; i++ {
		sources = append(sources, Source{Name: fmt.Sprintf("s%d", i), Interval: interval})
	}
	block := make(chan struct{})
	check := func(ctx context.Context, source string) (*report.Report, error) {
		if source == "s0" {
			select {
			case <-block:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		time.Sleep(5 * time.Millisecond)
		return errReport(), nil
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var scheds []*Scheduler
	for _, holder := range []string{"a", "b"} {
		s := New(Options{Store: open(), Sources: sources, Check: check, Logger: log,
			Jitter: func(time.Duration) time.Duration { return 0 },
			Lease:  &LeaseOptions{Holder: holder, TTL: ttl, Poll: 20 * time.Millisecond, MaxConcurrent: 2}})
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		scheds = append(scheds, s)
	}
	st := open()
	waitFor(t, "s0 to be scanning", func() bool {
		l, _ := st.Leases(context.Background())
		return l["s0"].ScanID != 0
	})
	l, _ := st.Leases(context.Background())
	other := scheds[0]
	if l["s0"].Holder == "a" {
		other = scheds[1]
	}
	var busy *BusyError
	if _, err := other.Trigger(context.Background(), "s0", ByAPI); !errors.As(err, &busy) {
		t.Fatalf("Trigger of a source the other replica scans: %v, want BusyError", err)
	}
	close(block)
	// Four scans of every source: how long that takes is the machine's
	// load, so the test waits for it rather than counting what a fixed
	// sleep saw.
	waitFor(t, "4 scans of every source", func() bool {
		n := map[string]int{}
		scans, _ := st.Scans(context.Background(), "", 1000)
		for _, sc := range scans {
			if sc.Status != store.Running {
				n[sc.Source]++
			}
		}
		for _, src := range sources {
			if n[src.Name] < 4 {
				return false
			}
		}
		return true
	})
	for _, s := range scheds {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	scans, err := st.Scans(context.Background(), "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]store.Scan{}
	replicas := map[string]bool{}
	for _, sc := range scans {
		by[sc.Source] = append(by[sc.Source], sc)
		replicas[sc.Replica] = true
	}
	if len(replicas) != 2 {
		t.Errorf("scans ran on %v, want both replicas", replicas)
	}
	// Never two scans of a source at once, by the recorded times (how
	// close two scans start is the load's business: a scan started late is
	// followed by one on time). No slot skipped: each scan starts within an
	// interval (plus timebound.Slack) of the time the source was due again
	// (an interval after the last start) and free (the last one finished).
	for _, src := range sources {
		ss := by[src.Name]
		sort.Slice(ss, func(i, j int) bool { return ss[i].StartedAt.Before(ss[j].StartedAt) })
		for i := 1; i < len(ss); i++ {
			prev, sc := ss[i-1], ss[i]
			if prev.FinishedAt == nil || sc.StartedAt.Before(*prev.FinishedAt) {
				t.Errorf("%s: scans %d (%s) and %d (%s) overlap: a double scan", src.Name, prev.ID, prev.Replica, sc.ID, sc.Replica)
				continue
			}
			free := prev.StartedAt.Add(interval)
			if prev.FinishedAt.After(free) {
				free = *prev.FinishedAt
			}
			if late := sc.StartedAt.Sub(free); timebound.Over(late, interval) {
				t.Errorf("%s: scan %d started %s after the source was due and free: a skipped interval", src.Name, sc.ID, late)
			}
		}
	}
}
