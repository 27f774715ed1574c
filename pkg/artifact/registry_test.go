package artifact

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHTTPSToPlainRegistrySaysPlainHTTP: talking HTTPS to a registry that
// only speaks plain HTTP names the host and wraps http.ErrSchemeMismatch
// (the CLIs add "pass --plain-http").
func TestHTTPSToPlainRegistrySaysPlainHTTP(t *testing.T) {
	host := testRegistry(t)
	repo, err := OpenRegistry(host+"/capi/core-cluster-api", Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Resolve(context.Background(), "v1.10.1-core")
	if !errors.Is(err, http.ErrSchemeMismatch) || !strings.Contains(err.Error(), "speaks plain HTTP") || !strings.Contains(err.Error(), host) {
		t.Fatalf("Resolve over HTTPS from a plain-HTTP registry = %v, want http.ErrSchemeMismatch naming %s", err, host)
	}
	plain, err := OpenRegistry(host+"/capi/core-cluster-api", Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = plain.Resolve(context.Background(), "v1.10.1-core"); err == nil || errors.Is(err, http.ErrSchemeMismatch) || strings.Contains(err.Error(), "speaks plain HTTP") {
		t.Fatalf("Resolve of a missing tag over plain HTTP = %v, want not-found without the hint", err)
	}
}

// TestRetriesCountsRequests: Retries is the number of retries, its zero
// value none: against a registry that answers 503 every time, Retries 0
// sends one request and Retries 2 sends three.
func TestRetriesCountsRequests(t *testing.T) {
	for _, tc := range []struct{ retries, want int }{{0, 1}, {-1, 1}, {2, 3}} {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			http.Error(w, "try later", http.StatusServiceUnavailable)
		}))
		host := strings.TrimPrefix(srv.URL, "http://")
		repo, err := OpenRegistry(host+"/capi/core-cluster-api", Options{PlainHTTP: true, Retries: tc.retries})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := repo.Resolve(context.Background(), "v1.10.1-core"); err == nil {
			t.Fatalf("Retries %d: Resolve against a 503 registry succeeded", tc.retries)
		}
		srv.Close()
		if got := int(n.Load()); got != tc.want {
			t.Errorf("Retries %d: %d requests, want %d", tc.retries, got, tc.want)
		}
	}
}
