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

	"github.com/pinseal/pinseal/internal/service/store"
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
	const interval = 400 * time.Millisecond
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
			Lease:  &LeaseOptions{Holder: holder, TTL: time.Second, Poll: 20 * time.Millisecond, MaxConcurrent: 2}})
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
	time.Sleep(5 * interval)
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
	for _, src := range sources[1:] {
		ss := by[src.Name]
		sort.Slice(ss, func(i, j int) bool { return ss[i].StartedAt.Before(ss[j].StartedAt) })
		if len(ss) < 4 {
			t.Errorf("%s scanned %d times in 5 intervals", src.Name, len(ss))
		}
		for i := 1; i < len(ss); i++ {
			if gap := ss[i].StartedAt.Sub(ss[i-1].StartedAt); gap < interval/2 {
				t.Errorf("%s: scans %d and %d %s apart: a double scan", src.Name, ss[i-1].ID, ss[i].ID, gap)
			}
		}
	}
}
