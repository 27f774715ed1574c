package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Client talks to a test server and validates every response against
// api/openapi.yaml.
type Client struct {
	T     testing.TB
	Base  string // http://127.0.0.1:PORT
	Token string // bearer token; "" sends none
	HTTP  *http.Client
}

// NewClient is a client of the server at base that sends token.
func NewClient(t testing.TB, base, token string) *Client {
	return &Client{T: t, Base: base, Token: token, HTTP: &http.Client{Timeout: 60 * time.Second}}
}

// WithToken is c sending tok instead.
func (c *Client) WithToken(tok string) *Client {
	cc := *c
	cc.Token = tok
	return &cc
}

// Do sends a request; the body is read and validated before it returns.
func (c *Client) Do(method, p, contentType string, body io.Reader) (*http.Response, []byte) {
	c.T.Helper()
	req, err := http.NewRequest(method, c.Base+p, body)
	if err != nil {
		c.T.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, p, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatalf("%s %s: read body: %v", method, p, err)
	}
	ValidateResponse(c.T, req, resp, data)
	return resp, data
}

// Get sends GET p.
func (c *Client) Get(p string) (*http.Response, []byte) { return c.Do(http.MethodGet, p, "", nil) }

// PostJSON sends v as JSON to p.
func (c *Client) PostJSON(p string, v any) (*http.Response, []byte) {
	c.T.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.T.Fatal(err)
	}
	return c.Do(http.MethodPost, p, "application/json", bytes.NewReader(b))
}

// GetJSON GETs p, wants status, decodes into out (unless nil).
func (c *Client) GetJSON(p string, status int, out any) {
	c.T.Helper()
	resp, body := c.Get(p)
	if resp.StatusCode != status {
		c.T.Fatalf("GET %s: %d %s, want %d", p, resp.StatusCode, body, status)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			c.T.Fatalf("GET %s: %v", p, err)
		}
	}
}

// WaitFor polls cond every 10ms; the minute's deadline only guards
// against a hang.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitWithin(t, 60*time.Second, what, cond)
}

// WaitWithin polls cond every 10ms and fails the test when it is still
// false after timeout (for waits whose length is the property tested).
func WaitWithin(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Serve runs run (a server's Run) on a random 127.0.0.1 port until the
// test ends, and returns once GET /readyz answers 200. stop cancels run's
// context and returns run's error; it may be called more than once.
func Serve(t testing.TB, run func(ctx context.Context, ln net.Listener) error) (base string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, ln) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { stop() })
	base = "http://" + ln.Addr().String()
	WaitReady(t, base)
	return base, stop
}

// WaitReady waits until GET base/readyz answers 200.
func WaitReady(t testing.TB, base string) {
	t.Helper()
	WaitFor(t, "readyz", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
