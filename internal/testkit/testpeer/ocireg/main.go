// Command ocireg is a test peer: go-containerregistry's in-memory registry
// with the OCI 1.1 referrers API (GET /v2/<name>/referrers/<digest>)
// switched on, listening on a 127.0.0.1 address. Debian's docker-registry
// 2.8 has no referrers API; the integration tests run against both. Built
// and started by testpeer.StartReferrersRegistry.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		fmt.Fprintf(os.Stderr, "ocireg: -addr %q: listen on a loopback address (127.0.0.1:PORT)\n", *addr)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ocireg:", err)
		os.Exit(1)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(os.Stderr, "ocireg: ", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Println("listening on", l.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "ocireg:", err)
		os.Exit(1)
	}
}
