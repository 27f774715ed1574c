package artifact

import (
	"context"
	"strings"
	"testing"
)

// TestHTTPSToPlainRegistrySaysPlainHTTP: talking HTTPS to a registry that
// only speaks plain HTTP names the host and says to pass --plain-http.
func TestHTTPSToPlainRegistrySaysPlainHTTP(t *testing.T) {
	host := testRegistry(t)
	repo, err := OpenRegistry(host+"/capi/core-cluster-api", Options{Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = repo.Resolve(context.Background(), "v1.10.1-core")
	if err == nil || !strings.Contains(err.Error(), "--plain-http") || !strings.Contains(err.Error(), host) {
		t.Fatalf("Resolve over HTTPS from a plain-HTTP registry = %v, want a hint naming %s and --plain-http", err, host)
	}
	plain, err := OpenRegistry(host+"/capi/core-cluster-api", Options{PlainHTTP: true, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = plain.Resolve(context.Background(), "v1.10.1-core"); err == nil || strings.Contains(err.Error(), "--plain-http") {
		t.Fatalf("Resolve of a missing tag with --plain-http = %v, want not-found without the hint", err)
	}
}
