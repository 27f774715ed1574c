package outdated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

func rel(tag string, pre, draft bool) releaseapi.Release {
	return releaseapi.Release{Tag: tag, Prerelease: pre, Draft: draft}
}

// capiReleases: 250 releases, newest first; the pinned v1.10.1 and the
// releases newer than it are spread so that one is only on the last page.
func capiReleases() []releaseapi.Release {
	out := []releaseapi.Release{rel("v1.11.0-rc.1", true, false), rel("v1.11.0", false, false), rel("v1.12.0", false, true), rel("nightly", false, false)}
	for i := 0; i < 244; i++ {
		out = append(out, rel(fmt.Sprintf("v0.%d.%d", i/10, i%10), false, false))
	}
	out = append(out, rel("v1.10.1", false, false), rel("v1.10.2", false, false)) // page 3
	return out
}

func TestOutdated(t *testing.T) {
	g := releaseapi.New(t)
	g.Token = "s3cret"
	g.Add("kubernetes-sigs/cluster-api", capiReleases()...)
	g.Add("ionos-cloud/cluster-api-provider-proxmox", rel("v0.7.7", false, false), rel("v0.7.6", false, false), rel("v0.8.0-beta.1", false, false))
	// kubevirt and ipam: not on the stand-in (404).
	rep, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: g.URL(), Token: g.Token})
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
	auth := g.Auth()
	for i, r := range g.Requests() {
		if strings.HasPrefix(r, "/repos/kubernetes-sigs/cluster-api/releases?") {
			pages++
		}
		if auth[i] != "Bearer s3cret" {
			t.Errorf("request %s: Authorization %q", r, auth[i])
		}
	}
	if pages != 3 {
		t.Errorf("read %d pages of cluster-api releases, want 3: %v", pages, g.Requests())
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
	g := releaseapi.New(t)
	g.Limit = 1 // anonymous and nearly used up: the second page is refused
	g.Add("kubernetes-sigs/cluster-api", capiReleases()...)
	_, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: g.URL()})
	var rl *RateLimitError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, want a rate limit error", err)
	}
	if rl.Limit != 1 || rl.Reset.Year() != 2030 || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Errorf("rate limit error: %v", err)
	}
	for _, a := range g.Auth() {
		if a != "" {
			t.Errorf("anonymous request carried Authorization %q", a)
		}
	}
}

func TestOutdatedRefusesForeignNextPage(t *testing.T) {
	g := releaseapi.New(t)
	g.Limit = 100
	g.Add("kubernetes-sigs/cluster-api", capiReleases()...)
	g.NextHost = "http://127.0.0.2:1"
	g.Token = "t"
	rep, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: g.URL(), Token: "t"})
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
