// Package scan runs the service's drift scans, on schedule and on demand.
//
// It runs drift scans of the service's sources: on each source's
// interval (with jitter) and on demand, never two of one source at once,
// recording every scan, its report and its failure in the store.
package scan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/report"
)

// Who started a scan.
const (
	BySchedule = "schedule"
	ByAPI      = "api"
)

// Errors Trigger returns.
var (
	ErrUnknownSource = errors.New("unknown source")
	ErrShuttingDown  = errors.New("the server is shutting down")
)

// BusyError says a source already has a running scan.
type BusyError struct{ Running int64 }

func (e *BusyError) Error() string {
	return fmt.Sprintf("scan %d of this source is still running; wait for it to finish", e.Running)
}

// Source is something to scan on an interval.
type Source struct {
	Name     string
	Interval time.Duration
}

// CheckFunc verifies a source and returns its report.
type CheckFunc func(ctx context.Context, source string) (*report.Report, error)

// Result is a finished scan.
type Result struct {
	Scan     store.Scan     // as recorded: succeeded or failed
	Report   *report.Report // nil when the scan failed
	Changes  store.Changes  // findings opened and resolved (empty when failed)
	Duration time.Duration
}

// Options configure a Scheduler.
type Options struct {
	Store   *store.Store
	Sources []Source
	Check   CheckFunc
	// Timeout bounds one scan (0: no bound beyond shutdown).
	Timeout time.Duration
	// Observe is called after each scan is recorded (metrics).
	Observe func(Result)
	// Webhook, if set, is told about scans that found new error findings.
	Webhook *Webhook
	Logger  *slog.Logger
	// Jitter returns a random duration in [0, max); tests fix it.
	Jitter func(max time.Duration) time.Duration
	// CheckMeta, when set, is called instead of Check; the Meta (git
	// revision, fingerprint) is recorded with the scan.
	CheckMeta func(ctx context.Context, source string) (*report.Report, store.Meta, error)
	// Lease, when set, shares the sources with other replicas on the same
	// database through per-source leases (see lease.go).
	Lease *LeaseOptions
}

// Scheduler starts and records scans.
type Scheduler struct {
	opts    Options
	sources map[string]Source

	// scanCtx is the parent of every running scan; cancelled when Shutdown
	// stops waiting for them.
	scanCtx    context.Context
	cancelScan context.CancelFunc
	stopLoops  context.CancelFunc // set by Start

	mu       sync.Mutex
	running  map[string]int64 // source -> running scan id
	stopping bool
	scans    sync.WaitGroup // running scans
	loops    sync.WaitGroup
}

// New makes a Scheduler; call Start for the scheduled scans.
func New(opts Options) *Scheduler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Jitter == nil {
		opts.Jitter = func(max time.Duration) time.Duration {
			if max <= 0 {
				return 0
			}
			return rand.N(max)
		}
	}
	s := &Scheduler{opts: opts, sources: map[string]Source{}, running: map[string]int64{}}
	for _, src := range opts.Sources {
		s.sources[src.Name] = src
	}
	s.scanCtx, s.cancelScan = context.WithCancel(context.Background())
	return s
}

// MaxJitter is the most a scheduled scan is delayed beyond its interval: a
// tenth of it, so that sources with one interval spread out.
func MaxJitter(interval time.Duration) time.Duration { return interval / 10 }

// startupSpread bounds the delay of a source's first scan when it is due
// (never scanned, or its interval passed while the server was down).
const startupSpread = 5 * time.Second

// Start runs each source's schedule until ctx ends or Shutdown. The first
// scan of a source is due one interval after its last recorded scan, so a
// restart does not rescan everything at once.
func (s *Scheduler) Start(ctx context.Context) error {
	if s.opts.Lease != nil {
		return s.startLeased(ctx)
	}
	last, err := s.opts.Store.LastScans(ctx, "")
	if err != nil {
		return err
	}
	ctx, s.stopLoops = context.WithCancel(ctx)
	now := time.Now()
	for _, src := range s.opts.Sources {
		if src.Interval <= 0 {
			continue
		}
		delay := s.opts.Jitter(min(MaxJitter(src.Interval), startupSpread))
		if sc, ok := last[src.Name]; ok {
			if due := sc.StartedAt.Add(src.Interval); due.After(now) {
				delay = due.Sub(now) + s.opts.Jitter(MaxJitter(src.Interval))
			}
		}
		s.loops.Add(1)
		go s.loop(ctx, src, delay)
	}
	return nil
}

func (s *Scheduler) loop(ctx context.Context, src Source, delay time.Duration) {
	defer s.loops.Done()
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if _, err := s.Trigger(ctx, src.Name, BySchedule); err != nil {
			var busy *BusyError
			if errors.As(err, &busy) {
				s.opts.Logger.Info("scheduled scan skipped: previous scan still running", "source", src.Name, "scan", busy.Running)
			} else if !errors.Is(err, ErrShuttingDown) {
				s.opts.Logger.Error("scheduled scan not started", "source", src.Name, "err", err)
			}
		}
		timer.Reset(src.Interval + s.opts.Jitter(MaxJitter(src.Interval)))
	}
}

// Trigger starts a scan of source now and returns it, running. It fails with
// a *BusyError when the source has a running scan.
func (s *Scheduler) Trigger(ctx context.Context, source, by string) (store.Scan, error) {
	if _, ok := s.sources[source]; !ok {
		return store.Scan{}, fmt.Errorf("%w %q", ErrUnknownSource, source)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return store.Scan{}, ErrShuttingDown
	}
	if id, ok := s.running[source]; ok {
		return store.Scan{}, &BusyError{Running: id}
	}
	if s.opts.Lease != nil {
		return s.triggerLeased(ctx, source, by)
	}
	sc, err := s.opts.Store.Begin(ctx, source, by)
	return s.startLocked(source, sc, err)
}

// startLocked runs the scan sc the store just began (err from Begin or
// BeginLeased: ErrBusy when another process or replica runs one).
func (s *Scheduler) startLocked(source string, sc store.Scan, err error) (store.Scan, error) {
	if errors.Is(err, store.ErrBusy) {
		return store.Scan{}, &BusyError{}
	} else if err != nil {
		return store.Scan{}, err
	}
	s.running[source] = sc.ID
	s.scans.Add(1)
	go s.run(sc)
	return sc, nil
}

// Running returns the id of the running scan of source, if any.
func (s *Scheduler) Running(source string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.running[source]
	return id, ok
}

// cancelGrace is how long Shutdown waits for cancelled scans to stop.
var cancelGrace = 5 * time.Second

// recordTimeout bounds recording a finished scan; it does not depend on the
// scan's own context, which may be cancelled.
const recordTimeout = 30 * time.Second

func (s *Scheduler) run(sc store.Scan) {
	defer s.scans.Done()
	log := s.opts.Logger.With("source", sc.Source, "scan", sc.ID)
	log.Info("scan started", "by", sc.TriggeredBy)

	ctx, cancel := context.WithCancel(s.scanCtx)
	if s.opts.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, s.opts.Timeout)
	}
	var lost func() bool
	if s.opts.Lease != nil {
		var stopRenew func()
		stopRenew, lost = s.renew(sc.Source, cancel)
		defer func() { stopRenew(); s.release(sc.Source) }()
	}
	start := time.Now()
	rep, meta, err := s.check(ctx, sc.Source)
	cancel()
	dur := time.Since(start)
	if lost != nil && lost() && err != nil {
		err = fmt.Errorf("%w: %v", store.ErrLeaseLost, err)
	}

	rctx, rcancel := context.WithTimeout(context.Background(), recordTimeout)
	defer rcancel()
	if meta != (store.Meta{}) {
		if merr := s.opts.Store.SetMeta(rctx, sc.ID, meta); merr != nil {
			log.Error("recording the scan's revision", "err", merr)
		}
	}
	res := Result{Duration: dur}
	if err == nil {
		res.Changes, err = s.opts.Store.Succeed(rctx, sc.ID, rep)
		if err == nil {
			res.Report = rep
		}
	}
	if err != nil && !errors.Is(err, store.ErrNotRunning) {
		msg := err.Error()
		if s.scanCtx.Err() != nil {
			msg = "server shut down during the scan: " + msg
		} else if errors.Is(err, context.DeadlineExceeded) && s.opts.Timeout > 0 && dur >= s.opts.Timeout {
			msg = fmt.Sprintf("the scan took longer than limits.scanTimeout (%s) and was stopped: %s", s.opts.Timeout, msg)
		}
		if ferr := s.opts.Store.Fail(rctx, sc.ID, msg); ferr != nil && !errors.Is(ferr, store.ErrNotRunning) {
			log.Error("recording failed scan", "err", ferr)
		}
	}
	res.Scan, _ = s.opts.Store.Scan(rctx, sc.ID)
	if res.Scan.ID == 0 {
		res.Scan = sc
	}

	s.mu.Lock()
	delete(s.running, sc.Source)
	s.mu.Unlock()

	if res.Scan.Status == store.Succeeded {
		log.Info("scan succeeded", "duration", dur, "errors", res.Scan.Errors, "warnings", res.Scan.Warnings,
			"new", len(res.Changes.New), "resolved", len(res.Changes.Resolved))
	} else {
		log.Warn("scan failed", "duration", dur, "err", res.Scan.Error)
	}
	if s.opts.Observe != nil {
		s.opts.Observe(res)
	}
	if s.opts.Webhook != nil && res.Scan.Status == store.Succeeded {
		if news := NewErrors(res.Changes); len(news) > 0 {
			if err := s.opts.Webhook.Notify(rctx, res.Scan, news); err != nil {
				log.Error("webhook", "err", err)
			}
		}
	}
}

// check runs the check function, turning a panic into an error so that one
// bad tree cannot take the service down.
func (s *Scheduler) check(ctx context.Context, source string) (rep *report.Report, meta store.Meta, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("scan panicked", "source", source, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error (panic) while scanning: %v", p)
		}
	}()
	if s.opts.CheckMeta != nil {
		rep, meta, err = s.opts.CheckMeta(ctx, source)
	} else {
		rep, err = s.opts.Check(ctx, source)
	}
	if err == nil && rep == nil {
		err = errors.New("internal error: the engine returned no report")
	}
	return rep, meta, err
}

// NewErrors are the new findings of severity error that no waiver covers.
func NewErrors(ch store.Changes) []store.Finding {
	var out []store.Finding
	for _, f := range ch.New {
		if f.Severity == report.Error && f.Waiver == nil {
			out = append(out, f)
		}
	}
	return out
}

// Shutdown stops the schedule and waits for running scans until ctx ends;
// then it cancels them, and they are recorded failed. Scans cannot be
// triggered afterwards.
func (s *Scheduler) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	if s.stopLoops != nil {
		s.stopLoops()
	}
	s.loops.Wait()

	done := make(chan struct{})
	go func() { s.scans.Wait(); close(done) }()
	select {
	case <-done:
		s.cancelScan()
		return nil
	case <-ctx.Done():
	}
	s.opts.Logger.Warn("shutdown: cancelling running scans")
	s.cancelScan()
	select {
	case <-done:
		return nil
	case <-time.After(cancelGrace):
	}
	// A check that ignores cancellation: record its scan failed ourselves.
	s.mu.Lock()
	stuck := make([]int64, 0, len(s.running))
	for _, id := range s.running {
		stuck = append(stuck, id)
	}
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	for _, id := range stuck {
		if err := s.opts.Store.Fail(rctx, id, "server shut down during the scan"); err != nil && !errors.Is(err, store.ErrNotRunning) {
			return err
		}
	}
	return fmt.Errorf("shutdown: %d scan(s) did not stop when cancelled; recorded them failed", len(stuck))
}
