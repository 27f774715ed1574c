package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"oras.land/oras-go/v2/registry"

	"github.com/pinseal/pinseal/api"
	"github.com/pinseal/pinseal/internal/app/service/scan"
	"github.com/pinseal/pinseal/internal/app/service/server/untar"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	// limitBody after requestTimeout (its drain ends at the request's
	// deadline) and before everything that may refuse a request.
	r.Use(s.instrument, s.recoverPanics, s.requestTimeout, s.limitBody)
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
	// The webhook is served only on its own TLS listener (admitRoutes):
	// it takes no token, so this listener, which may be plain HTTP and
	// reachable by every client of the API, does not answer it.
	r.Post("/admit", s.admitNotHere)
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
		r.Use(s.requireToken)
		r.Post("/v1/verify", s.verify)
		r.Post("/v1/scans", s.startScan)
	})
	return r
}

// admitRoutes is what admission.listen serves: the webhook, and the
// probes a load balancer or kubelet sends to the same port. The API
// server authenticates the webhook by its certificate and sends no
// token; the answer is a decision, bounded in size and time.
func (s *Server) admitRoutes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.instrument, s.recoverPanics, s.requestTimeout, s.limitBody)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, http.StatusNotFound, "no such path on the admission listener: "+r.URL.Path+" (it serves POST /admit, /healthz and /readyz; the API is on listen)")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
	})
	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.Post("/admit", s.admit)
	return r
}

// admitNotHere answers POST /admit on the main listener.
func (s *Server) admitNotHere(w http.ResponseWriter, r *http.Request) {
	if s.admitter == nil {
		s.writeError(w, r, http.StatusNotFound, "admission is not configured: add admission: to the service config (docs/admission.md)")
		return
	}
	s.writeError(w, r, http.StatusNotFound, "POST /admit is served only on admission.listen, over TLS, where the API server calls it (docs/admission.md)")
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
	body = s.paths.scrub(body, status >= 400) // no server path reaches a client
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if errors.Is(context.Cause(r.Context()), errStopping) {
		// Whatever went wrong, it is because the server stopped the request.
		w.Header().Set("Retry-After", retryAfter)
		status, msg = http.StatusServiceUnavailable, errStopping.Error()+": the request was stopped after limits.shutdownTimeout; retry"
	}
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

// limitBody bounds the request body to limits.maxBodyBytes and makes every
// refusal (a status of 400 or more) readable by the client: a server that
// answers before it has read the body and then closes the connection makes
// the client's kernel reset it, and the client sees the reset instead of the
// answer. So, before the status is written, the rest of the (bounded) body is
// read and discarded; unless the client asked for "Expect: 100-continue" and
// nothing was read yet, in which case Go's server sends the final status
// instead of 100 Continue and the client never sends the body. A body
// declared larger than the bound is refused at once: with Expect, before the
// client sends it; without, the connection is closed after the answer (the
// body is not worth reading).
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.cfg.Limits.MaxBodyBytes {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, bodyTooLarge(s.cfg.Limits.MaxBodyBytes))
			return
		}
		body := &trackedBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.cfg.Limits.MaxBodyBytes)}
		r.Body = body
		dw := &drainingWriter{ResponseWriter: w, r: r, body: body}
		next.ServeHTTP(dw, r)
	})
}

// trackedBody notes whether the handler read the body and whether it was
// read to its end.
type trackedBody struct {
	io.ReadCloser
	read, eof bool
	err       error
}

func (b *trackedBody) Read(p []byte) (int, error) {
	b.read = true
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.err = err
	}
	return n, err
}

// drainingWriter drains the request body before a refusal is written.
type drainingWriter struct {
	http.ResponseWriter
	r       *http.Request
	body    *trackedBody
	written bool
}

func (d *drainingWriter) WriteHeader(code int) {
	if !d.written {
		d.written = true
		if code >= 400 {
			d.drain()
		}
	}
	d.ResponseWriter.WriteHeader(code)
}

func (d *drainingWriter) Write(p []byte) (int, error) {
	if !d.written {
		d.WriteHeader(http.StatusOK)
	}
	return d.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (d *drainingWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// drain reads what is left of the body (at most limits.maxBodyBytes in all),
// until the request's deadline.
func (d *drainingWriter) drain() {
	b := d.body
	if b.eof || b.err != nil || d.r.ContentLength == 0 {
		return // read already, or unreadable (over the bound, broken)
	}
	if !b.read && strings.EqualFold(d.r.Header.Get("Expect"), "100-continue") {
		return // the client waits for 100 Continue, which it will not get
	}
	if dl, ok := d.r.Context().Deadline(); ok {
		http.NewResponseController(d.ResponseWriter).SetReadDeadline(dl)
	}
	io.Copy(io.Discard, b)
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
	case errors.Is(err, errNoSlot):
		w.Header().Set("Retry-After", retryAfter)
		s.writeError(w, r, http.StatusServiceUnavailable, what+": "+err.Error())
	case errors.Is(err, ErrNotConfigured):
		s.writeError(w, r, http.StatusServiceUnavailable, what+": "+err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		s.writeError(w, r, http.StatusGatewayTimeout, what+": took longer than limits.requestTimeout")
	default:
		s.writeError(w, r, http.StatusBadGateway, what+": "+err.Error())
	}
}

// errNoSlot: every verification slot stayed busy for limits.verifyQueueTimeout
// (503 with Retry-After).
var errNoSlot = errors.New("busy")

// retryAfter is the Retry-After (seconds) of a 503 for want of a slot.
const retryAfter = "5"

// acquire takes a verification slot, waiting at most
// limits.verifyQueueTimeout and until ctx ends.
func (s *Server) acquire(ctx context.Context) (release func(), err error) {
	select {
	case s.verifySem <- struct{}{}:
		return func() { <-s.verifySem }, nil
	default:
	}
	wait := time.NewTimer(s.cfg.Limits.VerifyQueueTimeout.D())
	defer wait.Stop()
	select {
	case s.verifySem <- struct{}{}:
		return func() { <-s.verifySem }, nil
	case <-wait.C:
		return nil, fmt.Errorf("all %d verification slots stayed busy for %s (limits.maxConcurrentVerifies, limits.verifyQueueTimeout); retry later: %w",
			cap(s.verifySem), s.cfg.Limits.VerifyQueueTimeout.D(), errNoSlot)
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free verification slot (limits.maxConcurrentVerifies): %w", ctx.Err())
	}
}

// parseRef parses the ref of a verify request with oras-go, the library
// the engine opens it with, strictly: the registry host is explicit (a
// Docker Hub short name such as library/busybox:1 is refused, not read as
// a host named "library") and a tag or digest is given.
func parseRef(s string) (registry.Reference, error) {
	if strings.Contains(s, "://") {
		return registry.Reference{}, errors.New("a reference has no URL scheme")
	}
	ref, err := registry.ParseReference(s)
	if err != nil {
		return ref, err
	}
	if !strings.ContainsAny(ref.Registry, ".:") && ref.Registry != "localhost" {
		return ref, fmt.Errorf("%q is no registry host (a Docker Hub name?)", ref.Registry)
	}
	if ref.Reference == "" {
		return ref, errors.New("no tag or digest")
	}
	return ref, nil
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
	pinned, digest, tag, ok := s.pinRef(w, r, req.Ref)
	if !ok {
		return
	}
	// The verdict depends on the artifact (repository too: one manifest
	// digest may be pushed to several repositories, and its signatures and
	// attestations live in each one), on the tag it was asked for (the
	// tag must be the artifact's release), and on the policy with the key
	// files it names, as they are now.
	pol, fp, err := s.policy.Current()
	if err != nil {
		s.writeError(w, r, http.StatusServiceUnavailable, "verify "+pinned+": the service's policy cannot be read: "+err.Error())
		return
	}
	key := pinned + " " + tag + " " + fp
	w.Header().Set("Pinseal-Digest", digest)
	if body, ok := s.cachedVerdict(key); ok {
		s.metrics.verifyCache.WithLabelValues("hit").Inc()
		w.Header().Set("Pinseal-Cache", "hit")
		writeRaw(w, body)
		return
	}
	s.metrics.verifyCache.WithLabelValues("miss").Inc()
	body, err := s.verifyShared(key, pinned, tag, pol)
	if err != nil {
		s.engineError(w, r, "verify "+pinned, err)
		return
	}
	w.Header().Set("Pinseal-Cache", "miss")
	writeRaw(w, body)
}

// pinRef reads the reference a verify request names, refuses one outside
// the registries allowlist and resolves a tag: it returns
// REGISTRY/REPOSITORY@DIGEST, the digest and the tag asked for ("" when
// the request named a digest). When it cannot, it has answered the request
// and ok is false.
func (s *Server) pinRef(w http.ResponseWriter, r *http.Request, asked string) (pinned, digest, tag string, ok bool) {
	ref, err := parseRef(asked)
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("ref %q: %v (want HOST[:PORT]/REPOSITORY:TAG or @sha256:…)", asked, err))
		return "", "", "", false
	}
	repo := ref.Registry + "/" + ref.Repository
	if !s.cfg.registryAllowed(repo) {
		s.writeError(w, r, http.StatusUnprocessableEntity, fmt.Sprintf("ref %s: repository %s is not within the registries allowlist of this service (the operator adds it, or its registry, to the config's registries)", asked, repo))
		return "", "", "", false
	}
	digest = ref.Reference
	if _, err := ref.Digest(); err != nil { // by tag
		tag = digest
		if digest, err = s.engine.Resolve(r.Context(), ref.String()); err != nil {
			s.engineError(w, r, "resolve "+ref.String(), configHint(err, s.cfg.Policy))
			return "", "", "", false
		}
	}
	return repo + "@" + digest, digest, tag, true
}

// verifyShared verifies the artifact pinned (asked for by tag) under pol
// and returns the report's JSON, kept in the verdict cache under key for
// as long as verdictTTL allows. Concurrent requests for one artifact
// share one verification, which therefore does not end with the first
// caller's request.
func (s *Server) verifyShared(key, pinned, tag string, pol *policy.Policy) ([]byte, error) {
	v, err, _ := s.flights.Do(key, func() (any, error) {
		// Not the first caller's context; stopped by a shutdown, though.
		ctx, cancel := context.WithTimeout(s.requests, s.cfg.Limits.RequestTimeout.D())
		defer cancel()
		release, err := s.acquire(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		rep, err := s.engine.VerifyArtifact(ctx, pinned, VerifyOptions{Policy: pol, Tag: tag})
		if err != nil {
			return nil, configHint(err, s.cfg.Policy)
		}
		body, err := json.Marshal(rep)
		if err != nil {
			return nil, err
		}
		if ttl := verdictTTL(rep, s.now(), s.cfg.Limits.VerifyCacheTTL.D()); ttl > 0 {
			s.cache.Add(key, cachedVerdict{body: body, expires: s.now().Add(ttl)})
		}
		return body, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func writeRaw(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// verifyUpload is POST /v1/verify with a .tar.gz body. The body is received
// into a file in the upload directory first (at most limits.maxBodyBytes,
// within limits.requestTimeout), without a verification slot: a client that
// sends its headers and then nothing holds a connection, never a slot. Then
// it waits for a slot (at most limits.verifyQueueTimeout: 503 with
// Retry-After), extracts the tree within the untar bounds and checks it.
func (s *Server) verifyUpload(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	spool, err := s.spool(w, r)
	if err != nil {
		s.spoolError(w, r, err)
		return
	}
	defer func() {
		spool.Close()
		os.Remove(spool.Name())
	}()

	release, err := s.acquire(ctx)
	if err != nil {
		s.engineError(w, r, "verify upload", err)
		return
	}
	defer release()
	dir, err := os.MkdirTemp(s.uploadDir, "verify-*")
	if err != nil {
		if isNoSpace(err) {
			s.insufficientStorage(w, r, "extract upload", err)
			return
		}
		s.writeError(w, r, http.StatusInternalServerError, "create upload directory: "+err.Error())
		return
	}
	defer func() {
		if err := untar.RemoveAll(dir); err != nil {
			s.log.Error("remove upload directory", "dir", dir, "err", err)
		}
	}()

	l := s.cfg.Limits
	err = untar.Extract(ctx, bufio.NewReaderSize(spool, 64<<10), dir, untar.Limits{
		MaxFiles: l.MaxTarFiles, MaxBytes: l.MaxTarBytes, MaxDepth: l.MaxTarDepth, MaxPathBytes: l.MaxTarPathBytes})
	var lim *untar.LimitError
	var unsafe *untar.UnsafeError
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		s.writeError(w, r, http.StatusGatewayTimeout, "extract upload: took longer than limits.requestTimeout")
		return
	case errors.As(err, &lim):
		s.writeError(w, r, http.StatusRequestEntityTooLarge, err.Error())
		return
	case isNoSpace(err): // the server's disk, not the upload (an UnsafeError wraps it)
		s.insufficientStorage(w, r, "extract upload", err)
		return
	case errors.As(err, &unsafe):
		s.writeError(w, r, http.StatusBadRequest, err.Error())
		return
	default:
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	pol, _, err := s.policy.Current()
	if err != nil {
		s.writeError(w, r, http.StatusServiceUnavailable, "verify upload: the service's policy cannot be read: "+err.Error())
		return
	}
	rep, err := s.engine.CheckTree(ctx, dir, CheckOptions{Policy: pol})
	if err == nil && ctx.Err() != nil {
		err = ctx.Err() // what was checked before the end may be partial
	}
	if err != nil {
		s.engineError(w, r, "verify upload", configHint(err, s.cfg.Policy))
		return
	}
	rep.Root = "upload" // not the server's temporary path
	s.writeJSON(w, http.StatusOK, rep)
}

// spool receives the request body into a new file in the upload directory,
// reading until the request's deadline at the latest; it returns the file
// at its start. The caller closes and removes it.
func (s *Server) spool(w http.ResponseWriter, r *http.Request) (*os.File, error) {
	if dl, ok := r.Context().Deadline(); ok {
		// A stalled client ends at the request's deadline, not at the
		// server's (longer) read timeout.
		http.NewResponseController(w).SetReadDeadline(dl)
	}
	// A request stopped earlier (a shutdown) stops receiving at once.
	stop := context.AfterFunc(r.Context(), func() { http.NewResponseController(w).SetReadDeadline(time.Now()) })
	defer stop()
	f, err := os.CreateTemp(s.uploadDir, "verify-*.upload")
	if err != nil {
		return nil, &storeErr{fmt.Errorf("create upload file: %w", err)}
	}
	_, err = io.Copy(storeWriter{f}, r.Body)
	if err == nil {
		if _, err = f.Seek(0, io.SeekStart); err != nil {
			err = &storeErr{err}
		}
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		var se *storeErr
		if !errors.As(err, &se) {
			err = &spoolErr{err}
		}
		return nil, err
	}
	return f, nil
}

// spoolErr: the body could not be received.
type spoolErr struct{ error }

func (e *spoolErr) Unwrap() error { return e.error }

// storeErr: the body could not be stored (the server's fault).
type storeErr struct{ error }

func (e *storeErr) Unwrap() error { return e.error }

// storeWriter marks the errors of writing the spool file as storeErr.
type storeWriter struct{ f *os.File }

func (w storeWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = &storeErr{err}
	}
	return n, err
}

func (s *Server) spoolError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	var se *spoolErr
	var ste *storeErr
	var ne net.Error
	switch {
	case errors.As(err, &ste) && isNoSpace(err):
		s.insufficientStorage(w, r, "receive upload", err)
	case errors.As(err, &ste):
		s.log.Error("store upload", "err", err)
		s.writeError(w, r, http.StatusInternalServerError, "receive upload: the server could not store it")
	case errors.As(err, &mbe):
		s.writeError(w, r, http.StatusRequestEntityTooLarge, bodyTooLarge(mbe.Limit))
	case errors.As(err, &ne) && ne.Timeout(), r.Context().Err() != nil:
		s.writeError(w, r, http.StatusRequestTimeout, "the request body did not arrive within limits.requestTimeout")
	case errors.As(err, &se):
		s.writeError(w, r, http.StatusBadRequest, "request body: "+err.Error())
	default:
		s.writeError(w, r, http.StatusInternalServerError, err.Error())
	}
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
