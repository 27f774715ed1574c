package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pinseal/pinseal/internal/app/service/scan"
	"github.com/pinseal/pinseal/internal/app/service/store"
)

type metrics struct {
	reg          *prometheus.Registry
	scanDuration *prometheus.HistogramVec
	lastSuccess  *prometheus.GaugeVec
	openFindings *prometheus.GaugeVec
	requests     *prometheus.CounterVec
	reqDuration  *prometheus.HistogramVec
	verifyCache  *prometheus.CounterVec

	admissionDecisions *prometheus.CounterVec
	admissionProblems  *prometheus.CounterVec
	admissionDuration  *prometheus.HistogramVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		scanDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pinseal_scan_duration_seconds",
			Help:    "Duration of drift scans, by source and outcome (succeeded, failed).",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 16), // 50ms .. ~27m
		}, []string{"source", "status"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pinseal_scan_last_success_timestamp_seconds",
			Help: "Unix time the last successful scan of the source finished.",
		}, []string{"source"}),
		openFindings: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pinseal_open_findings",
			Help: "Open (not waived) findings, by source, check and severity.",
		}, []string{"source", "check", "severity"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pinseal_http_requests_total",
			Help: "HTTP requests, by method (other for a method outside HTTP's), route pattern (unmatched for none) and status code (a class such as 4xx for a code the API does not use).",
		}, []string{"method", "route", "code"}),
		reqDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pinseal_http_request_duration_seconds",
			Help:    "HTTP request duration, by method and route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"method", "route"}),
		verifyCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pinseal_verify_cache_requests_total",
			Help: "Artifact verifications answered from the cache (hit) or by the engine (miss).",
		}, []string{"result"}),
		admissionDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pinseal_admission_decisions_total",
			Help: "Admission decisions, by mode, outcome (allowed, refused, warned, audited) and whether the verdict came from the cache.",
		}, []string{"mode", "outcome", "cached"}),
		admissionProblems: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pinseal_admission_problems_total",
			Help: "Admission requests that broke a rule (the first one), by mode and rule: in audit mode what enforce would have refused.",
		}, []string{"mode", "rule"}),
		admissionDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pinseal_admission_duration_seconds",
			Help:    "Time to decide an admission request, by whether the verdict came from the cache.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"cached"}),
	}
	m.reg.MustRegister(m.admissionDecisions, m.admissionProblems, m.admissionDuration)
	m.reg.MustRegister(m.scanDuration, m.lastSuccess, m.openFindings, m.requests, m.reqDuration, m.verifyCache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Label values come from fixed sets, whatever the request: anyone can send
// a made-up method or path, and each new value would be a new series kept
// for the life of the process.
var (
	metricMethods = map[string]bool{
		http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
		http.MethodPatch: true, http.MethodDelete: true, http.MethodConnect: true,
		http.MethodOptions: true, http.MethodTrace: true,
	}
	metricCodes = map[int]bool{200: true, 202: true, 204: true, 304: true, 400: true, 401: true, 403: true,
		404: true, 405: true, 408: true, 409: true, 413: true, 415: true, 422: true, 429: true,
		500: true, 502: true, 503: true, 504: true}
)

func methodLabel(m string) string {
	if metricMethods[m] {
		return m
	}
	return "other"
}

func codeLabel(code int) string {
	if metricCodes[code] {
		return strconv.Itoa(code)
	}
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code/100) + "xx"
}

// routePatterns are the route patterns of h, the only route label values
// besides "unmatched".
func routePatterns(h http.Handler) map[string]bool {
	out := map[string]bool{}
	if routes, ok := h.(chi.Routes); ok {
		chi.Walk(routes, func(_, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
			out[route] = true
			return nil
		})
	}
	return out
}

// instrument counts and times requests by their route pattern (not the
// path, which would make a series per scan id), and logs them at debug level.
func (s *Server) instrument(next http.Handler) http.Handler {
	m := s.metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && s.routePatterns[rc.RoutePattern()] {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		elapsed := time.Since(start)
		method := methodLabel(r.Method)
		m.requests.WithLabelValues(method, route, codeLabel(status)).Inc()
		m.reqDuration.WithLabelValues(method, route).Observe(elapsed.Seconds())
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "request", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.Int("status", status), slog.Duration("elapsed", elapsed))
	})
}

// initMetrics loads the per-source gauges from the history.
func (s *Server) initMetrics(ctx context.Context) error {
	ok, err := s.store.LastScans(ctx, store.Succeeded)
	if err != nil {
		return err
	}
	for name := range s.sources {
		if sc, found := ok[name]; found && sc.FinishedAt != nil {
			s.metrics.lastSuccess.WithLabelValues(name).Set(float64(sc.FinishedAt.Unix()))
		}
		if err := s.refreshOpenFindings(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) refreshOpenFindings(ctx context.Context, source string) error {
	open, err := s.store.OpenFindings(ctx, source, "")
	if err != nil {
		return err
	}
	type key struct{ check, severity string }
	counts := map[key]int{}
	for _, f := range open {
		if f.Waiver == nil {
			counts[key{f.Check, string(f.Severity)}]++
		}
	}
	s.metrics.openFindings.DeletePartialMatch(prometheus.Labels{"source": source})
	for k, n := range counts {
		s.metrics.openFindings.WithLabelValues(source, k.check, k.severity).Set(float64(n))
	}
	return nil
}

// observeScan updates the scan metrics after each scan.
func (s *Server) observeScan(res scan.Result) {
	sc := res.Scan
	s.prune(context.Background(), sc.Source)
	s.metrics.scanDuration.WithLabelValues(sc.Source, string(sc.Status)).Observe(res.Duration.Seconds())
	if sc.Status != store.Succeeded {
		return
	}
	if sc.FinishedAt != nil {
		s.metrics.lastSuccess.WithLabelValues(sc.Source).Set(float64(sc.FinishedAt.Unix()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.refreshOpenFindings(ctx, sc.Source); err != nil {
		s.log.Error("refresh open findings metric", "source", sc.Source, "err", err)
	}
}
