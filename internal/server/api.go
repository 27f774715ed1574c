package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/pinseal/pinseal/api"
	"github.com/pinseal/pinseal/internal/scan"
	"github.com/pinseal/pinseal/internal/server/untar"
	"github.com/pinseal/pinseal/internal/store"
	"github.com/pinseal/pinseal/pkg/report"
)

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.instrument, s.recoverPanics, s.requestTimeout)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, http.StatusNotFound, "no such path: "+r.URL.Path)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
	})

	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.Get("/openapi.yaml", serveDocument("application/yaml", api.OpenAPI))
	r.Get("/report.schema.json", serveDocument("application/schema+json", api.ReportSchema))
	r.Group(func(r chi.Router) {
		r.Use(s.readAccess)
		r.Method(http.MethodGet, "/metrics", s.metrics.handler())
		r.Get("/", s.dashboard)
		r.Get("/scans/{id}", s.scanPage)
		r.Get("/v1/sources", s.listSources)
		r.Get("/v1/scans", s.listScans)
		r.Get("/v1/scans/{id}", s.getScan)
		r.Get("/v1/findings", s.listFindings)
	})
	r.Group(func(r chi.Router) {
		r.Use(s.requireToken, s.limitBody)
		r.Post("/v1/verify", s.verify)
		r.Post("/v1/scans", s.startScan)
	})
	return r
}

// apiError is the body of every error response.
type apiError struct {
	Error string `json:"error"`
	Scan  int64  `json:"scan,omitempty"` // 409: the running scan
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encode response", "err", err)
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal error: could not encode the response"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status >= 500 {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", msg)
	}
	s.writeJSON(w, status, apiError{Error: msg})
}

func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic serving request", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				s.writeError(w, r, http.StatusInternalServerError, "internal error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) requestTimeout(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Limits.RequestTimeout.D())
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.Limits.MaxBodyBytes {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, bodyTooLarge(s.cfg.Limits.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.Limits.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func bodyTooLarge(max int64) string {
	return fmt.Sprintf("request body larger than %d bytes (limits.maxBodyBytes)", max)
}

func serveDocument(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		s.writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready: starting or shutting down"})
		return
	}
	if err := s.store.Ping(r.Context()); err != nil {
		s.writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready: database: " + err.Error()})
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// decodeJSON reads a JSON body strictly: one object, no unknown fields.
func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value in the body")
	}
	return nil
}

// bodyError answers a body that could not be read or decoded.
func (s *Server) bodyError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, bodyTooLarge(mbe.Limit))
		return
	}
	s.writeError(w, r, http.StatusBadRequest, "request body: "+err.Error())
}

// engineError answers an error of the engine or of waiting for it.
func (s *Server) engineError(w http.ResponseWriter, r *http.Request, what string, err error) {
	switch {
	case errors.Is(err, ErrEngineUnavailable), errors.Is(err, ErrNotConfigured):
		s.writeError(w, r, http.StatusServiceUnavailable, what+": "+err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		s.writeError(w, r, http.StatusGatewayTimeout, what+": took longer than limits.requestTimeout")
	default:
		s.writeError(w, r, http.StatusBadGateway, what+": "+err.Error())
	}
}

// acquire takes a verification slot, waiting at most until ctx ends.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	select {
	case s.verifySem <- struct{}{}:
		return func() { <-s.verifySem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free verification slot (limits.maxConcurrentVerifies): %w", ctx.Err())
	}
}

// verify is POST /v1/verify: a registry artifact ({"ref": …}) or an uploaded
// tree (a .tar.gz body).
func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case err != nil:
		s.writeError(w, r, http.StatusUnsupportedMediaType, "Content-Type: want application/json ({\"ref\": …}) or application/gzip (a .tar.gz of a tree)")
	case mt == "application/json":
		s.verifyRef(w, r)
	case mt == "application/gzip" || mt == "application/x-gzip":
		s.verifyUpload(w, r)
	default:
		s.writeError(w, r, http.StatusUnsupportedMediaType, "Content-Type "+mt+": want application/json ({\"ref\": …}) or application/gzip (a .tar.gz of a tree)")
	}
}

type verifyRequest struct {
	Ref string `json:"ref"`
}

func (s *Server) verifyRef(w http.ResponseWriter, r *http.Request) {
	var req verifyRequest
	if err := decodeJSON(r, &req); err != nil {
		s.bodyError(w, r, err)
		return
	}
	ref, err := name.ParseReference(req.Ref, name.StrictValidation)
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("ref %q: %v (want HOST[:PORT]/REPOSITORY:TAG or @sha256:…)", req.Ref, err))
		return
	}
	repo := ref.Context().RegistryStr() + "/" + ref.Context().RepositoryStr()
	if !s.cfg.registryAllowed(repo) {
		s.writeError(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("ref %s: repository %s is not within the registries allowlist of this service (the operator adds it, or its registry, to the config's registries)", req.Ref, repo))
		return
	}
	digest := ref.Identifier()
	if _, byDigest := ref.(name.Digest); !byDigest {
		if digest, err = s.engine.Resolve(r.Context(), ref.String()); err != nil {
			s.engineError(w, r, "resolve "+ref.String(), err)
			return
		}
	}
	pinned := repo + "@" + digest
	// Keyed by repository too: one manifest digest may be pushed to several
	// repositories, and its signatures and attestations live in each one.
	key := pinned + " " + s.policyHash
	w.Header().Set("Pinseal-Digest", digest)
	if body, ok := s.cache.Get(key); ok {
		s.metrics.verifyCache.WithLabelValues("hit").Inc()
		w.Header().Set("Pinseal-Cache", "hit")
		writeRaw(w, body.([]byte))
		return
	}
	s.metrics.verifyCache.WithLabelValues("miss").Inc()
	// Concurrent requests for one artifact share one verification, which
	// therefore does not end with the first caller's request.
	v, err, _ := s.flights.Do(key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.Limits.RequestTimeout.D())
		defer cancel()
		release, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		rep, err := s.engine.VerifyArtifact(ctx, pinned, VerifyOptions{Policy: s.cfg.Policy})
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(rep)
		if err != nil {
			return nil, err
		}
		s.cache.Add(key, body)
		return body, nil
	})
	if err != nil {
		s.engineError(w, r, "verify "+pinned, err)
		return
	}
	w.Header().Set("Pinseal-Cache", "miss")
	writeRaw(w, v.([]byte))
}

func writeRaw(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func (s *Server) verifyUpload(w http.ResponseWriter, r *http.Request) {
	release, err := s.acquire(r.Context())
	if err != nil {
		s.writeError(w, r, http.StatusServiceUnavailable, err.Error())
		return
	}
	defer release()
	dir, err := os.MkdirTemp(s.uploadDir, "verify-*")
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, "create upload directory: "+err.Error())
		return
	}
	defer os.RemoveAll(dir)

	err = untar.Extract(r.Body, dir, untar.Limits{MaxFiles: s.cfg.Limits.MaxTarFiles, MaxBytes: s.cfg.Limits.MaxTarBytes})
	var mbe *http.MaxBytesError
	var lim *untar.LimitError
	var unsafe *untar.UnsafeError
	switch {
	case err == nil:
	case errors.As(err, &mbe):
		s.writeError(w, r, http.StatusRequestEntityTooLarge, bodyTooLarge(mbe.Limit))
		return
	case errors.As(err, &lim):
		s.writeError(w, r, http.StatusRequestEntityTooLarge, err.Error())
		return
	case errors.As(err, &unsafe):
		s.writeError(w, r, http.StatusBadRequest, err.Error())
		return
	default:
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	rep, err := s.engine.CheckTree(r.Context(), dir, CheckOptions{Policy: s.cfg.Policy})
	if err != nil {
		s.engineError(w, r, "verify upload", err)
		return
	}
	rep.Root = "upload" // not the server's temporary path
	s.writeJSON(w, http.StatusOK, rep)
}

type startScanRequest struct {
	Source string `json:"source"`
}

func (s *Server) startScan(w http.ResponseWriter, r *http.Request) {
	var req startScanRequest
	if err := decodeJSON(r, &req); err != nil {
		s.bodyError(w, r, err)
		return
	}
	sc, err := s.sched.Trigger(r.Context(), req.Source, scan.ByAPI)
	var busy *scan.BusyError
	switch {
	case err == nil:
		w.Header().Set("Location", "/v1/scans/"+strconv.FormatInt(sc.ID, 10))
		s.writeJSON(w, http.StatusAccepted, sc)
	case errors.Is(err, scan.ErrUnknownSource):
		s.writeError(w, r, http.StatusNotFound, err.Error())
	case errors.As(err, &busy):
		s.writeJSON(w, http.StatusConflict, apiError{Error: err.Error(), Scan: busy.Running})
	case errors.Is(err, scan.ErrShuttingDown):
		s.writeError(w, r, http.StatusServiceUnavailable, err.Error())
	default:
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
	}
}

// sourceInfo is one entry of GET /v1/sources.
type sourceInfo struct {
	Name          string      `json:"name"`
	Interval      string      `json:"interval,omitempty"` // "" when scanned on demand only
	Registry      string      `json:"registry,omitempty"`
	Running       bool        `json:"running"`
	LastScan      *store.Scan `json:"lastScan"`
	LastSuccessAt *time.Time  `json:"lastSuccessAt"`
}

func (s *Server) sourceInfos(ctx context.Context) ([]sourceInfo, error) {
	last, err := s.store.LastScans(ctx, "")
	if err != nil {
		return nil, err
	}
	ok, err := s.store.LastScans(ctx, store.Succeeded)
	if err != nil {
		return nil, err
	}
	out := make([]sourceInfo, 0, len(s.cfg.Sources))
	for _, src := range s.cfg.Sources {
		si := sourceInfo{Name: src.Name, Registry: src.Registry}
		if src.Interval > 0 {
			si.Interval = src.Interval.D().String()
		}
		_, si.Running = s.sched.Running(src.Name)
		if sc, found := last[src.Name]; found {
			si.LastScan = &sc
		}
		if sc, found := ok[src.Name]; found {
			si.LastSuccessAt = sc.FinishedAt
		}
		out = append(out, si)
	}
	return out, nil
}

func (s *Server) listSources(w http.ResponseWriter, r *http.Request) {
	infos, err := s.sourceInfos(r.Context())
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"sources": infos})
}

const (
	defaultScanLimit = 20
	maxScanLimit     = 200
)

func (s *Server) listScans(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	source := q.Get("source")
	if source != "" {
		if _, ok := s.sources[source]; !ok {
			s.writeError(w, r, http.StatusNotFound, fmt.Sprintf("unknown source %q", source))
			return
		}
	}
	limit := defaultScanLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxScanLimit {
			s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("limit %q: want 1 to %d", v, maxScanLimit))
			return
		}
		limit = n
	}
	scans, err := s.store.Scans(r.Context(), source, limit)
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"scans": scans})
}

// scanDetail is GET /v1/scans/{id}.
type scanDetail struct {
	Scan     store.Scan      `json:"scan"`
	Report   *report.Report  `json:"report"` // null unless the scan succeeded
	New      []store.Finding `json:"new"`
	Resolved []store.Finding `json:"resolved"`
}

func (s *Server) loadScan(ctx context.Context, idText string) (*scanDetail, int, error) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 1 {
		return nil, http.StatusBadRequest, fmt.Errorf("scan id %q: want a positive integer", idText)
	}
	sc, err := s.store.Scan(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, http.StatusNotFound, fmt.Errorf("no scan %d", id)
	} else if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	rep, err := s.store.Report(ctx, id)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	ch, err := s.store.Changes(ctx, id)
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	s.linkFindings(ch.New)
	s.linkFindings(ch.Resolved)
	return &scanDetail{Scan: sc, Report: rep, New: ch.New, Resolved: ch.Resolved}, http.StatusOK, nil
}

func (s *Server) getScan(w http.ResponseWriter, r *http.Request) {
	d, status, err := s.loadScan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, status, err.Error())
		return
	}
	s.writeJSON(w, http.StatusOK, d)
}

func (s *Server) listFindings(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	source, severity := q.Get("source"), report.Severity(q.Get("severity"))
	if source != "" {
		if _, ok := s.sources[source]; !ok {
			s.writeError(w, r, http.StatusNotFound, fmt.Sprintf("unknown source %q", source))
			return
		}
	}
	if severity != "" && severity != report.Error && severity != report.Warning {
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("severity %q: want error or warning", severity))
		return
	}
	fs, err := s.store.OpenFindings(r.Context(), source, severity)
	if err != nil {
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	s.linkFindings(fs)
	s.writeJSON(w, http.StatusOK, map[string]any{"findings": fs})
}
