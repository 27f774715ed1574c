// Package fetch downloads pinned upstream sources, verifying each against
// its SHA-256 pin.
//
// It downloads pinned upstream sources: through mirrors, into a
// content-addressed cache, checking each file's SHA-256 against its pin
// before handing it out, with bounded sizes and times and the retry policy
// (RetryPolicy) pinseal's HTTP clients share.
package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Defaults of a Fetcher's zero fields.
const (
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxBytes bounds one file, held in memory while it is hashed:
	// the largest components YAML of a Cluster API provider is a few
	// megabytes.
	DefaultMaxBytes = 64 << 20
)

// ErrTooLarge is wrapped when a download is over Fetcher.MaxBytes (as
// declared, or as received, after any gzip transfer encoding is undone).
var ErrTooLarge = errors.New("larger than the limit")

// ErrRedirectNotAllowed is wrapped when a download is redirected to a
// host Fetcher.RedirectHosts does not name: nothing is sent to it.
var ErrRedirectNotAllowed = errors.New("redirect to a host not allowed")

// GitHubDownloadHosts are the hosts GitHub redirects release downloads to.
var GitHubDownloadHosts = []string{"github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"}

// ErrDigestMismatch is returned when fetched bytes do not hash to the pin.
// Nothing is written (neither the cache nor the package) when it occurs.
type ErrDigestMismatch struct {
	URL  string
	Want string // the pinned SHA-256 (hex)
	Got  string // the SHA-256 (hex) of the bytes received
	Size int64  // bytes received
}

func (e *ErrDigestMismatch) Error() string {
	return fmt.Sprintf("%s: SHA-256 mismatch: pinned %s, received %s (%d bytes); "+
		"the upstream file changed or the pin is wrong: check the release and update sha256 only if the new bytes are trusted",
		e.URL, e.Want, e.Got, e.Size)
}

// Fetcher fetches pinned sources into a content-addressed cache and checks
// their SHA-256 before handing them out. The zero value fetches without a
// cache, without retries, using the defaults above.
type Fetcher struct {
	// CacheDir holds verified bytes at CacheDir/sha256/<hex>; "" disables
	// the cache. Use DefaultCacheDir() for the usual place.
	CacheDir string
	// Offline serves from the cache only (and reads file: URLs).
	Offline bool
	// Client does the HTTP requests; nil uses a client with the
	// environment's proxy settings that refuses https -> http redirects.
	Client *http.Client
	// Timeout bounds one attempt (request and body); 0 = DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a failed attempt (connection error, timeout,
	// cut-off body, HTTP 5xx, 408, 429: see Retryable) is repeated; 0 (or
	// negative) = none, so the zero Fetcher tries once. CLIs pass
	// DefaultRetries. Other 4xx answers and digest mismatches are never
	// retried.
	Retries int
	// Backoff is the wait before the first retry, doubled each time (capped
	// at MaxBackoff); 0 = DefaultBackoff. See RetryPolicy.
	Backoff time.Duration
	// MaxBytes bounds one file; 0 = DefaultMaxBytes (64 MiB).
	MaxBytes int64
	// RedirectHosts are the hosts (host or host:port) a download may be
	// redirected to besides the one it was sent to and
	// GitHubDownloadHosts; a redirect elsewhere is refused before
	// anything is sent to it (an upstream's answer must not send the
	// caller to an address nobody allowed, such as a cloud metadata
	// endpoint or a service inside the network). Only the default client
	// (Client nil) applies it.
	RedirectHosts []string
	// Progress receives a byte counter for downloads; nil = quiet.
	Progress io.Writer
	// BaseDir resolves relative file: URLs (file:upstream/x.yaml); "" = the
	// current directory.
	BaseDir string
	// Logger receives retries (debug) and cache trouble (warn); nil means
	// slog.Default().
	Logger *slog.Logger
	// Mirrors rewrite URL prefixes for fetching (see Mirror); pins and
	// errors keep the canonical URL.
	Mirrors []Mirror
}

func (f *Fetcher) log() *slog.Logger {
	if f.Logger != nil {
		return f.Logger
	}
	return slog.Default()
}

// DefaultCacheDir is $XDG_CACHE_HOME/pinseal, else ~/.cache/pinseal.
func DefaultCacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pinseal")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache", "pinseal")
	}
	return filepath.Join(os.TempDir(), "pinseal-cache")
}

// CachePath is where the bytes with SHA-256 hex digest live in the cache.
func (f *Fetcher) CachePath(digest string) string {
	return filepath.Join(f.CacheDir, "sha256", digest)
}

// Fetch returns the bytes of src after checking they hash to src.SHA256:
// from the cache when it holds them (re-hashed; a corrupt entry is removed
// and fetched again), else from src.URL, then stored in the cache. A
// mismatch is an *ErrDigestMismatch and writes nothing.
func (f *Fetcher) Fetch(ctx context.Context, src pin.Source) ([]byte, error) {
	want := src.SHA256
	if !pin.ValidSHA256(want) {
		return nil, fmt.Errorf("%s: pinned sha256 %q is not 64 lowercase hex digits; pin the source before fetching it", src.URL, want)
	}
	if err := pin.CheckURL(src.URL); err != nil {
		return nil, fmt.Errorf("fetching: url %v; use an http, https or file URL", err)
	}
	if f.CacheDir != "" {
		data, err := f.readCache(want)
		switch {
		case err == nil:
			return data, nil
		case errors.Is(err, errCorruptCache) && f.Offline:
			return nil, fmt.Errorf("%s: %w; it must be fetched again, and %w", src.URL, err, ErrOffline)
		case errors.Is(err, errCorruptCache):
			f.log().Warn("discarded a corrupt cache entry", "url", src.URL, "err", err)
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("reading the cache for %s: %w", src.URL, err)
		}
	}
	isFile := strings.HasPrefix(RewriteURL(f.Mirrors, src.URL), "file:")
	if f.Offline && !isFile {
		where := "no cache is configured"
		if f.CacheDir != "" {
			where = "it is not in the cache " + f.CacheDir
		}
		return nil, fmt.Errorf("%s (sha256 %s): %w and %s; fetch it once online to fill the cache", src.URL, want, ErrOffline, where)
	}
	data, err := f.get(ctx, src.URL)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, &ErrDigestMismatch{URL: src.URL, Want: want, Got: got, Size: int64(len(data))}
	}
	if f.CacheDir != "" {
		if err := f.writeCache(want, data); err != nil {
			f.log().Warn("could not store a verified download in the cache", "url", src.URL, "err", err)
		}
	}
	return data, nil
}

var errCorruptCache = errors.New("cache entry does not match its digest")

// ErrOffline is wrapped by the errors of a Fetcher with Offline set when
// a file would have to be downloaded: it is not in the cache, its cache
// entry is corrupt, or it is not pinned (never served from the cache).
var ErrOffline = errors.New("offline: nothing is downloaded")

func (f *Fetcher) readCache(digest string) ([]byte, error) {
	p := f.CachePath(digest)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != digest {
		if rmErr := os.Remove(p); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			f.log().Warn("could not remove a corrupt cache entry", "path", p, "err", rmErr)
		}
		return nil, fmt.Errorf("%s: %w (removed)", p, errCorruptCache)
	}
	return data, nil
}

// writeCache stores verified bytes atomically: temp file, sync, rename.
func (f *Fetcher) writeCache(digest string, data []byte) error {
	dir := filepath.Join(f.CacheDir, "sha256")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+digest[:12]+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename this fails harmlessly
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.CachePath(digest))
}

func (f *Fetcher) maxBytes() int64 {
	if f.MaxBytes > 0 {
		return f.MaxBytes
	}
	return DefaultMaxBytes
}

func tooLarge(u string, limit int64) error { return &tooLargeError{u, limit} }

type tooLargeError struct {
	url   string
	limit int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than the %s limit (Fetcher.MaxBytes)", e.url, formatBytes(e.limit))
}

func (e *tooLargeError) Is(target error) bool { return target == ErrTooLarge }

// readFileURL reads file:///abs, file:/abs or file:rel (against BaseDir).
func (f *Fetcher) readFileURL(raw string) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	p := u.Path
	if u.Opaque != "" {
		if p, err = url.PathUnescape(u.Opaque); err != nil {
			return nil, fmt.Errorf("%s: %w", raw, err)
		}
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(f.BaseDir, p)
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	defer fh.Close()
	limit := f.maxBytes()
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(raw, limit)
	}
	return data, nil
}

// attemptError is a failed attempt: err is what the caller sees, resp
// (status and headers; its body is closed) or cause what the retry policy
// judges.
type attemptError struct {
	err   error
	resp  *http.Response
	cause error
}

func (a *attemptError) Error() string { return a.err.Error() }
func (a *attemptError) Unwrap() error { return a.err }

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	allowed := slices.Concat(GitHubDownloadHosts, f.RedirectHosts)
	return &http.Client{Transport: http.DefaultTransport, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if err := checkRedirect(req, via); err != nil {
			return err
		}
		return redirectAllowed(req, via, allowed)
	}}
}

// redirectAllowed refuses a redirect of a request first sent to
// via[0]'s host to a host allowed does not name.
func redirectAllowed(req *http.Request, via []*http.Request, allowed []string) error {
	host := strings.ToLower(req.URL.Host)
	if host == strings.ToLower(via[0].URL.Host) || slices.Contains(allowed, host) || slices.Contains(allowed, strings.ToLower(req.URL.Hostname())) {
		return nil
	}
	return fmt.Errorf("%w: %s is not among the allowed hosts (%s and %s), so nothing was sent to it; if it is the release's download storage, allow it with --allow-host %s",
		ErrRedirectNotAllowed, host, strings.ToLower(via[0].URL.Host), strings.Join(allowed, ", "), host)
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("refusing redirect from https to %s", req.URL.Redacted())
	}
	return nil
}

// download gets u, repeating failed attempts as RetryPolicy says. The
// loop is here rather than in a retry.Transport because an attempt covers
// reading the body too (a cut-off or stalled body is retried).
func (f *Fetcher) download(ctx context.Context, u string) ([]byte, error) {
	policy := RetryPolicy(f.Retries, f.Backoff)
	for attempt := 0; ; attempt++ {
		data, err := f.attempt(ctx, u)
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return nil, fmt.Errorf("%s: %w (last: %v)", u, ctx.Err(), err)
		}
		var a *attemptError
		if !errors.As(err, &a) || ctx.Err() != nil {
			return nil, err
		}
		if ok, _ := Retryable(a.resp, a.cause); !ok {
			return nil, a.err
		}
		wait, _ := policy.Retry(attempt, a.resp, a.cause)
		if wait < 0 {
			// a.err names the URL already.
			return nil, fmt.Errorf("%w (%d attempts failed); check the URL and the network, or work offline with a filled cache", a.err, attempt+1)
		}
		f.log().Debug("download failed, retrying", "url", u, "attempt", attempt+1, "wait", wait, "err", a.err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s: %w (after: %v)", u, ctx.Err(), a.err)
		case <-t.C:
		}
	}
}

func (f *Fetcher) attempt(ctx context.Context, u string) ([]byte, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	req.Header.Set("User-Agent", "pinseal/"+version.Version)
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, f.classify(ctx, actx, u, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		err := fmt.Errorf("%s: HTTP %s", u, resp.Status)
		if resp.StatusCode == http.StatusNotFound {
			err = fmt.Errorf("%w; check the release exists and the URL is right", err)
		}
		return nil, &attemptError{err: err, resp: resp}
	}
	limit := f.maxBytes()
	if resp.ContentLength > limit {
		return nil, tooLarge(u, limit)
	}
	var body io.Reader = io.LimitReader(resp.Body, limit+1)
	var pr *progressReader
	if f.Progress != nil {
		pr = newProgress(f.Progress, u, resp.ContentLength)
		body = io.TeeReader(body, pr)
	}
	data, err := readAllSized(body, resp.ContentLength, limit)
	if pr != nil {
		pr.done(err == nil)
	}
	if err != nil {
		return nil, f.classify(ctx, actx, u, timeout, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(u, limit)
	}
	return data, nil
}

// classify turns a transport error into an attemptError for the retry
// policy to judge, unless the caller gave up.
func (f *Fetcher) classify(ctx, actx context.Context, u string, timeout time.Duration, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", u, ctx.Err())
	}
	if actx.Err() != nil {
		return &attemptError{err: fmt.Errorf("%s: timed out after %s", u, timeout), cause: actx.Err()}
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	return &attemptError{err: fmt.Errorf("%s: %w", u, inner), cause: inner}
}

func readAllSized(r io.Reader, size, limit int64) ([]byte, error) {
	if size > 0 && size <= limit {
		buf := make([]byte, 0, size+1)
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				return buf, nil
			}
			if err != nil {
				return buf, err
			}
		}
	}
	return io.ReadAll(r)
}

// progressReader prints "\r<name> 1.2 MiB / 3.4 MiB (35%)" at most every
// 100ms, then a final line.
type progressReader struct {
	w     io.Writer
	name  string
	total int64
	n     int64
	last  time.Time
}

func newProgress(w io.Writer, u string, total int64) *progressReader {
	name := u
	if pu, err := url.Parse(u); err == nil && pu.Path != "" {
		name = pu.Host + "/…/" + filepath.Base(pu.Path)
	}
	p := &progressReader{w: w, name: name, total: total}
	p.print()
	return p
}

func (p *progressReader) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if time.Since(p.last) >= 100*time.Millisecond {
		p.print()
	}
	return len(b), nil
}

func (p *progressReader) print() {
	p.last = time.Now()
	if p.total > 0 {
		pct := p.n * 100 / p.total
		fmt.Fprintf(p.w, "\rfetching %s %s / %s (%d%%)", p.name, formatBytes(p.n), formatBytes(p.total), pct)
		return
	}
	fmt.Fprintf(p.w, "\rfetching %s %s", p.name, formatBytes(p.n))
}

func (p *progressReader) done(ok bool) {
	p.print()
	if ok {
		fmt.Fprintln(p.w, " done")
	} else {
		fmt.Fprintln(p.w, " failed")
	}
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}
