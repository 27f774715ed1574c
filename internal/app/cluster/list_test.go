package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// testLister is a lister of the API server at url with the default bounds.
func testLister(t *testing.T, url string) *lister {
	t.Helper()
	rc, err := rest.UnversionedRESTClientFor(&rest.Config{Host: url,
		ContentConfig: rest.ContentConfig{ContentType: "application/json", NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
	if err != nil {
		t.Fatal(err)
	}
	return &lister{rc: rc, snap: &Snapshot{Context: "c"}, maxObjects: DefaultMaxObjects, maxPages: DefaultMaxPages, maxBytes: DefaultMaxListBytes}
}

func skipObject(dec *json.Decoder) error {
	var v struct{}
	return dec.Decode(&v)
}

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
	for _, tc := range []struct {
		max  int
		want string
	}{{3, ""}, {2, "more than 2 configmaps"}} {
		l := testLister(t, srv.URL)
		l.maxObjects = tc.max
		read := 0
		err := l.list(context.Background(), gvrConfigMap, "ns", "", CheckConfigMap, func(dec *json.Decoder) error {
			read++
			return skipObject(dec)
		})
		switch {
		case tc.want == "" && (err != nil || read != 3):
			t.Errorf("bound %d: read %d, err %v; want all 3 read", tc.max, read, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("bound %d: err %v, want %q", tc.max, err, tc.want)
		}
	}
}

// TestListMaxPages: an API server that answers every list with no items
// and a new continue token is asked DefaultMaxPages times, then refused
// naming the bound; one that ends its pages is read to the end.
func TestListMaxPages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages int64 // pages before the last; -1: never ending
		want  string
	}{
		{"never ending", -1, fmt.Sprintf("took more than %d pages (0 objects so far)", DefaultMaxPages)},
		{"ending at the bound", DefaultMaxPages - 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := asked.Add(1)
				w.Header().Set("Content-Type", "application/json")
				cont := fmt.Sprintf("page-%d", n)
				if tc.pages >= 0 && n > tc.pages {
					cont = ""
				}
				fmt.Fprintf(w, `{"kind":"ConfigMapList","metadata":{"continue":%q},"items":[]}`, cont)
			}))
			defer srv.Close()
			err := testLister(t, srv.URL).list(context.Background(), gvrConfigMap, "ns", "", CheckConfigMap, skipObject)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if got := asked.Load(); got > DefaultMaxPages {
				t.Errorf("asked %d times, more than %d pages", got, DefaultMaxPages)
			}
		})
	}
}

// TestListMaxBytes: pages within the response bound whose sum passes the
// list's byte bound stop the list, naming the bound.
func TestListMaxBytes(t *testing.T) {
	pad := strings.Repeat("x", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"ConfigMapList","metadata":{"continue":"more"},"items":[{"metadata":{"name":"a","annotations":{"x":%q}}}]}`, pad)
	}))
	defer srv.Close()
	l := testLister(t, srv.URL)
	l.maxBytes = 8 << 20
	err := l.list(context.Background(), gvrConfigMap, "ns", "", CheckConfigMap, skipObject)
	if err == nil || !strings.Contains(err.Error(), "read more than 8388608 bytes across its pages") {
		t.Fatalf("err %v, want the list's byte bound", err)
	}
}

// TestCappedFields: condition messages, reasons and annotations longer
// than MaxField are cut as they are decoded, on a whole character; the
// fields the checks compare are kept whole.
func TestCappedFields(t *testing.T) {
	long := strings.Repeat("é", MaxField) + `\"tail`
	doc := fmt.Sprintf(`{"metadata":{"name":"p","namespace":"ns","annotations":{"a":%q}},
		"spec":{"version":"v1.0.0"},
		"status":{"conditions":[{"type":"Ready","status":"False","reason":%q,"message":%q}]}}`, long, long, long)
	var pj providerJSON
	if err := json.Unmarshal([]byte(doc), &pj); err != nil {
		t.Fatal(err)
	}
	p := pj.provider("CoreProvider")
	c := p.Conditions[0]
	for what, v := range map[string]string{"message": c.Message, "reason": c.Reason, "annotation": string(pj.Metadata.Annotations["a"])} {
		if len(v) > MaxField+len("…") || !strings.HasSuffix(v, "…") || !strings.HasPrefix(v, "éé") || strings.ContainsRune(v, '\uFFFD') {
			t.Errorf("%s: %d bytes %q…, want at most %d bytes, cut on a character", what, len(v), v[:8], MaxField)
		}
	}
	if p.Version != "v1.0.0" || p.Name != "p" || c.Type != "Ready" {
		t.Errorf("kept fields: %+v", p)
	}
	for _, short := range []string{`"ok"`, `"a\"b"`, `null`} {
		var v capped
		if err := json.Unmarshal([]byte(short), &v); err != nil || strings.HasSuffix(string(v), "…") {
			t.Errorf("%s: %q, %v", short, v, err)
		}
	}
}
