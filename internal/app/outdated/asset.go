package outdated

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pinseal/pinseal/internal/metadata"
	pversion "github.com/pinseal/pinseal/internal/version"
)

// GitHubAssetHosts are the hosts GitHub's own API sends release asset
// downloads to (the asset's browser_download_url, and the signed URL the
// asset endpoint redirects to). They are allowed by default only when the
// API is GitHub's own (DefaultAPIURL); any other API root allows only its
// own host plus Options.AllowHosts.
var GitHubAssetHosts = []string{"github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"}

// MetadataAsset is the release asset clusterctl reads a provider's
// release series from.
const MetadataAsset = "metadata.yaml"

// DefaultMaxMetadata bounds the metadata.yaml assets read per repository:
// the newest releases first, the rest left without a contract.
const DefaultMaxMetadata = 40

// ErrHostNotAllowed is wrapped when an asset URL, or a redirect of one,
// names a host that is neither the API's nor allowed (Options.AllowHosts).
// No request is sent to it.
var ErrHostNotAllowed = errors.New("host not allowed")

// Asset is one file of a release as the API lists it.
type Asset struct {
	Name string `json:"name"`
	// URL is the API's endpoint of the asset (its bytes with Accept:
	// application/octet-stream).
	URL string `json:"url,omitempty"`
	// DownloadURL is the browser download URL.
	DownloadURL string `json:"browser_download_url,omitempty"`
	Size        int64  `json:"size"`
	// Digest is "sha256:HEX" when the API gives one.
	Digest string `json:"digest,omitempty"`
}

// SHA256 is the hex SHA-256 of the asset's Digest, "" when the API gives
// none (or another algorithm).
func (a Asset) SHA256() string {
	h, ok := strings.CutPrefix(a.Digest, "sha256:")
	if !ok || len(h) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(h); err != nil {
		return ""
	}
	return strings.ToLower(h)
}

// ValidHost says what is wrong with an allowed-host entry (HOST[:PORT]).
func ValidHost(h string) error {
	u, err := url.Parse("//" + h)
	if err != nil || h == "" || u.Host != h || u.User != nil {
		return fmt.Errorf("allowed host %q: write HOST or HOST:PORT, without scheme, credentials or path", h)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("allowed host %q: port %q is not a port number", h, p)
		}
	}
	return nil
}

// allowedHosts is the API's host plus the asset hosts this client may
// ask.
func (c *client) allowedHosts() []string {
	hosts := []string{c.base.Host}
	if c.opts.APIURL == "" || strings.TrimSuffix(c.opts.APIURL, "/") == DefaultAPIURL {
		hosts = append(hosts, GitHubAssetHosts...)
	}
	return append(hosts, c.opts.AllowHosts...)
}

func (c *client) allowed(u *url.URL) bool {
	if u.Scheme != "https" && !(u.Scheme == "http" && c.base.Scheme == "http") {
		return false // plain http only when the API itself is plain (a stand-in)
	}
	return slices.Contains(c.allowedHosts(), u.Host)
}

// metadataOf reads the metadata.yaml asset of release rel of repo through
// the API: bounded by metadata.MaxBytes, sent only to allowed hosts (a
// redirect elsewhere is refused before it is followed), the token only to
// the API's own host, and checked against the asset's digest when the API
// gives one.
func (c *client) metadataOf(ctx context.Context, repo string, rel ghRelease) ([]byte, error) {
	key := repo + "@" + rel.TagName
	if r, ok := c.metaCache[key]; ok {
		return r.data, r.err
	}
	data, err := c.readMetadata(ctx, repo, rel)
	c.metaCache[key] = metaResult{data, err}
	return data, err
}

func (c *client) readMetadata(ctx context.Context, repo string, rel ghRelease) ([]byte, error) {
	i := slices.IndexFunc(rel.Assets, func(a Asset) bool { return a.Name == MetadataAsset })
	if i < 0 {
		return nil, fmt.Errorf("release %s has no %s asset (clusterctl and the operator need one too)", rel.TagName, MetadataAsset)
	}
	return c.readAsset(ctx, rel.TagName, rel.Assets[i], metadata.MaxBytes)
}

// DigestError is an asset whose bytes are not those the API's digest
// names; they are not used.
type DigestError struct{ Asset, Release, Want, Got string }

func (e *DigestError) Error() string {
	return fmt.Sprintf("the %s asset of %s does not match the digest the API gives (sha256:%s, received sha256:%s); not used", e.Asset, e.Release, e.Want, e.Got)
}

// assetTimeout bounds one asset download, whatever client does it.
const assetTimeout = 2 * time.Minute

// readAsset reads asset a of release tag: at most max bytes (the size the
// API lists is checked first), only from allowed hosts, checked against
// the API's digest when it gives one.
func (c *client) readAsset(ctx context.Context, tag string, a Asset, max int64) ([]byte, error) {
	if a.Size > max {
		return nil, fmt.Errorf("the %s asset of %s is %d bytes, more than the %d read", a.Name, tag, a.Size, max)
	}
	raw, accept := a.URL, "application/octet-stream"
	if raw == "" {
		raw, accept = a.DownloadURL, "*/*"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the %s asset of %s has no usable URL (%q)", a.Name, tag, raw)
	}
	if !c.allowed(u) {
		return nil, fmt.Errorf("the %s asset of %s is at %s: %w (allowed: %s); pass --allow-host %s if that host is trusted", a.Name, tag, u.Redacted(), ErrHostNotAllowed, strings.Join(c.allowedHosts(), ", "), u.Host)
	}
	ctx, cancel := context.WithTimeout(ctx, assetTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "pinseal/"+pversion.Version)
	if c.opts.Token != "" && u.Host == c.base.Host {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.assetClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the %s asset of %s: %w", a.Name, tag, err)
	}
	defer resp.Body.Close()
	c.opts.Logger.Debug("asset", "asset", a.Name, "release", tag, "status", resp.StatusCode, "host", resp.Request.URL.Host)
	if err := rateLimited(resp); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the %s asset of %s: %s answered %s", a.Name, tag, resp.Request.URL.Host, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading the %s asset of %s: %w", a.Name, tag, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("the %s asset of %s is more than %d bytes", a.Name, tag, max)
	}
	if want := a.SHA256(); want != "" {
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			return nil, &DigestError{Asset: a.Name, Release: tag, Want: want, Got: got}
		}
	}
	return data, nil
}

// Assets reads release assets the way LookUp reads metadata.yaml: through
// the API's asset endpoint (else the download URL), only from the hosts
// Options allow, the token only to the API's host, bounded in size and
// time, checked against the API's digest when it gives one.
type Assets struct{ c *client }

// NewAssets is an asset reader with opts (as LookUp takes them).
func NewAssets(opts Options) (*Assets, error) {
	c := &client{opts: opts}
	if err := c.init(); err != nil {
		return nil, err
	}
	return &Assets{c}, nil
}

// Read reads asset a of release tag, at most max bytes.
func (r *Assets) Read(ctx context.Context, tag string, a Asset, max int64) ([]byte, error) {
	return r.c.readAsset(ctx, tag, a, max)
}

// assetClient is the API client that follows at most five redirects, each
// only to an allowed host and never with the token unless it stays on
// the API's host.
func (c *client) assetClient() *http.Client {
	ac := *c.opts.Client
	ac.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		if !c.allowed(req.URL) {
			return fmt.Errorf("redirect to %s: %w (allowed: %s); pass --allow-host %s if that host is trusted", req.URL.Host, ErrHostNotAllowed, strings.Join(c.allowedHosts(), ", "), req.URL.Host)
		}
		if req.URL.Host != c.base.Host {
			req.Header.Del("Authorization")
		}
		return nil
	}
	return &ac
}

type metaResult struct {
	data []byte
	err  error
}

// Releases lists the stable releases of repo (owner/name), newest first,
// with their assets: drafts, pre-releases and tags that are not semantic
// versions are left out. The pages are read as LookUp reads them.
func (r *Assets) Releases(ctx context.Context, repo string) ([]Release, error) {
	if r.c.cache == nil {
		r.c.cache = map[string]result{}
	}
	rels, err := r.c.releases(ctx, repo)
	if err != nil {
		return nil, err
	}
	stable, _ := newer("v0.0.0-0", rels)
	return stable, nil
}

// Contract reads the contract of rel's release series from its own
// metadata.yaml asset (as LookUp does): the contract and the metadata's
// bytes.
func (r *Assets) Contract(ctx context.Context, rel Release) (string, []byte, error) {
	i := slices.IndexFunc(rel.Assets, func(a Asset) bool { return a.Name == MetadataAsset })
	if i < 0 {
		return "", nil, fmt.Errorf("release %s has no %s asset (clusterctl and the operator need one too)", rel.Tag, MetadataAsset)
	}
	raw, err := r.c.readAsset(ctx, rel.Tag, rel.Assets[i], metadata.MaxBytes)
	if err != nil {
		return "", nil, err
	}
	con, err := metadata.Contract(raw, rel.Tag)
	if err != nil {
		return "", nil, fmt.Errorf("the %s of %s: %w", MetadataAsset, rel.Tag, err)
	}
	return con, raw, nil
}
