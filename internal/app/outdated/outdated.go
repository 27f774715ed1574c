// Package outdated lists, for each pinned provider, the newer upstream
// releases on GitHub and the contract each one declares.
//
// It lists, for each provider of a tree, the pinned upstream
// version and the newer releases of the GitHub repository its pinned URLs
// point at, read from the GitHub REST API (GET /repos/{owner}/{repo}/releases,
// paginated by the Link header). Pre-releases are listed apart; drafts are
// ignored. For each newer stable release it reads the release's own
// metadata.yaml asset (asset.go: bounded, allowed hosts only, the API's
// digest checked) and judges the contract of its series against the tree's
// core provider by Cluster API's policy (operator.Contracts).
package outdated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/version"

	pversion "github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// DefaultAPIURL is GitHub's REST API.
const DefaultAPIURL = "https://api.github.com"

// TokenEnv names the environment variable the token is read from.
const TokenEnv = "GITHUB_TOKEN"

// Limits of one API conversation.
const (
	DefaultMaxPages = 10      // 1000 releases per repository
	maxPageBytes    = 8 << 20 // bytes of one page
	defaultTimeout  = 30 * time.Second
)

// Options configure a look-up.
type Options struct {
	// APIURL is the API root (GitHub Enterprise: https://HOST/api/v3);
	// "" means DefaultAPIURL. Only this host is asked, pagination
	// included.
	APIURL string
	// Token authenticates the requests (sent as a bearer token, never
	// logged); "" asks anonymously (60 requests an hour).
	Token string
	// Client does the requests; nil means a client with a timeout.
	Client *http.Client
	// MaxPages bounds the pages read per repository; 0 = DefaultMaxPages.
	MaxPages int
	// Logger receives one debug record per request; nil means
	// slog.Default().
	Logger *slog.Logger
	// AllowHosts are further hosts (HOST[:PORT]) release assets may be
	// read from: the hosts the API's asset URLs, or their redirects, name.
	// The API's own host is always allowed; GitHubAssetHosts too when
	// APIURL is DefaultAPIURL. No request goes to any other host.
	AllowHosts []string
	// MaxMetadata bounds the metadata.yaml assets read per provider, newest
	// release first; 0 = DefaultMaxMetadata.
	MaxMetadata int
}

// Release is one upstream release.
type Release struct {
	Tag         string `json:"tag"`
	Name        string `json:"name,omitempty"`
	PublishedAt string `json:"publishedAt,omitempty"`
	URL         string `json:"url,omitempty"`
	// Contract is the contract of the release's series, read from its own
	// metadata.yaml asset (stable releases only).
	Contract string `json:"contract,omitempty"`
	// Compatible says whether the tree's core serves Contract (for the
	// core provider: whether its release still serves every provider of
	// the tree); nil when it cannot be told (no core among the trees).
	Compatible *bool `json:"compatible,omitempty"`
	// ContractError says why Contract is unknown.
	ContractError string `json:"contractError,omitempty"`
	// Assets are the release's files as the API lists them.
	Assets []Asset `json:"-"`
	// Metadata is the release's metadata.yaml asset when Contract was read
	// from it.
	Metadata []byte `json:"-"`
}

// Provider is one provider's pinned version and what is newer upstream.
type Provider struct {
	Package  string `json:"package"`        // slash path relative to its root
	Root     string `json:"root"`           // the DIR argument it was found under
	Provider string `json:"provider"`       // Kind/name
	Version  string `json:"version"`        // pinned upstream version; "" when nothing pins one
	Release  string `json:"release"`        // spec.version
	Repo     string `json:"repo,omitempty"` // owner/name on GitHub
	// Newer are the stable releases newer than Version, newest first.
	Newer []Release `json:"newer"`
	// PreReleases are the newer pre-releases, newest first (listed apart;
	// they do not make a provider outdated).
	PreReleases []Release `json:"preReleases"`
	// Contract is the contract of the pinned release: its series in the
	// metadata of the ConfigMap the provider's selector picks.
	Contract string `json:"contract,omitempty"`
	// NewestCompatible is the newest stable release in Newer that is
	// Compatible; "" when none is.
	NewestCompatible string `json:"newestCompatible,omitempty"`
	// Error says why the provider could not be checked.
	Error string `json:"error,omitempty"`

	// Target is what a bump of the provider starts from (its pins).
	Target *bump.Target `json:"-"`
}

// Report is the result of a look-up.
type Report struct {
	Providers []Provider `json:"providers"`
	// Outdated counts providers with a newer stable release.
	Outdated int `json:"outdated"`
	// Failed counts providers that could not be checked.
	Failed int `json:"failed"`
	// Core is the core provider compatibility is judged against; absent
	// when the DIRs hold none.
	Core *Core `json:"core,omitempty"`
}

// RateLimitError is GitHub refusing because the rate limit is used up.
type RateLimitError struct {
	Limit int
	Reset time.Time
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("GitHub API rate limit of %d requests exhausted until %s; set %s to a token (5000 requests an hour) or wait", e.Limit, e.Reset.UTC().Format(time.RFC3339), TokenEnv)
}

var releaseURLRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/releases/download/`)
})

// RepoOf returns owner/name of a GitHub release download URL, "" for
// other URLs.
func RepoOf(u string) string {
	m := releaseURLRE().FindStringSubmatch(u)
	if m == nil {
		return ""
	}
	return m[1] + "/" + strings.TrimSuffix(m[2], ".git")
}

// LookUp loads each root and looks up the newer releases in every
// provider's repository.
func LookUp(ctx context.Context, roots []string, opts Options) (*Report, error) {
	quiet := slog.New(slog.DiscardHandler)
	api := &client{opts: opts, cache: map[string]result{}, metaCache: map[string]metaResult{}}
	if err := api.init(); err != nil {
		return nil, err
	}
	rep := &Report{Providers: []Provider{}}
	for _, root := range roots {
		t, err := load.Tree(ctx, root, load.Options{Logger: quiet})
		if err != nil {
			return nil, err
		}
		if len(t.Packages) == 0 {
			return nil, fmt.Errorf("%s holds no provider package; give the directory of a package or a tree of them", root)
		}
		ix := check.NewIndex(t)
		for _, pkg := range t.Packages {
			for _, p := range pkg.Providers {
				pr := Provider{Package: pkg.Path, Root: root, Provider: p.ID(), Release: check.Release(ix, pkg, p), Newer: []Release{}, PreReleases: []Release{},
					Contract: treeContract(ix, pkg, p)}
				if p.Selector == nil {
					// Downloaded at install time: nothing in the tree
					// pins a release, so there is nothing to compare and
					// nothing for `verifier check` to fix.
					pr.Error = fmt.Sprintf("the operator downloads its release at install time (%s), so nothing in the tree pins one to compare; `builder vendor %s --provider %s` makes it a pinned package", fetchedFrom(p), pkg.CommandPath(), p.ID())
					rep.add(pr)
					continue
				}
				lay, err := bump.TargetOf(t, pkg, p)
				if err != nil {
					pr.Version = pin.ReleaseVersion(pr.Release)
					pr.Error = strings.TrimPrefix(err.Error(), p.ID()+": ") // the row names the provider
					rep.add(pr)
					continue
				}
				pr.Version, pr.Target = lay.Version, lay
				for _, s := range lay.Sources {
					if r := RepoOf(s.URL); r != "" {
						pr.Repo = r
						break
					}
				}
				if pr.Repo == "" {
					pr.Error = "no source is a GitHub release download (https://github.com/OWNER/REPO/releases/download/...), so there is no release list to read"
					rep.add(pr)
					continue
				}
				rels, err := api.releases(ctx, pr.Repo)
				if err != nil {
					var rl *RateLimitError
					if errors.As(err, &rl) || ctx.Err() != nil {
						return nil, err
					}
					pr.Error = err.Error()
					rep.add(pr)
					continue
				}
				pr.Newer, pr.PreReleases = newer(pr.Version, rels)
				if err := api.readContracts(ctx, &pr, rels); err != nil {
					return nil, err
				}
				rep.add(pr)
			}
		}
	}
	rep.judge()
	return rep, nil
}

// fetchedFrom says where a provider with no selector is downloaded from.
func fetchedFrom(p *model.Provider) string {
	switch {
	case p.FetchOCI != "":
		return "spec.fetchConfig.oci " + p.FetchOCI
	case p.FetchURL != "":
		return "spec.fetchConfig.url " + p.FetchURL
	}
	if p.Clusterctl != nil {
		return "no spec.fetchConfig: " + p.Clusterctl.URL + " from Turtles' clusterctl config (" + p.Clusterctl.From + ")"
	}
	return "no spec.fetchConfig: clusterctl's built-in provider list"
}

func (r *Report) add(p Provider) {
	r.Providers = append(r.Providers, p)
	if p.Error != "" {
		r.Failed++
	} else if len(p.Newer) > 0 {
		r.Outdated++
	}
}

// ghRelease is the part of GitHub's release object read here.
type ghRelease struct {
	TagName     string  `json:"tag_name"`
	Name        string  `json:"name"`
	Draft       bool    `json:"draft"`
	Prerelease  bool    `json:"prerelease"`
	PublishedAt string  `json:"published_at"`
	HTMLURL     string  `json:"html_url"`
	Assets      []Asset `json:"assets"`
}

// newer splits the releases newer than pinned into stable and pre-releases,
// newest first. Tags that are not semantic versions are skipped.
func newer(pinned string, rels []ghRelease) (stable, pre []Release) {
	stable, pre = []Release{}, []Release{}
	cur, err := version.ParseSemantic(pinned)
	if err != nil {
		return stable, pre
	}
	type vr struct {
		v *version.Version
		r Release
	}
	var s, p []vr
	for _, r := range rels {
		if r.Draft {
			continue
		}
		v, err := version.ParseSemantic(r.TagName)
		if err != nil || !v.GreaterThan(cur) {
			continue
		}
		x := vr{v, Release{Tag: r.TagName, Name: r.Name, PublishedAt: r.PublishedAt, URL: r.HTMLURL, Assets: r.Assets}}
		if r.Prerelease || v.PreRelease() != "" {
			p = append(p, x)
		} else {
			s = append(s, x)
		}
	}
	for _, list := range []*[]vr{&s, &p} {
		sort.SliceStable(*list, func(i, j int) bool { return (*list)[i].v.GreaterThan((*list)[j].v) })
	}
	for _, x := range s {
		stable = append(stable, x.r)
	}
	for _, x := range p {
		pre = append(pre, x.r)
	}
	return stable, pre
}

type result struct {
	rels []ghRelease
	err  error
}

// client talks to the releases API.
type client struct {
	opts      Options
	base      *url.URL
	cache     map[string]result
	metaCache map[string]metaResult
}

// ParseAPIURL is the releases API root raw ("" means DefaultAPIURL)
// without its trailing slash: an http(s) URL with a host and no
// credentials (the token comes from TokenEnv).
func ParseAPIURL(raw string) (*url.URL, error) {
	if raw == "" {
		raw = DefaultAPIURL
	}
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("API URL %q: want an http(s) URL such as %s or https://github.example.com/api/v3", raw, DefaultAPIURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("the API URL must not carry credentials; set %s instead", TokenEnv)
	}
	return u, nil
}

func (c *client) init() error {
	u, err := ParseAPIURL(c.opts.APIURL)
	if err != nil {
		return err
	}
	c.base = u
	if c.opts.Client == nil {
		c.opts.Client = &http.Client{Timeout: defaultTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect would carry the token elsewhere
		}}
	}
	for _, h := range c.opts.AllowHosts {
		if err := ValidHost(h); err != nil {
			return err
		}
	}
	if c.opts.MaxMetadata <= 0 {
		c.opts.MaxMetadata = DefaultMaxMetadata
	}
	if c.opts.MaxPages <= 0 {
		c.opts.MaxPages = DefaultMaxPages
	}
	if c.opts.Logger == nil {
		c.opts.Logger = slog.Default()
	}
	return nil
}

// releases reads every page of a repository's releases.
func (c *client) releases(ctx context.Context, repo string) ([]ghRelease, error) {
	if r, ok := c.cache[repo]; ok {
		return r.rels, r.err
	}
	rels, err := c.fetchAll(ctx, repo)
	c.cache[repo] = result{rels, err}
	return rels, err
}

func (c *client) fetchAll(ctx context.Context, repo string) ([]ghRelease, error) {
	next := c.base.String() + "/repos/" + repo + "/releases?per_page=100"
	var all []ghRelease
	for page := 1; next != ""; page++ {
		if page > c.opts.MaxPages {
			c.opts.Logger.Warn("stopped reading releases", "repo", repo, "pages", c.opts.MaxPages)
			break
		}
		u, err := url.Parse(next)
		if err != nil || u.Scheme != c.base.Scheme || u.Host != c.base.Host {
			return nil, fmt.Errorf("%s: the API's next page %q is not on %s; refusing to follow it", repo, next, c.base.Host)
		}
		rels, link, err := c.page(ctx, repo, next)
		if err != nil {
			return nil, err
		}
		all = append(all, rels...)
		next = link
	}
	return all, nil
}

// rateLimited is the RateLimitError of a response refused because the
// rate limit is used up, nil for any other.
func rateLimited(resp *http.Response) error {
	if (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests) || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		return nil
	}
	limit, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Limit"))
	reset, _ := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
	return &RateLimitError{Limit: limit, Reset: time.Unix(reset, 0)}
}

var nextRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<([^>]+)>\s*;\s*rel="?next"?`) })

func (c *client) page(ctx context.Context, repo, u string) ([]ghRelease, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "pinseal/"+pversion.Version)
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.opts.Client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", repo, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("%s: reading the releases: %w", repo, err)
	}
	remaining := resp.Header.Get("X-RateLimit-Remaining")
	c.opts.Logger.Debug("releases", "repo", repo, "status", resp.StatusCode, "ratelimit_remaining", remaining)
	if err := rateLimited(resp); err != nil {
		return nil, "", err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, "", fmt.Errorf("%s: no such repository on %s (or the token cannot see it)", repo, c.base.Host)
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, "", fmt.Errorf("%s: %s refused the token (401); check %s", repo, c.base.Host, TokenEnv)
	case resp.StatusCode != http.StatusOK:
		var m struct {
			Message string `json:"message"`
		}
		json.Unmarshal(body, &m)
		return nil, "", fmt.Errorf("%s: GitHub API answered %s: %s", repo, resp.Status, m.Message)
	case len(body) > maxPageBytes:
		return nil, "", fmt.Errorf("%s: a releases page is larger than %d bytes", repo, maxPageBytes)
	}
	var rels []ghRelease
	if err := json.Unmarshal(body, &rels); err != nil {
		return nil, "", fmt.Errorf("%s: the releases list does not parse as GitHub's JSON: %w", repo, err)
	}
	next := ""
	if m := nextRE().FindStringSubmatch(resp.Header.Get("Link")); m != nil {
		next = m[1]
	}
	return rels, next, nil
}
