package fetch

import (
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"oras.land/oras-go/v2/registry/remote/retry"
)

// The retry policy of pinseal's HTTP clients: the downloader here and the
// registry client of pkg/artifact use RetryPolicy, so a flaky upstream and
// a flaky registry are treated alike.
const (
	// DefaultRetries is what the CLIs and the service pass (the default
	// of the builder's retries flag). Library callers say how many they
	// want: Retries 0 means none, in Fetcher and artifact.Options alike.
	DefaultRetries = 3
	// DefaultBackoff is the wait before the first retry when the caller
	// does not set one; each next wait doubles (with 10% jitter).
	DefaultBackoff = 250 * time.Millisecond
	// MaxBackoff caps one wait, a 429's Retry-After included.
	MaxBackoff = 10 * time.Second
)

// Retryable reports whether a failed HTTP exchange is worth repeating:
// network errors (refused, reset, DNS, timeouts), a body cut off part way
// (unexpected EOF), and the answers 5xx, 408 and 429. Anything else (other
// 4xx, a refused redirect, a TLS failure) is final. It is the predicate of
// RetryPolicy, shaped as oras-go's retry.Predicate.
func Retryable(resp *http.Response, err error) (bool, error) {
	if err != nil {
		var ne net.Error
		return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
			errors.Is(err, syscall.ECONNRESET), nil
	}
	if resp == nil {
		return false, nil
	}
	switch {
	case resp.StatusCode >= 500, resp.StatusCode == 0,
		resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests:
		return true, nil
	}
	return false, nil
}

// RetryPolicy is pinseal's one retry policy: up to retries retries (0 or
// less: none) of what Retryable accepts, the first after about backoff
// (DefaultBackoff when 0), then exponentially longer, each wait capped at
// MaxBackoff. It is an oras-go retry.Policy, for retry.Transport or for a
// loop that also covers reading the body (Fetcher).
func RetryPolicy(retries int, backoff time.Duration) retry.Policy {
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	return &retry.GenericPolicy{
		Retryable: Retryable,
		Backoff:   retry.ExponentialBackoff(backoff, 2, 0.1),
		MaxWait:   MaxBackoff,
		MaxRetry:  max(retries, 0),
	}
}
