// Package releaseapi is a stand-in for GitHub's releases API and its
// release downloads on 127.0.0.1.
//
// Its API host answers, in the shape GitHub documents:
//
//	GET /repos/{owner}/{repo}/releases                the releases, newest first: per_page/page
//	                                                  paging with a Link header
//	GET /repos/{owner}/{repo}/releases/tags/{tag}     one release with its assets
//	GET /repos/{owner}/{repo}/releases/assets/{id}    an asset: a redirect to the objects host
//	                                                  as GitHub's is, or the bytes themselves
//
// with the X-RateLimit-* headers and a bearer token. Its second host, the
// objects host, serves each asset at the path its github.com download URL
// has (/{owner}/{repo}/releases/download/{tag}/{name}), so the mirror
// Mirror() names serves the files a pin names; it can redirect those
// downloads elsewhere (RedirectDownloads), as GitHub sends them to its
// object storage. Asset digests are "sha256:<hex>", left out or wrong when
// a test asks.
package releaseapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// File is one asset of a release.
type File struct {
	Name string
	Data []byte
	// NoDigest leaves the asset's digest out (GitHub gives none for
	// assets uploaded before June 2025).
	NoDigest bool
	// WrongDigest gives a digest of other bytes.
	WrongDigest bool
	// Digest, when set, is the asset's digest as given (another
	// algorithm's, say), instead of the SHA-256 of Data.
	Digest string
	// URL, when set, is the asset's API url instead of the stand-in's
	// own endpoint (a host a test watches).
	URL string
	// RedirectTo, when set, is where the asset endpoint redirects
	// instead of the objects host.
	RedirectTo string
	// Direct serves the bytes from the asset endpoint itself, with no
	// redirect.
	Direct bool
}

// Release is one release of a repository.
type Release struct {
	Tag        string
	Prerelease bool
	Draft      bool
	Files      []File
}

// Server is the stand-in. Its fields are set before the first request.
type Server struct {
	// Token, when set, is the only bearer token accepted.
	Token string
	// Limit is the rate limit (requests to the API host); 0 = 5000.
	Limit int
	// NextHost, when set, replaces scheme://host of next-page links.
	NextHost string

	api, objects *httptest.Server
	mu           sync.Mutex
	repos        map[string][]Release
	repoIDs      map[string]int // order of first Add: keeps asset ids apart across repositories
	assets       map[int]asset
	used         int
	redirect     string
	requests     []string
	auth         []string
	objectAuth   []string
}

type asset struct {
	repo string
	rel  string
	file File
}

// New starts a stand-in, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := Start()
	t.Cleanup(s.Close)
	for _, u := range []string{s.api.URL, s.objects.URL} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("stand-in not on 127.0.0.1: %s", u)
		}
	}
	return s
}

// Start starts a stand-in for an example; Close stops it.
func Start() *Server {
	s := &Server{repos: map[string][]Release{}, repoIDs: map[string]int{}, assets: map[int]asset{}}
	s.api = httptest.NewServer(http.HandlerFunc(s.serveAPI))
	s.objects = httptest.NewServer(http.HandlerFunc(s.serveObjects))
	return s
}

// Close stops the stand-in.
func (s *Server) Close() {
	s.api.Close()
	s.objects.Close()
}

// URL is the API root (what --api-url takes).
func (s *Server) URL() string { return s.api.URL }

// Objects is the root of the objects host, where assets are downloaded:
// mirror https://github.com/ to Objects()+"/".
func (s *Server) Objects() string { return s.objects.URL }

// ObjectsHost is HOST:PORT of the objects host (what --allow-host takes).
func (s *Server) ObjectsHost() string { return strings.TrimPrefix(s.objects.URL, "http://") }

// Mirror is the FROM=TO mirror setting (--mirror) that sends GitHub
// release downloads to the objects host.
func (s *Server) Mirror() string { return "https://github.com/=" + s.objects.URL + "/" }

// Add lists releases of repo (owner/name), newest first as GitHub lists
// them, after those already added.
func (s *Server) Add(repo string, rels ...Release) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoID(repo)
	for _, rel := range rels {
		rel.Files = slices.Clone(rel.Files)
		s.repos[repo] = append(s.repos[repo], rel)
	}
}

// Publish lists rel of repo before those already added: a new release,
// the newest.
func (s *Server) Publish(repo string, rel Release) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repoID(repo)
	rel.Files = slices.Clone(rel.Files)
	s.repos[repo] = append([]Release{rel}, s.repos[repo]...)
}

// RedirectDownloads makes the objects host answer every download with a
// redirect to to+path (a host a test watches).
func (s *Server) RedirectDownloads(to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect = to
}

// UseUp spends what is left of the rate limit: every API request after
// it is refused as over the limit.
func (s *Server) UseUp() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = s.limit()
}

func (s *Server) limit() int {
	if s.Limit == 0 {
		return 5000
	}
	return s.Limit
}

// repoID numbers repo the first time it is seen (asset ids stay apart
// per repository); s.mu is held.
func (s *Server) repoID(repo string) {
	if _, ok := s.repoIDs[repo]; !ok {
		s.repoIDs[repo] = len(s.repoIDs)
	}
}

// Requests are the request URIs the API host received, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Auth are the Authorization headers of the API requests, in order.
func (s *Server) Auth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// ObjectAuth are the Authorization headers the objects host received.
func (s *Server) ObjectAuth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.objectAuth...)
}

// SHA256 is the lowercase hex SHA-256 of b.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Metadata is a clusterctl metadata.yaml listing series "MAJOR.MINOR=CONTRACT".
func Metadata(series ...string) []byte {
	var b strings.Builder
	b.WriteString("# maps release series of major.minor to cluster-api contract version\napiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n")
	for _, sr := range series {
		var maj, min int
		var c string
		fmt.Sscanf(strings.Replace(sr, "=", " ", 1), "%d.%d %s", &maj, &min, &c)
		fmt.Fprintf(&b, "  - major: %d\n    minor: %d\n    contract: %s\n", maj, min, c)
	}
	return []byte(b.String())
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.URL.RequestURI())
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if !allowedMethod(w, r) {
		return
	}
	if a := r.Header.Get("Authorization"); s.Token != "" && a != "" && a != "Bearer "+s.Token {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
		return
	}
	if !s.rateLimit(w) {
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) == 4 && parts[0] == "repos" && parts[3] == "releases":
		s.list(w, r, parts[1]+"/"+parts[2])
	case len(parts) == 6 && parts[0] == "repos" && parts[3] == "releases" && parts[4] == "tags":
		s.byTag(w, parts[1]+"/"+parts[2], parts[5])
	case len(parts) == 6 && parts[0] == "repos" && parts[3] == "releases" && parts[4] == "assets":
		s.assetEndpoint(w, r, parts[5])
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","status":"404"}`)
	}
}

// allowedMethod refuses what is not GET or HEAD.
func allowedMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.WriteHeader(http.StatusMethodNotAllowed)
	fmt.Fprint(w, `{"message":"Method Not Allowed","status":"405"}`)
	return false
}

// rateLimit sets the X-RateLimit-* headers and refuses when used up.
func (s *Server) rateLimit(w http.ResponseWriter) bool {
	limit := s.limit()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 10))
	if s.used >= limit {
		h.Set("X-RateLimit-Remaining", "0")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"API rate limit exceeded for 127.0.0.1."}`)
		return false
	}
	s.used++
	h.Set("X-RateLimit-Remaining", strconv.Itoa(limit-s.used))
	return true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, repo string) {
	rels, ok := s.repos[repo]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/releases/releases#list-releases","status":"404"}`)
		return
	}
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	last := (len(rels) + per - 1) / per
	from, to := min((page-1)*per, len(rels)), min(page*per, len(rels))
	link := func(p int) string {
		host := "http://" + r.Host
		if s.NextHost != "" {
			host = s.NextHost
		}
		return fmt.Sprintf("<%s%s?per_page=%d&page=%d>", host, r.URL.Path, per, p)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1)+`; rel="next"`, link(last)+`; rel="last"`)
	}
	if page > 1 {
		links = append(links, link(1)+`; rel="first"`, link(page-1)+`; rel="prev"`)
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := make([]map[string]any, 0, to-from)
	for i, rel := range rels[from:to] {
		out = append(out, s.object(repo, from+i, rel))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(out)
}

// byTag answers one release by its tag.
func (s *Server) byTag(w http.ResponseWriter, repo, tag string) {
	for n, rel := range s.repos[repo] {
		if rel.Tag == tag {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			json.NewEncoder(w).Encode(s.object(repo, n, rel))
			return
		}
	}
	w.WriteHeader(http.StatusNotFound)
	fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/releases/releases#get-a-release-by-tag-name","status":"404"}`)
}

// object is a release in GitHub's JSON shape; its assets get ids (and
// are registered for the asset endpoint) from the repository's and the
// release's position.
func (s *Server) object(repo string, n int, rel Release) map[string]any {
	assets := []any{}
	for i, f := range rel.Files {
		id := s.repoIDs[repo]*1_000_000 + (n+1)*1000 + i
		s.assets[id] = asset{repo, rel.Tag, f}
		u := f.URL
		if u == "" {
			u = fmt.Sprintf("%s/repos/%s/releases/assets/%d", s.api.URL, repo, id)
		}
		a := map[string]any{
			"url": u, "id": id, "name": f.Name, "label": "", "content_type": "application/octet-stream",
			"state": "uploaded", "size": len(f.Data), "download_count": 7,
			"browser_download_url": "https://github.com/" + repo + "/releases/download/" + rel.Tag + "/" + f.Name,
		}
		switch {
		case f.Digest != "":
			a["digest"] = f.Digest
		case !f.NoDigest:
			data := f.Data
			if f.WrongDigest {
				data = append([]byte("other "), data...)
			}
			a["digest"] = "sha256:" + SHA256(data)
		}
		assets = append(assets, a)
	}
	return map[string]any{
		"url": fmt.Sprintf("%s/repos/%s/releases/%d", s.api.URL, repo, n+1), "html_url": "https://github.com/" + repo + "/releases/tag/" + rel.Tag,
		"id": n + 1, "tag_name": rel.Tag, "target_commitish": "main", "name": rel.Tag, "draft": rel.Draft, "prerelease": rel.Prerelease,
		"created_at": "2025-05-01T10:00:00Z", "published_at": "2025-05-01T10:00:00Z", "assets": assets,
		"author": map[string]any{"login": "k8s-ci-robot"}, "body": "release notes",
	}
}

// assetEndpoint answers the asset's API url as GitHub does with Accept:
// application/octet-stream: a 302 to a signed URL on another host.
func (s *Server) assetEndpoint(w http.ResponseWriter, r *http.Request, id string) {
	n, _ := strconv.Atoi(id)
	a, ok := s.assets[n]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","status":"404"}`)
		return
	}
	switch {
	case a.file.Direct:
		w.Write(a.file.Data)
	case a.file.RedirectTo != "":
		http.Redirect(w, r, a.file.RedirectTo, http.StatusFound)
	default:
		http.Redirect(w, r, fmt.Sprintf("%s/%s/releases/download/%s/%s?sig=x", s.objects.URL, a.repo, a.rel, a.file.Name), http.StatusFound)
	}
}

// serveObjects serves /{owner}/{repo}/releases/download/{tag}/{name}.
func (s *Server) serveObjects(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objectAuth = append(s.objectAuth, r.Header.Get("Authorization"))
	if !allowedMethod(w, r) {
		return
	}
	if s.redirect != "" {
		http.Redirect(w, r, s.redirect+r.URL.Path, http.StatusFound)
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) == 6 && parts[2] == "releases" && parts[3] == "download" {
		if f := s.file(parts[0]+"/"+parts[1], parts[4], parts[5]); f != nil {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(f.Data)
			return
		}
	}
	http.NotFound(w, r)
}

// file is the asset name of release tag of repo, nil if there is none.
func (s *Server) file(repo, tag, name string) *File {
	for _, rel := range s.repos[repo] {
		if rel.Tag != tag {
			continue
		}
		for i := range rel.Files {
			if rel.Files[i].Name == name {
				return &rel.Files[i]
			}
		}
	}
	return nil
}

// Asset is the bytes of asset name of release tag of repo, nil if there
// is none.
func (s *Server) Asset(repo, tag, name string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.file(repo, tag, name); f != nil {
		return f.Data
	}
	return nil
}

// Replace swaps the bytes of asset name of release tag of repo (a moved
// tag, or a release a test reshapes); its digest follows.
func (s *Server) Replace(repo, tag, name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.file(repo, tag, name); f != nil {
		f.Data = data
	}
}
