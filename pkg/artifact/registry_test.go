package artifact

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestHTTPSToPlainRegistrySaysPlainHTTP: talking HTTPS to a registry that
// only speaks plain HTTP names the host and wraps http.ErrSchemeMismatch
// (the CLIs add "pass --plain-http").
func TestHTTPSToPlainRegistrySaysPlainHTTP(t *testing.T) {
	host := testRegistry(t)
	repo, err := OpenRegistry(host+"/capi/core-cluster-api", Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Resolve(context.Background(), "v1.10.1-core")
	if !errors.Is(err, http.ErrSchemeMismatch) || !strings.Contains(err.Error(), "speaks plain HTTP") || !strings.Contains(err.Error(), host) {
		t.Fatalf("Resolve over HTTPS from a plain-HTTP registry = %v, want http.ErrSchemeMismatch naming %s", err, host)
	}
	plain, err := OpenRegistry(host+"/capi/core-cluster-api", Options{PlainHTTP: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = plain.Resolve(context.Background(), "v1.10.1-core"); err == nil || errors.Is(err, http.ErrSchemeMismatch) || strings.Contains(err.Error(), "speaks plain HTTP") {
		t.Fatalf("Resolve of a missing tag over plain HTTP = %v, want not-found without the hint", err)
	}
}
