package artifact

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// recorder is an HTTP server that records every request's path and
// Authorization header.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Method+" "+req.URL.Path+" auth="+req.Header.Get("Authorization"))
		r.mu.Unlock()
		if h != nil {
			h(w, req)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

func (r *recorder) host() string { return strings.TrimPrefix(r.URL, "http://") }

// staticCreds is a credential store with one entry.
type staticCreds struct{ host, user, pass string }

func (s staticCreds) Get(_ context.Context, addr string) (auth.Credential, error) {
	if addr == s.host {
		return auth.Credential{Username: s.user, Password: s.pass}, nil
	}
	return auth.EmptyCredential, nil
}
func (staticCreds) Put(context.Context, string, auth.Credential) error { return nil }
func (staticCreds) Delete(context.Context, string) error               { return nil }

const manifestJSON = `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","size":2},"layers":[]}`

// TestRegistryGuard: a registry's realm and redirects cannot send the
// verifier to a host outside the allowlist, its credentials go to no
// other host, and its error bodies are not relayed.
func TestRegistryGuard(t *testing.T) {
	other := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"token":"stolen"}`) })
	// An allowed token service on another host.
	tokens := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"token":"good-token"}`) })

	for _, tt := range []struct {
		name    string
		handler func(w http.ResponseWriter, r *http.Request)
		allowed []string
		wantErr []string // in the error; nil: resolves
		notErr  string
	}{
		{"realm elsewhere", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/latest/meta-data",service="x"`, other.URL))
			w.WriteHeader(http.StatusUnauthorized)
		}, nil, []string{"refused to contact " + other.host(), "not an allowed registry host"}, ""},
		{"redirect elsewhere", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/latest/meta-data", http.StatusTemporaryRedirect)
		}, nil, []string{"refused to contact " + other.host()}, ""},
		{"error body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"errors":[{"code":"UNKNOWN","message":"SECRET-UPSTREAM-BODY"}]}`)
		}, nil, []string{"response status code 500", "/v2/capi/x/manifests/v1"}, "SECRET-UPSTREAM-BODY"},
		{"allowed realm gets no credentials", func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer good-token" {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="x"`, tokens.URL))
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Docker-Content-Digest", "sha256:"+fmt.Sprintf("%x", sha256Sum(manifestJSON)))
			w.Header().Set("Content-Length", fmt.Sprint(len(manifestJSON)))
			if r.Method == http.MethodGet {
				fmt.Fprint(w, manifestJSON)
			}
		}, []string{tokens.host()}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := newRecorder(t, tt.handler)
			opts := Options{PlainHTTP: true, AllowedHosts: tt.allowed,
				Credentials: staticCreds{host: reg.host(), user: "ci", pass: "registry-password"}}
			repo, err := OpenRegistry(reg.host()+"/capi/x", opts)
			if err != nil {
				t.Fatal(err)
			}
			// GET, as a pull does (a HEAD answer has no body to relay).
			_, rc, err := repo.(registry.ReferenceFetcher).FetchReference(context.Background(), "v1")
			if err == nil {
				rc.Close()
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				if err == nil {
					t.Fatal("resolved")
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if tt.notErr != "" && strings.Contains(err.Error(), tt.notErr) {
					t.Errorf("error %q relays the registry's body", err)
				}
			}
			if got := other.requests(); len(got) != 0 {
				t.Fatalf("the host outside the allowlist saw %v", got)
			}
			for _, r := range tokens.requests() {
				if !strings.HasSuffix(r, "auth=") {
					t.Fatalf("the token host got credentials: %s", r)
				}
			}
		})
	}
	if len(tokens.requests()) == 0 {
		t.Fatal("the allowed token service was never asked (the test proves nothing)")
	}
	var he *HostRefusedError
	if err := newGuard("a:1", nil, http.DefaultTransport).checkRedirect(httptest.NewRequest("GET", "http://b:2/x", nil), nil); !errors.As(err, &he) || he.Host != "b:2" {
		t.Fatalf("checkRedirect: %v", err)
	}
}

func sha256Sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }
