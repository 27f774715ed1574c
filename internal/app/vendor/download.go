package vendor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
)

// ErrHostNotAllowed is wrapped when a request would go to a host that is
// not allowed; it is refused before anything is sent. It is the releases
// API client's, so one errors.Is finds a refused host of either.
var ErrHostNotAllowed = outdated.ErrHostNotAllowed

// guard is an http.RoundTripper that sends requests to allowed hosts only
// (canonical HOST[:PORT], artifact.CanonicalHost), redirects included.
type guard struct {
	allowed []string
	next    http.RoundTripper
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	host := artifact.CanonicalHost(req.URL.Scheme, req.URL.Host)
	if !slices.Contains(g.allowed, host) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%s: %w: %s is not among the allowed hosts (%s), so nothing was sent to it; if it is the release host, its mirror or its download storage, allow it with --allow-host %s",
			req.URL.Redacted(), ErrHostNotAllowed, host, strings.Join(g.allowed, ", "), host)
	}
	return g.next.RoundTrip(req)
}

// downloader fetches a release's files and their digests.
type downloader struct {
	api     *url.URL
	token   string
	apiHost string
	client  *http.Client // API requests: no redirects (the token stays on the API host)
	fetcher *fetch.Fetcher
	opts    Options
	// checksums is the URL of the checksums file a digest was read from.
	checksums string
	// pinned are digests pin.yaml gives, by URL (FromPin).
	pinned map[string]string
}

func newDownloader(opts Options) (*downloader, error) {
	api, err := outdated.ParseAPIURL(opts.APIURL)
	if err != nil {
		return nil, err
	}
	g := &guard{next: http.DefaultTransport}
	for _, h := range slices.Concat(DefaultHosts, []string{api.Host}, opts.AllowHosts) {
		if h = artifact.CanonicalHost("", strings.TrimSpace(h)); h != "" && !slices.Contains(g.allowed, h) {
			g.allowed = append(g.allowed, h)
		}
	}
	d := &downloader{api: api, token: opts.Token, apiHost: artifact.CanonicalHost(api.Scheme, api.Host), opts: opts}
	d.client = &http.Client{Transport: g, Timeout: opts.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	if d.client.Timeout == 0 {
		d.client.Timeout = fetch.DefaultTimeout
	}
	d.fetcher = &fetch.Fetcher{
		Client: &http.Client{Transport: g, CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("refusing redirect from https to %s", req.URL.Redacted())
			}
			return nil
		}},
		Timeout: opts.Timeout, Retries: opts.Retries, MaxBytes: opts.MaxBytes,
		Mirrors: opts.Mirrors, Logger: opts.Logger,
	}
	return d, nil
}

// file is one downloaded file of the release.
type file struct {
	digest bump.Digest
	name   string // the file name (components or metadata.yaml)
	data   []byte
}

// checksumNames are the asset names releases publish checksums under
// (`sha256sum` format).
var checksumNames = []string{"checksums.txt", "sha256sums.txt", "SHA256SUMS", "checksums.sha256"}

// download fetches urls (canonical GitHub release URLs of one release)
// after finding the SHA-256 of each: the flag, else the release's
// published checksums or the asset digest the API gives (which must
// agree), else, with TrustOnFirstUse, the download's own. Every file is
// checked against its digest before it is returned.
func (d *downloader) download(ctx context.Context, urls []string) ([]file, error) {
	files := make([]file, len(urls))
	need := false
	for i, u := range urls {
		files[i] = file{name: path.Base(u), digest: bump.Digest{URL: u}}
		if s := d.pinned[u]; s != "" {
			files[i].digest.SHA256, files[i].digest.From = s, FromPin
		} else if s := d.flag(u); s != "" {
			files[i].digest.SHA256, files[i].digest.From = s, bump.FromFlag
		} else {
			need = true
		}
	}
	if need {
		if err := d.published(ctx, urls[0], files); err != nil {
			if !d.opts.TrustOnFirstUse {
				return nil, err
			}
			d.opts.Logger.Warn("no published digest; trusting the download", "err", err)
		}
	}
	for i := range files {
		f := &files[i]
		var err error
		switch {
		case f.digest.SHA256 != "":
			f.data, err = d.fetcher.Fetch(ctx, pin.Source{URL: f.digest.URL, SHA256: f.digest.SHA256})
		case d.opts.TrustOnFirstUse:
			f.data, err = d.fetcher.FetchUnverified(ctx, f.digest.URL)
			f.digest.SHA256, f.digest.From = sha(f.data), bump.FromTOFU
		default:
			err = fmt.Errorf("%s: the release publishes no SHA-256 of it (no checksums file lists it, the API gives no asset digest): %w; pass --sha256 %s=<hex>, or --trust-on-first-use", f.digest.URL, bump.ErrNoDigest, f.name)
		}
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// flag is the --sha256 of u, by URL or by file name.
func (d *downloader) flag(u string) string {
	if s := d.opts.SHA256[u]; s != "" {
		return strings.ToLower(s)
	}
	return strings.ToLower(d.opts.SHA256[path.Base(u)])
}

// published fills the digests files lack from the release: its
// checksums file and the API's asset digests. Where both say, they must
// agree.
func (d *downloader) published(ctx context.Context, anyURL string, files []file) error {
	owner, repo, tag, ok := releaseOf(anyURL)
	if !ok {
		return fmt.Errorf("%s is not a GitHub release download URL", anyURL)
	}
	assets, err := d.assets(ctx, owner, repo, tag)
	if err != nil {
		return err
	}
	sums := map[string]string{}
	checksumsAt := ""
	for _, a := range assets {
		if slices.Contains(checksumNames, a.Name) {
			cu := "https://github.com/" + owner + "/" + repo + "/releases/download/" + tag + "/" + a.Name
			b, err := d.fetcher.FetchUnverified(ctx, cu)
			if err != nil {
				return fmt.Errorf("the release's checksums file: %w", err)
			}
			if sums, err = bump.ParseChecksums(b); err != nil {
				return fmt.Errorf("%s: %w", cu, err)
			}
			checksumsAt = cu
			break
		}
	}
	for i := range files {
		f := &files[i]
		if f.digest.SHA256 != "" {
			continue
		}
		var fromAPI string
		for _, a := range assets {
			if a.Name == f.name {
				fromAPI = a.SHA256()
			}
		}
		fromSums := sums[f.name]
		switch {
		case fromSums != "" && fromAPI != "" && fromSums != fromAPI:
			return fmt.Errorf("%s: the release's checksums file says sha256 %s but the API gives the asset digest %s: the release changed after it was published; check it and pass --sha256 %s=<hex>", f.digest.URL, fromSums, fromAPI, f.name)
		case fromSums != "":
			f.digest.SHA256, f.digest.From = fromSums, bump.FromChecksums
			d.checksums = checksumsAt
		case fromAPI != "":
			f.digest.SHA256, f.digest.From = fromAPI, FromAssetDigest
		}
	}
	return nil
}

// releaseOf takes https://github.com/OWNER/REPO/releases/download/TAG/FILE apart.
func releaseOf(u string) (owner, repo, tag string, ok bool) {
	rest, ok := strings.CutPrefix(u, "https://github.com/")
	parts := strings.Split(rest, "/")
	if !ok || len(parts) != 6 || parts[2] != "releases" || parts[3] != "download" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[4], true
}

// maxAPIBytes bounds one API answer.
const maxAPIBytes = 8 << 20

// assets reads the release's assets from the releases API
// (GET /repos/OWNER/REPO/releases/tags/TAG).
func (d *downloader) assets(ctx context.Context, owner, repo, tag string) ([]outdated.Asset, error) {
	u := d.api.String() + "/repos/" + owner + "/" + repo + "/releases/tags/" + url.PathEscape(tag)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", "pinseal/"+version.Version)
	if d.token != "" && artifact.CanonicalHost(req.URL.Scheme, req.URL.Host) == d.apiHost {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("release %s of %s/%s: %w", tag, owner, repo, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("release %s of %s/%s: reading the API's answer: %w", tag, owner, repo, err)
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%s/%s has no release %s on %s (or the token cannot see it)", owner, repo, tag, d.api.Host)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("release %s of %s/%s: the API answered %s (set %s for private repositories and rate limits)", tag, owner, repo, resp.Status, TokenEnv)
	case len(body) > maxAPIBytes:
		return nil, fmt.Errorf("release %s of %s/%s: the API's answer (%s) is larger than %d bytes, far more than a release's JSON; check that --api-url is GitHub's API, or give each file's digest with --sha256",
			tag, owner, repo, u, maxAPIBytes)
	}
	var rel struct {
		Assets []outdated.Asset `json:"assets"`
	}
	if err := json.Unmarshal(body, &rel); err != nil {
		return nil, fmt.Errorf("release %s of %s/%s: the API's answer is not GitHub's release JSON: %w", tag, owner, repo, err)
	}
	return rel.Assets, nil
}
