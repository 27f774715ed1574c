// Package releasehost is a stand-in of GitHub's release host on 127.0.0.1:
// the releases API and the release asset downloads.
//
// It serves, for the releases a test adds:
//
//	GET /repos/OWNER/REPO/releases                 the releases, newest first
//	GET /repos/OWNER/REPO/releases/tags/TAG        one release with its assets
//	GET /OWNER/REPO/releases/download/TAG/FILE     an asset's bytes
//
// The release JSON carries what GitHub's REST API gives (tag_name, draft,
// prerelease, assets with name, size, browser_download_url and digest
// "sha256:<hex>"). The download URLs it names are the canonical
// https://github.com ones, as GitHub's are: a client reaches the stand-in
// through a mirror rewriting https://github.com/ to URL()+"/".
package releasehost

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Asset is one file of a release.
type Asset struct {
	Name string
	Data []byte
	// NoDigest leaves the API's digest field out, as GitHub does for
	// assets uploaded before it computed them.
	NoDigest bool
}

// Host is the stand-in.
type Host struct {
	srv      *httptest.Server
	mu       sync.Mutex
	releases map[string][]release // by OWNER/REPO, in the order added
	requests []string
	// Redirect, when set, answers every asset download with a redirect
	// to Redirect+path, as GitHub sends downloads to its object storage.
	Redirect string
}

type release struct {
	tag    string
	assets []Asset
}

// Start starts a Host, closed when the test ends.
func Start(t testing.TB) *Host {
	t.Helper()
	h := New()
	t.Cleanup(h.Close)
	return h
}

// New starts a Host the caller closes (for examples, which have no
// testing.TB).
func New() *Host {
	h := &Host{releases: map[string][]release{}}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// Close stops the Host.
func (h *Host) Close() { h.srv.Close() }

// URL is http://127.0.0.1:PORT.
func (h *Host) URL() string { return h.srv.URL }

// Addr is 127.0.0.1:PORT.
func (h *Host) Addr() string { return strings.TrimPrefix(h.srv.URL, "http://") }

// Mirror is the FROM=TO mirror setting that sends GitHub release
// downloads here.
func (h *Host) Mirror() string { return "https://github.com/=" + h.srv.URL + "/" }

// Add publishes release tag of OWNER/REPO with assets.
func (h *Host) Add(repo, tag string, assets ...Asset) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releases[repo] = append(h.releases[repo], release{tag: tag, assets: assets})
}

// Replace swaps the bytes of one asset of a release (a moved tag).
func (h *Host) Replace(repo, tag, name string, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.releases[repo] {
		for i := range r.assets {
			if r.tag == tag && r.assets[i].Name == name {
				r.assets[i].Data = data
			}
		}
	}
}

// Requests are the request paths served so far, in order.
func (h *Host) Requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

// SHA256 is the lowercase hex SHA-256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

type apiAsset struct {
	Name   string `json:"name"`
	Size   int    `json:"size"`
	URL    string `json:"browser_download_url"`
	Digest string `json:"digest,omitempty"`
}

type apiRelease struct {
	Tag        string     `json:"tag_name"`
	Name       string     `json:"name"`
	Draft      bool       `json:"draft"`
	Prerelease bool       `json:"prerelease"`
	HTMLURL    string     `json:"html_url"`
	Assets     []apiAsset `json:"assets"`
}

func (h *Host) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r.URL.Path)
	h.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 4 && parts[0] == "repos" && parts[3] == "releases":
		h.list(w, parts[1]+"/"+parts[2])
	case len(parts) == 6 && parts[0] == "repos" && parts[3] == "releases" && parts[4] == "tags":
		h.one(w, parts[1]+"/"+parts[2], parts[5])
	case len(parts) == 6 && parts[2] == "releases" && parts[3] == "download":
		if h.Redirect != "" {
			http.Redirect(w, r, h.Redirect+r.URL.Path, http.StatusFound)
			return
		}
		h.download(w, parts[0]+"/"+parts[1], parts[4], parts[5])
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
}

func (h *Host) find(repo, tag string) (release, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.releases[repo] {
		if r.tag == tag {
			return r, true
		}
	}
	return release{}, false
}

func (h *Host) toAPI(repo string, r release) apiRelease {
	out := apiRelease{Tag: r.tag, HTMLURL: "https://github.com/" + repo + "/releases/tag/" + r.tag, Assets: []apiAsset{}}
	for _, a := range r.assets {
		aa := apiAsset{Name: a.Name, Size: len(a.Data), URL: "https://github.com/" + repo + "/releases/download/" + r.tag + "/" + a.Name}
		if !a.NoDigest {
			aa.Digest = "sha256:" + SHA256(a.Data)
		}
		out.Assets = append(out.Assets, aa)
	}
	return out
}

func (h *Host) list(w http.ResponseWriter, repo string) {
	h.mu.Lock()
	rels := append([]release(nil), h.releases[repo]...)
	h.mu.Unlock()
	if len(rels) == 0 {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	out := []apiRelease{}
	for i := len(rels) - 1; i >= 0; i-- {
		out = append(out, h.toAPI(repo, rels[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Host) one(w http.ResponseWriter, repo, tag string) {
	r, ok := h.find(repo, tag)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, h.toAPI(repo, r))
}

func (h *Host) download(w http.ResponseWriter, repo, tag, name string) {
	r, ok := h.find(repo, tag)
	if ok {
		for _, a := range r.assets {
			if a.Name == name {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(a.Data)
				return
			}
		}
	}
	http.Error(w, "Not Found", http.StatusNotFound)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
