// Command devserve serves a directory over HTTP on the loopback interface
// only, logging every request: the stand-in for the upstream release
// servers in `make demo`, so the builder really downloads its pinned files
// over HTTP without reaching the internet.
//
//	devserve -dir examples/upstream -addr 127.0.0.1:8089 [-ready FILE]
//
// -ready writes the bound address to FILE once the server listens (use
// -addr 127.0.0.1:0 for a free port). It refuses non-loopback addresses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pinseal/pinseal/internal/atomicfile"
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
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not a loopback IP: devserve only serves 127.0.0.1 / ::1", addr)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another demo running? pick another port with -addr)", addr, err)
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
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
