package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestListMaxObjects: a list stops with an error naming the bound once
// the cluster holds more objects than it, and reads them all at the bound.
func TestListMaxObjects(t *testing.T) {
	// An API server whose every list of ConfigMaps is one page of three.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"apiVersion":"v1","kind":"ConfigMapList","metadata":{},"items":[`+
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm0","namespace":"ns"}},`+
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","namespace":"ns"}},`+
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm2","namespace":"ns"}}]}`)
	}))
	defer srv.Close()
	dyn, err := dynamic.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		max  int
		want string
	}{{3, ""}, {2, "more than 2 configmaps"}} {
		l := &lister{dyn: dyn, snap: &Snapshot{Context: "c"}, maxObjects: tc.max}
		read := 0
		err := l.list(context.Background(), gvrConfigMap, "ns", "", CheckConfigMap, func(*unstructured.Unstructured) error {
			read++
			return nil
		})
		switch {
		case tc.want == "" && (err != nil || read != 3):
			t.Errorf("bound %d: read %d, err %v; want all 3 read", tc.max, read, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("bound %d: err %v, want %q", tc.max, err, tc.want)
		}
	}
}

// TestFetchOCIAllowlist: a provider's fetchConfig.oci on a registry outside
// the allowlist is refused without contacting it, naming the registry.
func TestFetchOCIAllowlist(t *testing.T) {
	p := &Provider{FetchOCI: "reg.example/capi/core", Version: "v1.0.0"}
	for _, allow := range [][]string{nil, {"other.example"}, {"reg.example/elsewhere"}} {
		r := fetchOCI(context.Background(), p, nil, Options{Allow: allow})
		if !strings.Contains(r.Refused, "registry reg.example is not one the scan may contact") || r.Err != "" || r.Artifact != nil {
			t.Errorf("allow %q: %+v, want refused naming reg.example", allow, r)
		}
	}
}
