// Command devserve serves a directory over HTTP on the loopback interface
// only.
//
// It serves a directory over HTTP on the loopback interface
// only, logging every request: the stand-in for the upstream release
// servers in `make demo`, so the builder really downloads its pinned files
// over HTTP without reaching the internet.
//
//	devserve -dir examples/upstream -addr 127.0.0.1:8089 [-ready FILE]
//
// -ready writes the bound address to FILE once the server listens (use
// -addr 127.0.0.1:0 for a free port). It refuses non-loopback addresses
// (internal/testkit/loopback).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/testkit/loopback"
)

func main() {
	dir := flag.String("dir", "examples/upstream", "directory to serve")
	addr := flag.String("addr", "127.0.0.1:8089", "loopback address to listen on")
	ready := flag.String("ready", "", "write the bound address to this file once listening")
	flag.Parse()
	if err := run(*dir, *addr, *ready); err != nil {
		fmt.Fprintln(os.Stderr, "devserve:", err)
		os.Exit(1)
	}
}

func run(dir, addr, ready string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	ln, err := loopback.Listen(addr)
	if errors.Is(err, loopback.ErrNotLoopback) {
		return fmt.Errorf("%w: devserve only serves on the loopback interface", err)
	}
	if err != nil {
		return fmt.Errorf("%w (is another demo running? pick another port with -addr)", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	files := http.FileServer(http.Dir(dir))
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			files.ServeHTTP(rec, r)
			log.Info("devserve", "method", r.Method, "path", r.URL.Path, "status", rec.status, "bytes", rec.n)
		}),
	}
	if ready != "" {
		if err := atomicfile.WriteFile(ready, []byte(ln.Addr().String()+"\n"), 0); err != nil {
			ln.Close()
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return loopback.Serve(ctx, srv, ln, 2*time.Second)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	n      int64
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	n, err := s.ResponseWriter.Write(p)
	s.n += int64(n)
	return n, err
}
