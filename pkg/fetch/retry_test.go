package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"
)

func TestRetryable(t *testing.T) {
	status := func(code int) *http.Response { return &http.Response{StatusCode: code, Header: http.Header{}} }
	for _, tc := range []struct {
		name string
		resp *http.Response
		err  error
		want bool
	}{
		{"500", status(500), nil, true},
		{"502", status(502), nil, true},
		{"503", status(503), nil, true},
		{"408", status(408), nil, true},
		{"429", status(429), nil, true},
		{"200", status(200), nil, false},
		{"400", status(400), nil, false},
		{"401", status(401), nil, false},
		{"404", status(404), nil, false},
		{"no answer", nil, nil, false},
		{"connection refused", nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"reset", nil, fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"timeout", nil, context.DeadlineExceeded, true},
		{"cut-off body", nil, io.ErrUnexpectedEOF, true},
		{"wrapped in url.Error", nil, &url.Error{Op: "Get", URL: "https://x", Err: &net.DNSError{Err: "no such host", Name: "x"}}, true},
		{"refused redirect", nil, errors.New("refusing redirect from https to http://x"), false},
		{"canceled", nil, context.Canceled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Retryable(tc.resp, tc.err)
			if err != nil || got != tc.want {
				t.Errorf("Retryable = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestRetryPolicy(t *testing.T) {
	fail := &http.Response{StatusCode: 503, Header: http.Header{}}
	for _, n := range []int{-1, 0, 1, 3} {
		p := RetryPolicy(n, time.Millisecond)
		for attempt := 0; attempt <= n+1; attempt++ {
			wait, err := p.Retry(attempt, fail, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := attempt < n; (wait >= 0) != want {
				t.Errorf("retries %d, attempt %d: wait %v, want a retry: %v", n, attempt, wait, want)
			}
		}
	}
	// Waits grow from the backoff and stay under MaxBackoff, even when a
	// 429 asks for an hour.
	p := RetryPolicy(10, 100*time.Millisecond)
	if w, _ := p.Retry(0, fail, nil); w < 90*time.Millisecond || w > 110*time.Millisecond {
		t.Errorf("first wait %v, want about 100ms", w)
	}
	if w, _ := p.Retry(2, fail, nil); w < 360*time.Millisecond || w > 440*time.Millisecond {
		t.Errorf("third wait %v, want about 400ms", w)
	}
	slow := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3600"}}}
	if w, _ := p.Retry(0, slow, nil); w != MaxBackoff {
		t.Errorf("wait after Retry-After: 3600 = %v, want %v", w, MaxBackoff)
	}
	if w, _ := RetryPolicy(1, 0).Retry(0, fail, nil); w < DefaultBackoff*9/10 || w > DefaultBackoff*11/10 {
		t.Errorf("default first wait %v, want about %v", w, DefaultBackoff)
	}
	if w, _ := p.Retry(0, &http.Response{StatusCode: 404}, nil); w >= 0 {
		t.Errorf("404 retried after %v", w)
	}
}
