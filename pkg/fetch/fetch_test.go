package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/pin"
)

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// server serves body at every path; handle, when set, decides per request
// (n counts from 1) and returns false to fall through to serving body.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, body []byte, handle func(n int64, w http.ResponseWriter, r *http.Request) bool) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.hits.Add(1)
		if handle != nil && handle(n, w, r) {
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func quickFetcher(t *testing.T) *Fetcher {
	return &Fetcher{CacheDir: t.TempDir(), Retries: DefaultRetries, Backoff: time.Millisecond, Timeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// shaA is the SHA-256 of "a": a pin no test body matches.
const shaA = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"

var manifest = []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capmox-system\n")

func TestFetchServesVerifiesAndCaches(t *testing.T) {
	srv := newServer(t, manifest, nil)
	f := quickFetcher(t)
	src := pin.Source{URL: srv.URL + "/v0.7.7/infrastructure-components.yaml", SHA256: digest(manifest), To: "files/x.yaml"}
	got, err := f.Fetch(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, manifest) {
		t.Fatalf("got %q", got)
	}
	cached, err := os.ReadFile(f.CachePath(src.SHA256))
	if err != nil || !bytes.Equal(cached, manifest) {
		t.Fatalf("cache entry: %q, %v", cached, err)
	}
	entries, _ := os.ReadDir(filepath.Join(f.CacheDir, "sha256"))
	if len(entries) != 1 {
		t.Errorf("cache dir holds %d entries (temp files left?)", len(entries))
	}
	// A second fetch is served from the cache.
	if _, err := f.Fetch(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("server hit %d times, want 1", n)
	}
}

func TestFetchRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fail     func(w http.ResponseWriter, r *http.Request)
		failures int64
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusInternalServerError) }, 2},
		{"503", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "later", http.StatusServiceUnavailable) }, 1},
		{"429", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "slow down", http.StatusTooManyRequests) }, 1},
		{"cut-off body", func(w http.ResponseWriter, r *http.Request) {
			// Promise more bytes than are sent, then drop the connection.
			w.Header().Set("Content-Length", strconv.Itoa(len(manifest)))
			w.Write(manifest[:10])
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("cannot hijack")
				return
			}
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
				if n <= tc.failures {
					tc.fail(w, r)
					return true
				}
				return false
			})
			f := quickFetcher(t)
			got, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/c.yaml", SHA256: digest(manifest)})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, manifest) {
				t.Errorf("got %q", got)
			}
			if n := srv.hits.Load(); n != tc.failures+1 {
				t.Errorf("server hit %d times, want %d", n, tc.failures+1)
			}
		})
	}
}

func TestFetchGivesUp(t *testing.T) {
	srv := newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	})
	f := quickFetcher(t)
	f.Retries = 2
	_, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/c.yaml", SHA256: digest(manifest)})
	if err == nil || !strings.Contains(err.Error(), "3 attempts failed") || !strings.Contains(err.Error(), "502") {
		t.Errorf("got %v", err)
	} else if n := strings.Count(err.Error(), srv.URL); n != 1 {
		t.Errorf("the error names the URL %d times, want once: %v", n, err)
	}
	if n := srv.hits.Load(); n != 3 {
		t.Errorf("server hit %d times, want 3", n)
	}
}

// Retries 0 means no retry, whether set or left zero; negative means none
// too.
func TestFetchRetriesZeroMeansNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *Fetcher
	}{
		{"zero value", &Fetcher{}},
		{"Retries 0", &Fetcher{Retries: 0, Backoff: time.Millisecond}},
		{"Retries -1", &Fetcher{Retries: -1, Backoff: time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return true
			})
			tc.f.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			_, err := tc.f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/c.yaml", SHA256: digest(manifest)})
			if err == nil || !strings.Contains(err.Error(), "(1 attempts failed)") || !strings.Contains(err.Error(), "503") {
				t.Errorf("got %v", err)
			}
			if n := srv.hits.Load(); n != 1 {
				t.Errorf("server hit %d times, want 1", n)
			}
		})
	}
}

func TestFetchDoesNotRetry4xx(t *testing.T) {
	srv := newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
		http.NotFound(w, r)
		return true
	})
	f := quickFetcher(t)
	_, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/gone.yaml", SHA256: digest(manifest)})
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), srv.URL+"/gone.yaml") {
		t.Errorf("got %v", err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("server hit %d times, want 1", n)
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hang := func(n int64, w http.ResponseWriter, r *http.Request) bool {
		select { // hang until the client gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
		return true
	}
	t.Run("gives up", func(t *testing.T) {
		srv := newServer(t, manifest, hang)
		f := quickFetcher(t)
		f.Timeout, f.Retries = 20*time.Millisecond, 0
		_, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/slow.yaml", SHA256: digest(manifest)})
		if err == nil || !strings.Contains(err.Error(), "timed out after 20ms") {
			t.Errorf("got %v", err)
		}
		if n := srv.hits.Load(); n != 1 {
			t.Errorf("server hit %d times, want 1 (Retries 0)", n)
		}
	})
	t.Run("retried", func(t *testing.T) {
		srv := newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				return hang(n, w, r)
			}
			return false
		})
		f := quickFetcher(t)
		// Short enough to keep the test quick, with retries to spare so a
		// slow machine does not fail it.
		f.Timeout, f.Retries = 300*time.Millisecond, 5
		if _, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/slow.yaml", SHA256: digest(manifest)}); err != nil {
			t.Fatal(err)
		}
		if n := srv.hits.Load(); n < 2 {
			t.Errorf("server hit %d times, want a retry after the timeout", n)
		}
	})
}

func TestFetchCanceled(t *testing.T) {
	srv := newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return true
	})
	f := quickFetcher(t)
	f.Backoff = time.Hour // the cancel must cut the wait short
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.hits.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := f.Fetch(ctx, pin.Source{URL: srv.URL + "/c.yaml", SHA256: digest(manifest)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestFetchDigestMismatch(t *testing.T) {
	tampered := append([]byte("# tampered\n"), manifest...)
	srv := newServer(t, tampered, nil)
	f := quickFetcher(t)
	src := pin.Source{URL: srv.URL + "/v0.7.7/infrastructure-components.yaml", SHA256: digest(manifest)}
	_, err := f.Fetch(context.Background(), src)
	var mm *ErrDigestMismatch
	if !errors.As(err, &mm) {
		t.Fatalf("got %v, want *ErrDigestMismatch", err)
	}
	if mm.URL != src.URL || mm.Want != src.SHA256 || mm.Got != digest(tampered) || mm.Size != int64(len(tampered)) {
		t.Errorf("mismatch fields: %+v", mm)
	}
	for _, s := range []string{src.URL, src.SHA256, digest(tampered)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %s: %v", s, err)
		}
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("a mismatch was retried: %d hits", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(f.CacheDir, "sha256")); len(entries) != 0 {
		t.Errorf("the cache was written: %d entries", len(entries))
	}
}

func TestFetchOffline(t *testing.T) {
	srv := newServer(t, manifest, nil)
	src := pin.Source{URL: srv.URL + "/c.yaml", SHA256: digest(manifest)}
	f := quickFetcher(t)
	f.Offline = true
	_, err := f.Fetch(context.Background(), src)
	if err == nil || !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), f.CacheDir) {
		t.Errorf("offline miss: %v", err)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("offline fetch reached the network (%d hits)", n)
	}

	f.Offline = false
	if _, err := f.Fetch(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	f.Offline = true
	srv.Close() // nothing to reach now
	got, err := f.Fetch(context.Background(), src)
	if err != nil || !bytes.Equal(got, manifest) {
		t.Errorf("offline hit: %q, %v", got, err)
	}

	noCache := &Fetcher{Offline: true}
	if _, err := noCache.Fetch(context.Background(), src); err == nil || !strings.Contains(err.Error(), "no cache") {
		t.Errorf("offline without a cache: %v", err)
	}
}

func TestFetchCorruptCacheEntry(t *testing.T) {
	srv := newServer(t, manifest, nil)
	src := pin.Source{URL: srv.URL + "/c.yaml", SHA256: digest(manifest)}
	corrupt := func(f *Fetcher) {
		t.Helper()
		p := f.CachePath(src.SHA256)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("bit rot"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	f := quickFetcher(t)
	var logged bytes.Buffer
	f.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	corrupt(f)
	got, err := f.Fetch(context.Background(), src)
	if !strings.Contains(logged.String(), "discarded a corrupt cache entry") {
		t.Errorf("no warning logged: %q", logged.String())
	}
	if err != nil || !bytes.Equal(got, manifest) {
		t.Fatalf("online with a corrupt entry: %q, %v", got, err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("corrupt entry not refetched: %d hits", n)
	}
	if cached, _ := os.ReadFile(f.CachePath(src.SHA256)); !bytes.Equal(cached, manifest) {
		t.Errorf("cache not repaired: %q", cached)
	}

	corrupt(f)
	f.Offline = true
	_, err = f.Fetch(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "does not match its digest") || !errors.Is(err, ErrOffline) {
		t.Errorf("offline with a corrupt entry: %v", err)
	}
	if _, err := os.Stat(f.CachePath(src.SHA256)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("corrupt entry kept: %v", err)
	}
}

func TestFetchFileURLs(t *testing.T) {
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "upstream"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(base, "upstream", "core components.yaml")
	if err := os.WriteFile(p, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &Fetcher{BaseDir: base, Offline: true} // file: needs no network
	for _, u := range []string{
		"file:upstream/core%20components.yaml",
		"file://" + filepath.ToSlash(strings.ReplaceAll(p, " ", "%20")),
	} {
		got, err := f.Fetch(context.Background(), pin.Source{URL: u, SHA256: digest(manifest)})
		if err != nil || !bytes.Equal(got, manifest) {
			t.Errorf("%s: %q, %v", u, got, err)
		}
	}
	_, err := f.Fetch(context.Background(), pin.Source{URL: "file:upstream/core%20components.yaml", SHA256: shaA})
	var mm *ErrDigestMismatch
	if !errors.As(err, &mm) {
		t.Errorf("file mismatch: %v", err)
	}
	if _, err := f.Fetch(context.Background(), pin.Source{URL: "file:upstream/missing.yaml", SHA256: shaA}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFetchSizeLimit(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 4096)
	for _, tc := range []struct {
		name   string
		handle func(n int64, w http.ResponseWriter, r *http.Request) bool
	}{
		{"content-length", nil},
		{"chunked", func(n int64, w http.ResponseWriter, r *http.Request) bool {
			for i := 0; i < 4; i++ {
				w.Write(big[:1024])
				w.(http.Flusher).Flush()
			}
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, big, tc.handle)
			f := quickFetcher(t)
			f.MaxBytes = 1000
			_, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/big.yaml", SHA256: digest(big)})
			if err == nil || !strings.Contains(err.Error(), "larger than the 1000 B limit") {
				t.Errorf("got %v", err)
			}
			if n := srv.hits.Load(); n != 1 {
				t.Errorf("an oversize file was retried: %d hits", n)
			}
		})
	}
}

func TestFetchProgress(t *testing.T) {
	srv := newServer(t, manifest, nil)
	var out bytes.Buffer
	f := quickFetcher(t)
	f.Progress = &out
	if _, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/x/c.yaml", SHA256: digest(manifest)}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "c.yaml") || !strings.Contains(s, "(100%)") || !strings.HasSuffix(s, "done\n") {
		t.Errorf("progress output %q", s)
	}
	// Quiet when Progress is nil: nothing to capture, but no panic either.
	f.Progress = nil
	f.CacheDir = t.TempDir()
	if _, err := f.Fetch(context.Background(), pin.Source{URL: srv.URL + "/x/c.yaml", SHA256: digest(manifest)}); err != nil {
		t.Fatal(err)
	}
}

func TestFetchRefusesUnpinnedAndBadURLs(t *testing.T) {
	f := &Fetcher{}
	for _, src := range []pin.Source{
		{URL: "https://example.com/x.yaml"},
		{URL: "https://example.com/x.yaml", SHA256: strings.ToUpper(shaA)},
		{URL: "ftp://example.com/x.yaml", SHA256: shaA},
		{URL: "https://user:pw@example.com/x.yaml", SHA256: shaA},
	} {
		_, err := f.Fetch(context.Background(), src)
		if err == nil {
			t.Errorf("%+v: fetched", src)
		} else if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("credentials in the error: %v", err)
		}
	}
}

func TestFetchRefusesHTTPSDowngrade(t *testing.T) {
	plain := newServer(t, manifest, nil)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+"/c.yaml", http.StatusFound)
	}))
	t.Cleanup(tlsSrv.Close)
	// The default client's redirect policy, with the test server's TLS trust.
	f := quickFetcher(t)
	client := *f.client()
	client.Transport = tlsSrv.Client().Transport
	f.Client = &client
	_, err := f.Fetch(context.Background(), pin.Source{URL: tlsSrv.URL + "/c.yaml", SHA256: digest(manifest)})
	if err == nil || !strings.Contains(err.Error(), "refusing redirect from https") {
		t.Errorf("got %v", err)
	}
	if n := plain.hits.Load(); n != 0 {
		t.Errorf("followed the downgrade")
	}
}

// TestFetchRedirectHosts: a download follows a redirect only to the host
// it was sent to, GitHub's download storage or a RedirectHosts host;
// anything else is refused before a request reaches it.
func TestFetchRedirectHosts(t *testing.T) {
	target := newServer(t, manifest, nil)
	targetHost := strings.TrimPrefix(target.URL, "http://")
	for _, tc := range []struct {
		name    string
		allow   []string
		to      string // the redirect's target: "same" the origin itself, "other" the target server
		wantErr string
	}{
		{name: "same host", to: "same"},
		{name: "another host, not allowed", to: "other", wantErr: "--allow-host " + targetHost},
		{name: "another host, allowed as host:port", allow: []string{targetHost}, to: "other"},
		{name: "another port of an allowed host name only", allow: []string{"example.com"}, to: "other", wantErr: "not among the allowed hosts"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := target.hits.Load()
			var origin *server
			origin = newServer(t, manifest, func(n int64, w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/c.yaml" {
					return false
				}
				to := target.URL
				if tc.to == "same" {
					to = origin.URL
				}
				http.Redirect(w, r, to+"/moved.yaml", http.StatusFound)
				return true
			})
			f := quickFetcher(t)
			f.RedirectHosts = tc.allow
			_, err := f.Fetch(context.Background(), pin.Source{URL: origin.URL + "/c.yaml", SHA256: digest(manifest)})
			hits := target.hits.Load() - before
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if tc.to == "other" && hits != 1 {
					t.Errorf("%d requests reached the allowed host, want 1", hits)
				}
				return
			}
			if !errors.Is(err, ErrRedirectNotAllowed) || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), targetHost) {
				t.Errorf("got %v, want ErrRedirectNotAllowed naming %s and %q", err, targetHost, tc.wantErr)
			}
			if hits != 0 {
				t.Errorf("%d requests reached the host nobody allowed", hits)
			}
		})
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/var/cache/ci")
	if got := DefaultCacheDir(); got != filepath.Join("/var/cache/ci", "pinseal") {
		t.Errorf("with XDG_CACHE_HOME: %s", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/builder")
	if got := DefaultCacheDir(); got != filepath.Join("/home/builder", ".cache", "pinseal") {
		t.Errorf("without XDG_CACHE_HOME: %s", got)
	}
}
