package remote_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/remote"
)

// TestAttachOCIOncePerReference: the same spec.fetchConfig.oci release in
// two packages is looked up once, and both providers get that answer; a
// provider of another release is looked up on its own.
func TestAttachOCIOncePerReference(t *testing.T) {
	var lookups atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			lookups.Add(1)
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	provider := func(version string) *model.Provider {
		return &model.Provider{Kind: "CoreProvider", Name: "cluster-api", Namespace: "capi", Version: version, FetchOCI: "http://" + host + "/capi/core"}
	}
	a, b, c := provider("v1.10.1"), provider("v1.10.1"), provider("v1.10.2")
	tr := &model.Tree{Packages: []*model.Package{{Providers: []*model.Provider{a}}, {Providers: []*model.Provider{b, c}}}}
	if err := remote.Attach(context.Background(), tr, artifact.Prefix{}, remote.Options{Allow: []string{host}}); err != nil {
		t.Fatal(err)
	}
	if a.Artifact == nil || a.Artifact != b.Artifact || c.Artifact == nil || c.Artifact == a.Artifact {
		t.Fatalf("artifacts %p %p %p: want the first two shared, the third its own", a.Artifact, b.Artifact, c.Artifact)
	}
	if a.Artifact.Found || a.Artifact.Refused != "" {
		t.Errorf("artifact %+v: want looked up and not found", a.Artifact)
	}
	if n := lookups.Load(); n != 2 {
		t.Errorf("%d manifest lookups, want 2 (one per distinct release)", n)
	}
}
