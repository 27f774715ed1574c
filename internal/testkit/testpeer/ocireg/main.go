// Command ocireg is a test peer: an in-memory registry with the OCI
// referrers API.
//
// It is a test peer: go-containerregistry's in-memory registry
// with the OCI 1.1 referrers API (GET /v2/<name>/referrers/<digest>)
// switched on, listening on a 127.0.0.1 address. Debian's docker-registry
// 2.8 has no referrers API; the integration tests run against both. Built
// and started by testpeer.StartReferrersRegistry.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/pinseal/pinseal/internal/testkit/loopback"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	flag.Parse()
	l, err := loopback.Listen(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ocireg: -addr:", err)
		os.Exit(2)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(os.Stderr, "ocireg: ", 0))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Println("listening on", l.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := loopback.Serve(ctx, srv, l, 5*time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "ocireg:", err)
		os.Exit(1)
	}
}
