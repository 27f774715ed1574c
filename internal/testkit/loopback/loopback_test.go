package loopback

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// TestListen: loopback addresses are accepted, every other one refused
// with an error naming it.
func TestListen(t *testing.T) {
	for _, tc := range []struct {
		addr         string
		ok, loopback bool
	}{
		{"127.0.0.1:0", true, true},
		{"localhost:0", true, true},
		{"0.0.0.0:0", false, false},
		{":0", false, false},
		{"192.0.2.1:0", false, false},
		{"example.com:0", false, false},
		{"127.0.0.1", false, true}, // no port
	} {
		t.Run(tc.addr, func(t *testing.T) {
			ln, err := Listen(tc.addr)
			if ln != nil {
				ln.Close()
			}
			if tc.ok != (err == nil) {
				t.Fatalf("Listen(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tc.addr) {
				t.Fatalf("Listen(%q) error %q does not name the address", tc.addr, err)
			}
			if err != nil && errors.Is(err, ErrNotLoopback) == tc.loopback {
				t.Fatalf("Listen(%q) = %v: errors.Is ErrNotLoopback = %v", tc.addr, err, !tc.loopback)
			}
		})
	}
}

// TestServe: the server answers until the context ends, then Serve returns
// nil and the address no longer answers.
func TestServe(t *testing.T) {
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, srv, ln, time.Second) }()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("body %q, want ok", b)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after the context ended: %v, want nil", err)
		}
	case <-time.After(time.Second + timebound.Slack):
		t.Fatal("Serve did not return within its 1s grace after the context ended")
	}
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after Serve returned")
	}
}
