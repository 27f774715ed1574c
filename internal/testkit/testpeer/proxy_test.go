package testpeer

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFaultProxy(t *testing.T) {
	body := []byte("0123456789abcdef")
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://"+r.Host+"/next")
		w.Write(body)
	}))
	defer upstream.Close()
	p := NewFaultProxy(t, upstream.URL)
	client := &http.Client{Timeout: 500 * time.Millisecond}

	tests := []struct {
		fault Fault
		check func(*http.Response, []byte, error) string
	}{
		{Pass, func(r *http.Response, b []byte, err error) string {
			if err != nil || !bytes.Equal(b, body) {
				return "pass did not forward"
			}
			if !strings.HasPrefix(r.Header.Get("Location"), p.URL) {
				return "upstream did not see the proxy's Host: " + r.Header.Get("Location")
			}
			return ""
		}},
		{Status500, func(r *http.Response, _ []byte, err error) string {
			if err != nil || r.StatusCode != 500 {
				return "no 500"
			}
			return ""
		}},
		{Status503, func(r *http.Response, _ []byte, err error) string {
			if err != nil || r.StatusCode != 503 {
				return "no 503"
			}
			return ""
		}},
		{Deny, func(r *http.Response, b []byte, err error) string {
			if err != nil || r.StatusCode != 403 || !bytes.Contains(b, []byte(`"DENIED"`)) {
				return "no 403 DENIED"
			}
			return ""
		}},
		{Tamper, func(r *http.Response, b []byte, err error) string {
			if err != nil || len(b) != len(body) || bytes.Equal(b, body) {
				return "body not tampered"
			}
			return ""
		}},
		{Drop, func(_ *http.Response, _ []byte, err error) string {
			if err == nil {
				return "connection not dropped"
			}
			return ""
		}},
		{Hang, func(_ *http.Response, _ []byte, err error) string {
			if err == nil {
				return "request did not hang"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fault.String(), func(t *testing.T) {
			f := tt.fault
			p.Set(func(r *http.Request) Fault {
				if Match(r, http.MethodGet, "/v2/") {
					return f
				}
				return Pass
			})
			resp, err := client.Get(p.URL + "/v2/x")
			var b []byte
			if err == nil {
				b, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if msg := tt.check(resp, b, err); msg != "" {
				t.Fatal(msg)
			}
		})
	}
	// Go's client retries a GET once on a dropped reused connection, so
	// the drop may be counted twice.
	if got := p.Injected(); got < 5 {
		t.Fatalf("Injected = %d, want at least 5", got)
	}
	if n := len(p.Requests()); n < 6 {
		t.Fatalf("%d requests logged, want at least 6", n)
	}
}

func TestLookBinary(t *testing.T) {
	if _, ok := LookBinary("sh"); !ok {
		t.Fatal("sh not found in PATH")
	}
	if _, ok := LookBinary("pinseal-no-such-peer"); ok {
		t.Fatal("found a binary that does not exist")
	}
}
