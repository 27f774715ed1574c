// Package server is the verifier service: its HTTP API, metrics and
// dashboard.
//
// It is the verifier service: the HTTP API described by
// api/openapi.yaml (on-demand verification of a registry artifact or an
// uploaded tree, scheduled drift scans with history, findings), Prometheus
// metrics, and a server-rendered dashboard. The verification itself is done
// by an Engine; history lives in internal/app/service/store; scans are run by
// internal/app/service/scan.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
	"k8s.io/utils/lru"

	"github.com/pinseal/pinseal/internal/app/service/scan"
	"github.com/pinseal/pinseal/internal/app/service/server/untar"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// ErrNotConfigured is what an Engine returns (wrapped, with what to change)
// when the service's configuration cannot verify what was asked, such as a
// policy that trusts no key; the service answers 503.
var ErrNotConfigured = errors.New("the service is not configured for this verification")

// Server is the verifier service.
type Server struct {
	cfg     *Config
	engine  Engine
	log     *slog.Logger
	store   *store.Store
	sched   *scan.Scheduler
	tokens  tokens
	metrics *metrics
	handler http.Handler
	// routePatterns are the handler's route patterns (metric labels).
	routePatterns map[string]bool

	sources   map[string]SourceConfig
	policy    *policyWatch            // the verify policy and its key files
	srcPolicy map[string]*policyWatch // each source's policy, by source name
	now       func() time.Time
	cache     *lru.Cache
	flights   singleflight.Group
	verifySem chan struct{}
	uploadDir string
	paths     *pathScrubber // takes dataDir out of what clients see
	lock      *os.File      // held while the Server owns the data directory
	// requests is the base of every request's context and of the
	// verifications requests share: it ends (cause errStopping) when a
	// shutdown has waited limits.shutdownTimeout for them.
	requests context.Context
	ready    atomic.Bool
	// admitter serves POST /admit; nil when admission is not configured.
	admitter *admitter
	// admitAddr is the address the admission listener serves on.
	admitAddr atomic.Value
}

// New opens the data directory, records as failed any scan a previous
// process left running (it was killed mid-scan), and builds the HTTP
// handler. Run serves it.
func New(ctx context.Context, cfg *Config, eng Engine, log *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	toks, err := loadTokens(cfg.TokensFile, os.Getenv(TokensEnv))
	if err != nil {
		return nil, err
	}
	// Every policy is read, parsed and validated once, here: a broken
	// policy file is a start-up error naming it.
	pw := &policyWatch{path: cfg.Policy}
	if _, err := pw.Fingerprint(); err != nil {
		return nil, fmt.Errorf("config policy: %w", err)
	}
	srcPolicy := map[string]*policyWatch{}
	for _, src := range cfg.Sources {
		w := &policyWatch{path: src.Policy}
		if _, err := w.Fingerprint(); err != nil {
			return nil, fmt.Errorf("source %s: %w", src.Name, err)
		}
		srcPolicy[src.Name] = w
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, cfg, eng, log, toks, pw, srcPolicy)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	s.warnUntrusted()
	return s, nil
}

// open builds the Server on the data directory New locked: the uploads
// a killed process left removed, the scan history opened, the scheduler,
// metrics and admission set up, the routes built.
func open(ctx context.Context, cfg *Config, eng Engine, log *slog.Logger, toks tokens, pw *policyWatch, srcPolicy map[string]*policyWatch) (*Server, error) {
	uploadDir, err := clearUploads(cfg.DataDir, log)
	if err != nil {
		return nil, err
	}
	st, lease, err := openHistory(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		engine:    eng,
		log:       log,
		store:     st,
		tokens:    toks,
		metrics:   newMetrics(),
		sources:   map[string]SourceConfig{},
		policy:    pw,
		srcPolicy: srcPolicy,
		now:       time.Now,
		cache:     lru.New(cfg.Limits.VerifyCacheEntries),
		verifySem: make(chan struct{}, cfg.Limits.MaxConcurrentVerifies),
		uploadDir: uploadDir,
		paths:     newPathScrubber(cfg.DataDir),
		requests:  context.Background(),
	}
	for _, src := range cfg.Sources {
		s.sources[src.Name] = src
	}
	if err := s.setUp(ctx, lease); err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// clearUploads makes the upload directory under dataDir and removes the
// uploads a killed process left behind in it (untar.RemoveAll copes with
// trees of any depth); a left-over it cannot remove is logged.
func clearUploads(dataDir string, log *slog.Logger) (string, error) {
	uploadDir := filepath.Join(dataDir, "uploads")
	if err := os.MkdirAll(uploadDir, 0o700); err != nil {
		return "", fmt.Errorf("create upload directory: %w", err)
	}
	old, _ := filepath.Glob(filepath.Join(uploadDir, "verify-*"))
	for _, d := range old {
		if err := untar.RemoveAll(d); err != nil {
			log.Warn("remove a left-over upload", "path", d, "err", err)
		}
	}
	return uploadDir, nil
}

// openHistory opens the scan history and, without a lease (one process
// owns the SQLite file: whatever it left running died with it), records
// the scans a previous process left running as failed. Replicas fail the
// scans of expired leases instead.
func openHistory(ctx context.Context, cfg *Config, log *slog.Logger) (*store.Store, *scan.LeaseOptions, error) {
	st, lease, err := openStore(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	if lease != nil {
		return st, lease, nil
	}
	n, err := st.FailRunning(ctx, "the server stopped during the scan (it was killed or crashed); the scan did not finish")
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	if n > 0 {
		log.Warn("recorded interrupted scans as failed", "count", n)
	}
	return st, nil, nil
}

// setUp gives s its scheduler, its metrics' first values from the
// history, its admission webhook (when configured) and its routes.
func (s *Server) setUp(ctx context.Context, lease *scan.LeaseOptions) error {
	if err := s.newScheduler(lease); err != nil {
		return err
	}
	if err := s.initMetrics(ctx); err != nil {
		return err
	}
	if err := s.setUpAdmission(); err != nil {
		return err
	}
	if len(s.tokens) == 0 {
		s.log.Warn("no bearer tokens configured (tokensFile, " + TokensEnv + "): POST endpoints refuse every request")
	}
	s.handler = s.routes()
	s.routePatterns = routePatterns(s.handler)
	return nil
}

// newScheduler schedules the configured sources' scans, under lease when
// replicas share the history, with the configured webhook told of each.
func (s *Server) newScheduler(lease *scan.LeaseOptions) error {
	var srcs []scan.Source
	for _, src := range s.cfg.Sources {
		srcs = append(srcs, scan.Source{Name: src.Name, Interval: src.Interval.D()})
	}
	var hook *scan.Webhook
	if s.cfg.Webhook != nil {
		var err error
		if hook, err = scan.NewWebhook(s.cfg.Webhook.URL, s.cfg.Webhook.Timeout.D()); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	s.sched = scan.New(scan.Options{
		Store:     s.store,
		Sources:   srcs,
		Check:     s.checkSource,
		CheckMeta: s.checkSourceMeta,
		Lease:     lease,
		Timeout:   s.cfg.Limits.ScanTimeout.D(),
		Observe:   s.observeScan,
		Webhook:   hook,
		Logger:    s.log,
	})
	return nil
}

// setUpAdmission makes the admitter that serves POST /admit when
// admission is configured.
func (s *Server) setUpAdmission() error {
	if s.cfg.Admission == nil {
		return nil
	}
	var err error
	if s.admitter, err = newAdmitter(s.cfg.Admission, s.engine, newGitTrees(s.cfg, s.engine, s.log)); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if s.admitter.lookup == nil {
		s.log.Warn("admission: the engine cannot look releases up: no release is vouched for")
	}
	return nil
}

// Handler is the HTTP handler of the service.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) checkSource(ctx context.Context, name string) (*report.Report, error) {
	src := s.sources[name]
	pol, _, err := s.sourcePolicy(name)
	if err != nil {
		return nil, err
	}
	rep, err := s.engine.CheckTree(ctx, src.Path, CheckOptions{Registry: src.Registry, Policy: pol})
	return rep, configHint(err, src.Policy)
}

// sourcePolicy is the parsed policy of source name as it is now (read
// again only when its file or a key file it names changed), with its
// fingerprint.
func (s *Server) sourcePolicy(name string) (*policy.Policy, string, error) {
	w := s.srcPolicy[name]
	if w == nil {
		return nil, "", fmt.Errorf("source %s is not configured", name)
	}
	pol, fp, err := w.Current()
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", name, err)
	}
	return pol, fp, nil
}

// Run starts the scheduled scans and serves on ln until ctx ends; then it
// stops taking requests, lets running requests and scans finish within
// limits.shutdownTimeout, stops the requests still running (each answered
// 503 with Retry-After), records the scans still running as failed, and
// closes the database.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	requests, stopRequests := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopRequests(nil)
	s.requests = requests
	srv := s.httpServer(requests)
	admitSrv, served, err := s.start(ctx, srv, ln)
	if err != nil {
		return err
	}
	s.ready.Store(true)
	s.log.Info("serving", "addr", ln.Addr().String(), "sources", len(s.cfg.Sources))
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	s.ready.Store(false)
	return s.shutdown(srv, admitSrv, serveErr, stopRequests)
}

// httpServer is the API's HTTP server: every request's context is based
// on requests, and slow clients are bounded on top of
// limits.requestTimeout.
func (s *Server) httpServer(requests context.Context) *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.Limits.ReadHeaderTimeout.D(),
		// A request's own deadline is limits.requestTimeout; these bound a
		// slow client on top of it.
		ReadTimeout:  s.cfg.Limits.RequestTimeout.D() + 5*time.Second,
		WriteTimeout: s.cfg.Limits.RequestTimeout.D() + 10*time.Second,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:  func(net.Listener) context.Context { return requests },
	}
}

// start starts the scheduler and the hourly retention, serves srv on ln
// and, when admission is configured, the admission listener (its server
// returned; nil without one). Either server's end is sent on served. On
// an error what was started is stopped and the data directory released.
func (s *Server) start(ctx context.Context, srv *http.Server, ln net.Listener) (admitSrv *http.Server, served chan error, err error) {
	if err := s.sched.Start(ctx); err != nil {
		s.store.Close()
		s.lock.Close()
		return nil, nil, err
	}
	s.prune(ctx, "")
	go s.pruneHourly(ctx)
	served = make(chan error, 2)
	go func() { served <- srv.Serve(ln) }()
	if s.admitter == nil {
		return nil, served, nil
	}
	if admitSrv, err = s.serveAdmission(ctx, srv, served); err != nil {
		srv.Close()
		s.sched.Shutdown(context.Background())
		s.store.Close()
		s.lock.Close()
		return nil, nil, err
	}
	return admitSrv, served, nil
}

// shutdown stops the servers (the admission one may be nil), the
// scheduler and the store within limits.shutdownTimeout and releases the
// data directory; serveErr is why serving ended early, if it did.
func (s *Server) shutdown(srv, admitSrv *http.Server, serveErr error, stopRequests context.CancelCauseFunc) error {
	s.log.Info("shutting down", "timeout", s.cfg.Limits.ShutdownTimeout.D())
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.Limits.ShutdownTimeout.D())
	defer cancel()
	errs := []error{}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		errs = append(errs, serveErr)
	}
	if admitSrv != nil {
		// Admission requests are bounded by their own timeout (30s at most).
		if err := admitSrv.Shutdown(sctx); err != nil {
			admitSrv.Close()
		}
	}
	if err := s.stopHTTP(sctx, srv, stopRequests); err != nil {
		errs = append(errs, err)
	}
	if err := s.sched.Shutdown(sctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.store.Close(); err != nil {
		errs = append(errs, err)
	}
	s.lock.Close()
	return errors.Join(errs...)
}

// stopHTTP lets srv's requests finish until sctx ends, then stops those
// still running: each is answered 503 with Retry-After (writeError),
// removes its upload and kills its render child (the loader ends with
// the request's context) before its handler returns; ShutdownGrace
// bounds that, and past it the connections are closed.
func (s *Server) stopHTTP(sctx context.Context, srv *http.Server, stopRequests context.CancelCauseFunc) error {
	if err := srv.Shutdown(sctx); err == nil {
		return nil
	}
	s.log.Warn("shutdown: stopping requests still running", "after", s.cfg.Limits.ShutdownTimeout.D())
	stopRequests(errStopping)
	gctx, gcancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer gcancel()
	if err := srv.Shutdown(gctx); err != nil {
		srv.Close()
		return fmt.Errorf("http shutdown: requests still running %s after they were stopped: %w", ShutdownGrace, err)
	}
	return nil
}

// errStopping ends the requests still running when a shutdown has waited
// limits.shutdownTimeout for them.
var errStopping = errors.New("the server is shutting down")

// ShutdownGrace is how long requests stopped at limits.shutdownTimeout have
// to answer and clean up; past it their connections are closed and the
// server exits.
const ShutdownGrace = 5 * time.Second

// retentionInterval is how often retention runs besides after each scan.
const retentionInterval = time.Hour

func (s *Server) pruneHourly(ctx context.Context) {
	t := time.NewTicker(retentionInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.prune(ctx, "")
		}
	}
}

// prune applies retention to source, or to every source in the history
// (configured or not) when source is "".
func (s *Server) prune(ctx context.Context, source string) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	sources := []string{source}
	if source == "" {
		var err error
		if sources, err = s.store.Sources(ctx); err != nil {
			s.log.Error("retention", "err", err)
			return
		}
	}
	for _, src := range sources {
		r := s.cfg.RetentionFor(src)
		var before time.Time
		if r.MaxAge > 0 {
			before = s.store.Now().Add(-r.MaxAge.D())
		}
		n, err := s.store.Prune(ctx, src, r.MaxScans, before)
		if err != nil {
			s.log.Error("retention", "source", src, "err", err)
			continue
		}
		if n > 0 {
			s.log.Info("retention: deleted old scans", "source", src, "count", n, "maxScans", r.MaxScans, "maxAge", r.MaxAge.D())
		}
	}
}

// Close releases the database of a Server that was never Run.
func (s *Server) Close() error {
	s.sched.Shutdown(context.Background())
	err := s.store.Close()
	s.lock.Close()
	return err
}
