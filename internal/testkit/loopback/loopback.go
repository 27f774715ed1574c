// Package loopback runs the test tooling's HTTP servers on a loopback
// address only.
//
// It runs the HTTP servers of the test tooling (devserve,
// the ocireg test peer): on a loopback address only, until their context
// ends, then shut down gracefully.
package loopback

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrNotLoopback is Listen's refusal of an address that is not a loopback
// one.
var ErrNotLoopback = errors.New("not a loopback address: listen on 127.0.0.1:PORT or [::1]:PORT")

// Listen listens on addr (HOST:PORT; port 0 picks a free one) when HOST is
// a loopback IP or "localhost", and refuses any other address.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("address %q: %w", addr, ErrNotLoopback)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves srv on ln until ctx ends, then shuts srv down, giving the
// requests in flight up to grace to finish, and returns once it is down.
// It returns nil after a shutdown, and the error that stopped the server
// otherwise.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) error {
	down := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(down)
		shut, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		srv.Shutdown(shut) // past grace the remaining connections are dropped
	})
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-down
		return nil
	}
	if !stop() {
		<-down
	}
	return err
}
