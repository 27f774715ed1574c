//go:build integration

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/cluster"
	"github.com/pinseal/pinseal/internal/app/service/store"
)

// A hostile API server on 127.0.0.1 against the real `verifier cluster`
// and a cluster source of `verifier serve`: one that answers every list
// with no items and a new continue token is asked at most
// cluster.DefaultMaxPages times; one whose pages hold 50 providers with
// 1 MiB condition messages costs what one object weighs, not the pages.

// fakeAPI is an API server whose lists of CoreProviders are made by page
// (the page number from 1, and whether to end there); every other list is
// empty. It counts the requests.
type fakeAPI struct {
	*httptest.Server
	asked atomic.Int64
}

func newFakeAPI(t *testing.T, page func(w http.ResponseWriter, n int64)) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/coreproviders") {
			n := f.asked.Add(1)
			page(w, n)
			return
		}
		fmt.Fprint(w, `{"kind":"List","metadata":{},"items":[]}`)
	}))
	t.Cleanup(f.Close)
	return f
}

// kubeconfig is a kubeconfig file for the server at url.
func kubeconfigFor(t *testing.T, url string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: %q}}]
users: [{name: fake, user: {token: t}}]
contexts: [{name: fake, context: {cluster: fake, user: fake}}]
current-context: fake
`, url)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// providerPage writes a page of n CoreProviders, each with a condition
// message of msg bytes, continuing when more.
func providerPage(w http.ResponseWriter, page int64, n, msg int, more bool) {
	cont := ""
	if more {
		cont = fmt.Sprintf("page-%d", page)
	}
	fmt.Fprintf(w, `{"kind":"CoreProviderList","metadata":{"continue":%q},"items":[`, cont)
	text := strings.Repeat("m", msg)
	for i := range n {
		if i > 0 {
			w.Write([]byte(","))
		}
		fmt.Fprintf(w, `{"metadata":{"name":"p%d-%d","namespace":"ns%d"},"spec":{"version":"v1.10.1-core"},`+
			`"status":{"installedVersion":"v1.10.1-core","conditions":[{"type":"Ready","status":"False","reason":"R","message":%q,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`,
			page, i, i%7, text)
	}
	w.Write([]byte("]}"))
}

func TestIntegrationClusterHostileAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the verifier against hostile API servers")
	}
	type attack struct {
		name string
		page func(w http.ResponseWriter, n int64)
		want string // in the error; "" for a report
	}
	attacks := []attack{
		{"empty pages that never end", func(w http.ResponseWriter, n int64) {
			fmt.Fprintf(w, `{"kind":"CoreProviderList","metadata":{"continue":"page-%d"},"items":[]}`, n)
		}, fmt.Sprintf("took more than %d pages (0 objects so far)", cluster.DefaultMaxPages)},
		{"pages of 50 providers with 1 MiB messages", func(w http.ResponseWriter, n int64) {
			providerPage(w, n, 50, 1<<20, true)
		}, "read more than 268435456 bytes across its pages"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			api := newFakeAPI(t, a.page)
			r := runPeak(t, nil, "cluster", "--kubeconfig", kubeconfigFor(t, api.URL), "-o", "json")
			t.Logf("verifier cluster: exit %d in %s after %d requests, peak RSS %d MiB", r.code, r.took.Round(time.Millisecond), api.asked.Load(), r.peak>>20)
			if r.code != 2 || !strings.Contains(r.stderr, a.want) {
				t.Fatalf("exit %d, want 2 saying %q\n%s", r.code, a.want, tail(r.stderr, 2000))
			}
			if got := api.asked.Load(); got > cluster.DefaultMaxPages {
				t.Errorf("asked %d times, more than %d pages", got, cluster.DefaultMaxPages)
			}
			if r.peak > 192<<20 {
				t.Errorf("peak RSS %d MiB, want at most 192 MiB", r.peak>>20)
			}
			if r.work > workBound {
				t.Errorf("used %s of CPU (%s of wall-clock time)", r.work, r.took)
			}
		})
	}

	// The documented bound: 10,000 providers of a realistic size (a
	// 512-byte message), read whole.
	t.Run("10000 objects", func(t *testing.T) {
		pages := int64(cluster.DefaultMaxObjects / cluster.PageSize)
		api := newFakeAPI(t, func(w http.ResponseWriter, n int64) { providerPage(w, n, cluster.PageSize, 512, n < pages) })
		r := runPeak(t, nil, "cluster", "--kubeconfig", kubeconfigFor(t, api.URL), "-o", "json")
		t.Logf("verifier cluster, %d providers: exit %d in %s after %d requests, peak RSS %d MiB", cluster.DefaultMaxObjects, r.code, r.took.Round(time.Millisecond), api.asked.Load(), r.peak>>20)
		if r.code == 2 {
			t.Fatalf("exit 2: %s", tail(r.stderr, 2000))
		}
		if r.peak > 256<<20 {
			t.Errorf("peak RSS %d MiB, want at most 256 MiB", r.peak>>20)
		}
	})

	t.Run("cluster source of verifier serve", func(t *testing.T) {
		api := newFakeAPI(t, func(w http.ResponseWriter, n int64) {
			fmt.Fprintf(w, `{"kind":"CoreProviderList","metadata":{"continue":"page-%d"},"items":[]}`, n)
		})
		big := newFakeAPI(t, func(w http.ResponseWriter, n int64) { providerPage(w, n, 50, 1<<20, true) })
		dir := t.TempDir()
		cfg := fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
publicReads: true
sources:
  - name: empty-pages
    cluster: {kubeconfig: %q}
  - name: big-pages
    cluster: {kubeconfig: %q}
limits:
  scanTimeout: 120s
`, filepath.Join(dir, "data"), kubeconfigFor(t, api.URL), kubeconfigFor(t, big.URL))
		cfgFile := filepath.Join(dir, "serve.yaml")
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		s := startRealServer(t, cfgFile)
		for _, tc := range []struct {
			source, want string
			api          *fakeAPI
		}{
			{"empty-pages", fmt.Sprintf("took more than %d pages", cluster.DefaultMaxPages), api},
			{"big-pages", "read more than 268435456 bytes across its pages", big},
		} {
			_, before := s.memKiB()
			resetPeak(t, s.cmd.Process.Pid)
			start := time.Now()
			sc := s.scan(tc.source)
			peak, _ := s.memKiB()
			t.Logf("scan of %s: %s in %s after %d requests (%s); server RSS %d MiB before, peak %d MiB during", tc.source, sc.Scan.Status, time.Since(start).Round(time.Millisecond), tc.api.asked.Load(), sc.Scan.Error, before>>10, peak>>10)
			if sc.Scan.Status != store.Failed || !strings.Contains(sc.Scan.Error, tc.want) {
				t.Errorf("scan %+v, want failed saying %q", sc.Scan, tc.want)
			}
			if got := tc.api.asked.Load(); got > cluster.DefaultMaxPages {
				t.Errorf("asked %d times, more than %d pages", got, cluster.DefaultMaxPages)
			}
			if rise := (peak - before) << 10; rise > 128<<20 {
				t.Errorf("server peak RSS rose by %d MiB, more than 128 MiB", rise>>20)
			}
		}
	})
}
