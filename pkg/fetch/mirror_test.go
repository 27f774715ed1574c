package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/pin"
)

func TestParseMirrors(t *testing.T) {
	ms, err := ParseMirrors([]string{"https://github.com/=http://127.0.0.1:1/gh/"}, "https://github.com/=https://other/ , https://example.com/a/=file:///srv/a/\n")
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]string{
		"https://github.com/x/y/releases/download/v1/a.yaml": "http://127.0.0.1:1/gh/x/y/releases/download/v1/a.yaml", // the flag wins
		"https://example.com/a/b.yaml":                       "file:///srv/a/b.yaml",
		"https://example.com/b.yaml":                         "https://example.com/b.yaml",
	} {
		if got := RewriteURL(ms, u); got != want {
			t.Errorf("RewriteURL(%s) = %s, want %s", u, got, want)
		}
	}
	for _, bad := range []string{"nonsense", "=http://x/", "http://x/=", "ftp://x/=http://y/", "https://x/=https://user:pw@y/"} {
		if _, err := ParseMirrors([]string{bad}, ""); err == nil {
			t.Errorf("ParseMirrors(%q) accepted", bad)
		}
	}
}

// TestFetchThroughMirror: the bytes come from the mirror, the pin and the
// errors keep the canonical URL.
func TestFetchThroughMirror(t *testing.T) {
	body := []byte("kind: Namespace\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gh/x/y/releases/download/v1/a.yaml" {
			w.Write(body)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	sum := sha256.Sum256(body)
	f := &Fetcher{Mirrors: []Mirror{{From: "https://github.com/", To: srv.URL + "/gh/"}}}
	canonical := "https://github.com/x/y/releases/download/v1/a.yaml"
	got, err := f.Fetch(context.Background(), pin.Source{URL: canonical, SHA256: hex.EncodeToString(sum[:]), To: "files/a.yaml"})
	if err != nil || string(got) != string(body) {
		t.Fatalf("Fetch through mirror: %q, %v", got, err)
	}
	_, err = f.Fetch(context.Background(), pin.Source{URL: canonical, SHA256: strings.Repeat("ab", 32), To: "files/a.yaml"})
	var mm *ErrDigestMismatch
	if !errors.As(err, &mm) || mm.URL != canonical {
		t.Errorf("mismatch through mirror: %v", err)
	}
	_, err = f.FetchUnverified(context.Background(), "https://github.com/x/y/releases/download/v2/a.yaml")
	if err == nil || !strings.Contains(err.Error(), "through mirror") || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing file through mirror: %v", err)
	}
	if data, err := f.FetchUnverified(context.Background(), canonical); err != nil || string(data) != string(body) {
		t.Errorf("FetchUnverified: %q, %v", data, err)
	}
}

func FuzzParseMirrors(f *testing.F) {
	f.Add("https://github.com/=http://127.0.0.1:8089/")
	f.Add("a=b,c=d")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMirrors(nil, s)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.From == "" || m.To == "" || pin.CheckURL(m.From) != nil || pin.CheckURL(m.To) != nil {
				t.Fatalf("accepted %+v", m)
			}
			_ = RewriteURL(ms, m.From+"x")
		}
	})
}
