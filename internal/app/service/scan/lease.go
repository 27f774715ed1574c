package scan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
)

// LeaseOptions make a Scheduler one of several replicas sharing the sources
// of one database. Instead of a timer per source, the replica polls the
// shared schedule and claims due sources with a lease (store.ClaimDue);
// it renews the lease while it scans and releases it after recording the
// scan. A replica that dies stops renewing: after TTL another replica
// claims the source, records the scan left running as failed, and scans it
// again.
type LeaseOptions struct {
	// Holder identifies this replica (host name and process id).
	Holder string
	// TTL is how long a lease lasts without renewal. Default 10s.
	TTL time.Duration
	// Poll is how often the replica looks for due sources. Default TTL/10
	// (at most 1s).
	Poll time.Duration
	// MaxConcurrent bounds the scans this replica runs at once, so that
	// due sources spread over the replicas. Default 4.
	MaxConcurrent int
}

// DefaultLeaseTTL is the lease TTL unless configured.
const DefaultLeaseTTL = 10 * time.Second

func (o *LeaseOptions) defaults() {
	if o.TTL <= 0 {
		o.TTL = DefaultLeaseTTL
	}
	if o.Poll <= 0 {
		o.Poll = min(o.TTL/10, time.Second)
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 4
	}
}

// startLeased creates the lease rows of this replica's sources (a source's
// first scan is due one interval after its last recorded scan, or soon when
// it has none) and starts the polling loop.
func (s *Scheduler) startLeased(ctx context.Context) error {
	s.opts.Lease.defaults()
	last, err := s.opts.Store.LastScans(ctx, "")
	if err != nil {
		return err
	}
	now := time.Now()
	first := map[string]time.Time{}
	intervals := map[string]time.Duration{}
	for _, src := range s.opts.Sources {
		if src.Interval <= 0 {
			first[src.Name] = time.Time{}
			continue
		}
		intervals[src.Name] = src.Interval
		due := now.Add(s.opts.Jitter(min(MaxJitter(src.Interval), startupSpread)))
		if sc, ok := last[src.Name]; ok && sc.StartedAt.Add(src.Interval).After(now) {
			due = sc.StartedAt.Add(src.Interval)
		}
		first[src.Name] = due
	}
	if err := s.opts.Store.EnsureLeases(ctx, first); err != nil {
		return err
	}
	ctx, s.stopLoops = context.WithCancel(ctx)
	s.loops.Add(1)
	go s.pollLeases(ctx, intervals)
	return nil
}

func (s *Scheduler) pollLeases(ctx context.Context, intervals map[string]time.Duration) {
	defer s.loops.Done()
	lo := s.opts.Lease
	ticker := time.NewTicker(lo.Poll)
	defer ticker.Stop()
	for {
		s.claimDue(ctx, intervals)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (s *Scheduler) claimDue(ctx context.Context, intervals map[string]time.Duration) {
	lo := s.opts.Lease
	s.mu.Lock()
	free := lo.MaxConcurrent - len(s.running)
	stopping := s.stopping
	// Sources running here are not claimed again (their lease is held).
	s.mu.Unlock()
	if free <= 0 || stopping || len(intervals) == 0 {
		return
	}
	claims, err := s.opts.Store.ClaimDue(ctx, lo.Holder, intervals, lo.TTL, free)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Error("claiming due sources", "err", err)
		}
		return
	}
	for _, c := range claims {
		if c.TakenOver != 0 {
			s.opts.Logger.Warn("took over a source whose replica lost its lease; its scan is recorded failed",
				"source", c.Source, "previousHolder", c.PreviousHolder, "scan", c.TakenOver)
		}
		if !c.Due {
			continue
		}
		if err := s.startClaimed(ctx, c.Source, BySchedule); err != nil {
			var busy *BusyError
			if !errors.As(err, &busy) && !errors.Is(err, ErrShuttingDown) {
				s.opts.Logger.Error("scheduled scan not started", "source", c.Source, "err", err)
			}
			s.release(c.Source)
		}
	}
}

// triggerLeased is Trigger under leases; s.mu is held.
func (s *Scheduler) triggerLeased(ctx context.Context, source, by string) (store.Scan, error) {
	lo := s.opts.Lease
	c, err := s.opts.Store.ClaimNow(ctx, lo.Holder, source, lo.TTL)
	if errors.Is(err, store.ErrBusy) {
		return store.Scan{}, &BusyError{}
	} else if err != nil {
		return store.Scan{}, err
	}
	if c.TakenOver != 0 {
		s.opts.Logger.Warn("took over a source whose replica lost its lease; its scan is recorded failed",
			"source", source, "previousHolder", c.PreviousHolder, "scan", c.TakenOver)
	}
	sc, err := s.beginLeasedLocked(ctx, source, by)
	if err != nil {
		s.release(source)
	}
	return sc, err
}

// startClaimed begins a scan of a source whose lease this replica holds.
func (s *Scheduler) startClaimed(ctx context.Context, source, by string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return ErrShuttingDown
	}
	if id, ok := s.running[source]; ok {
		return &BusyError{Running: id}
	}
	_, err := s.beginLeasedLocked(ctx, source, by)
	return err
}

func (s *Scheduler) beginLeasedLocked(ctx context.Context, source, by string) (store.Scan, error) {
	sc, err := s.opts.Store.BeginLeased(ctx, s.opts.Lease.Holder, source, by)
	return s.startLocked(source, sc, err)
}

// renew keeps this replica's lease on source while its scan runs; when the
// lease is lost (another replica took it over after the TTL, e.g. because
// the database was unreachable), the scan is cancelled. It returns a stop
// function and whether the lease was lost.
func (s *Scheduler) renew(source string, cancel context.CancelFunc) (stop func(), lost func() bool) {
	lo := s.opts.Lease
	var wasLost atomic.Bool
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(lo.TTL / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			// A renewal may take up to the TTL (a slow or reconnecting
			// database); after that the lease is lost anyway.
			ctx, c := context.WithTimeout(context.Background(), lo.TTL)
			err := s.opts.Store.Renew(ctx, lo.Holder, source, lo.TTL)
			c()
			if errors.Is(err, store.ErrLeaseLost) {
				s.opts.Logger.Error("lease lost during the scan; cancelling it", "source", source)
				wasLost.Store(true)
				cancel()
				return
			} else if err != nil {
				s.opts.Logger.Warn("renewing lease", "source", source, "err", err)
			}
		}
	}()
	return func() { close(done); wg.Wait() }, wasLost.Load
}

// release gives the lease on source back.
func (s *Scheduler) release(source string) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := s.opts.Store.Release(ctx, s.opts.Lease.Holder, source); err != nil {
		s.opts.Logger.Warn("releasing lease", "source", source, "err", fmt.Sprint(err))
	}
}
