package outdated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
)

// githubStandIn answers GET /repos/{owner}/{repo}/releases in the shape
// GitHub documents: a JSON array of release objects, per_page/page
// paging with a Link header (next, last), and the X-RateLimit-* headers.
type githubStandIn struct {
	srv      *httptest.Server
	mu       sync.Mutex
	repos    map[string][]map[string]any // newest first, as GitHub lists them
	token    string
	limit    int
	used     int
	requests []string
	auth     []string
	nextHost string // when set, the next link points there
}

func newStandIn(t *testing.T) *githubStandIn {
	g := &githubStandIn{repos: map[string][]map[string]any{}, limit: 60}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	if !strings.HasPrefix(g.srv.URL, "http://127.0.0.1:") {
		t.Fatalf("stand-in not on 127.0.0.1: %s", g.srv.URL)
	}
	return g
}

func rel(tag string, pre, draft bool) map[string]any {
	return map[string]any{
		"url": "https://api.github.com/repos/x/y/releases/1", "html_url": "https://github.com/x/y/releases/tag/" + tag,
		"id": 1, "tag_name": tag, "target_commitish": "main", "name": tag, "draft": draft, "prerelease": pre,
		"created_at": "2025-05-01T10:00:00Z", "published_at": "2025-05-01T10:00:00Z", "assets": []any{},
		"author": map[string]any{"login": "k8s-ci-robot"}, "body": "release notes",
	}
}

func (g *githubStandIn) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.requests = append(g.requests, r.URL.RequestURI())
	g.auth = append(g.auth, r.Header.Get("Authorization"))
	if a := r.Header.Get("Authorization"); a != "" && a != "Bearer "+g.token {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`)
		return
	}
	reset := strconv.FormatInt(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 10)
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(g.limit))
	h.Set("X-RateLimit-Reset", reset)
	h.Set("X-RateLimit-Resource", "core")
	if g.used >= g.limit {
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", strconv.Itoa(g.used))
		h.Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit.)","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`)
		return
	}
	g.used++
	h.Set("X-RateLimit-Remaining", strconv.Itoa(g.limit-g.used))
	h.Set("X-RateLimit-Used", strconv.Itoa(g.used))
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[0] != "repos" || parts[3] != "releases" {
		http.NotFound(w, r)
		return
	}
	rels, ok := g.repos[parts[1]+"/"+parts[2]]
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
		if g.nextHost != "" {
			host = g.nextHost
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
		h.Set("Link", strings.Join(links, ", "))
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(rels[from:to])
}

// capiReleases: 250 releases, newest first; the pinned v1.10.1 and the
// releases newer than it are spread so that one is only on the last page.
func capiReleases() []map[string]any {
	out := []map[string]any{rel("v1.11.0-rc.1", true, false), rel("v1.11.0", false, false), rel("v1.12.0", false, true), rel("nightly", false, false)}
	for i := 0; i < 244; i++ {
		out = append(out, rel(fmt.Sprintf("v0.%d.%d", i/10, i%10), false, false))
	}
	out = append(out, rel("v1.10.1", false, false), rel("v1.10.2", false, false)) // page 3
	return out
}

func TestOutdated(t *testing.T) {
	g := newStandIn(t)
	g.token = "s3cret"
	g.limit = 5000
	g.repos["kubernetes-sigs/cluster-api"] = capiReleases()
	g.repos["ionos-cloud/cluster-api-provider-proxmox"] = []map[string]any{rel("v0.7.7", false, false), rel("v0.7.6", false, false), rel("v0.8.0-beta.1", false, false)}
	// kubevirt and ipam: not on the stand-in (404).
	rep, err := Check(context.Background(), []string{fixture.Root()}, Options{APIURL: g.srv.URL, Token: g.token})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Provider{}
	for _, p := range rep.Providers {
		by[p.Provider] = p
	}
	core := by["CoreProvider/cluster-api"]
	if got := tags(core.Newer); got != "v1.11.0 v1.10.2" {
		t.Errorf("core newer = %q (pinned %s, err %s)", got, core.Version, core.Error)
	}
	if got := tags(core.PreReleases); got != "v1.11.0-rc.1" {
		t.Errorf("core pre-releases = %q", got)
	}
	px := by["InfrastructureProvider/proxmox"]
	if len(px.Newer) != 0 || tags(px.PreReleases) != "v0.8.0-beta.1" || px.Error != "" {
		t.Errorf("proxmox: %+v", px)
	}
	if kv := by["InfrastructureProvider/kubevirt"]; !strings.Contains(kv.Error, "no such repository") {
		t.Errorf("kubevirt: %+v", kv)
	}
	if rep.Outdated != 1 {
		t.Errorf("outdated = %d, want 1 (the core)", rep.Outdated)
	}
	// Every page of the core's list was read, once (two providers share
	// the repository), with the token.
	pages := 0
	for i, r := range g.requests {
		if strings.HasPrefix(r, "/repos/kubernetes-sigs/cluster-api/releases") {
			pages++
		}
		if g.auth[i] != "Bearer s3cret" {
			t.Errorf("request %s: Authorization %q", r, g.auth[i])
		}
	}
	if pages != 3 {
		t.Errorf("read %d pages of cluster-api releases, want 3: %v", pages, g.requests)
	}
}

func tags(rs []Release) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Tag)
	}
	return strings.Join(s, " ")
}

func TestOutdatedRateLimit(t *testing.T) {
	g := newStandIn(t)
	g.limit = 1 // anonymous and nearly used up: the second page is refused
	g.repos["kubernetes-sigs/cluster-api"] = capiReleases()
	_, err := Check(context.Background(), []string{fixture.Root()}, Options{APIURL: g.srv.URL})
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want a rate limit error", err)
	}
	if rl.Limit != 1 || rl.Reset.Year() != 2030 || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Errorf("rate limit error: %v", err)
	}
	for _, a := range g.auth {
		if a != "" {
			t.Errorf("anonymous request carried Authorization %q", a)
		}
	}
}

func TestOutdatedRefusesForeignNextPage(t *testing.T) {
	g := newStandIn(t)
	g.limit = 100
	g.repos["kubernetes-sigs/cluster-api"] = capiReleases()
	g.nextHost = "http://127.0.0.2:1"
	g.token = "t"
	rep, err := Check(context.Background(), []string{fixture.Root()}, Options{APIURL: g.srv.URL, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Providers {
		if p.Provider == "CoreProvider/cluster-api" && !strings.Contains(p.Error, "refusing to follow") {
			t.Errorf("core: %+v", p)
		}
	}
}

func TestRepoOf(t *testing.T) {
	for u, want := range map[string]string{
		"https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml": "kubernetes-sigs/cluster-api",
		"https://github.com/a/b.git/releases/download/v1/x":                                             "a/b",
		"http://github.com/a/b/releases/download/v1/x":                                                  "",
		"https://example.com/a/b/releases/download/v1/x":                                                "",
		"https://github.com/a/b/archive/v1.tar.gz":                                                      "",
	} {
		if got := RepoOf(u); got != want {
			t.Errorf("RepoOf(%s) = %q, want %q", u, got, want)
		}
	}
}

// FuzzReleases: whatever JSON a releases page holds, the split is sound:
// everything listed is newer than the pin, stable and pre-releases apart,
// newest first, drafts never.
func FuzzReleases(f *testing.F) {
	f.Add("v1.10.1", `[{"tag_name":"v1.11.0"},{"tag_name":"v1.11.0-rc.1","prerelease":true},{"tag_name":"v1.12.0","draft":true},{"tag_name":"nightly"}]`)
	f.Add("v0.1.9", `[{"tag_name":"0.1.10"},{"tag_name":"v0.1.9"}]`)
	f.Fuzz(func(t *testing.T, pinned, page string) {
		var rels []ghRelease
		if json.Unmarshal([]byte(page), &rels) != nil {
			return
		}
		stable, pre := newer(pinned, rels)
		drafts := map[string]bool{}
		for _, r := range rels {
			if r.Draft {
				drafts[r.TagName] = true
			}
		}
		for _, list := range [][]Release{stable, pre} {
			for _, r := range list {
				if drafts[r.Tag] && !slicesHasNonDraft(rels, r.Tag) {
					t.Fatalf("draft %s listed", r.Tag)
				}
			}
		}
		cur, err := version.ParseSemantic(pinned)
		for _, list := range [][]Release{stable, pre} {
			for i, r := range list {
				v, verr := version.ParseSemantic(r.Tag)
				if err != nil || verr != nil || !v.GreaterThan(cur) {
					t.Fatalf("%s listed, pinned %s", r.Tag, pinned)
				}
				if i > 0 && !version.MustParseSemantic(list[i-1].Tag).AtLeast(v) {
					t.Fatalf("not newest first: %s before %s", list[i-1].Tag, r.Tag)
				}
			}
		}
		for _, r := range stable {
			if version.MustParseSemantic(r.Tag).PreRelease() != "" {
				t.Fatalf("pre-release %s listed as stable", r.Tag)
			}
		}
	})
}

func slicesHasNonDraft(rels []ghRelease, tag string) bool {
	for _, r := range rels {
		if r.TagName == tag && !r.Draft {
			return true
		}
	}
	return false
}
