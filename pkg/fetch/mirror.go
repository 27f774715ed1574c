package fetch

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/pinseal/pinseal/pkg/pin"
)

// MirrorsEnv is the environment setting that lists mirrors for every
// fetch: FROM=TO pairs separated by commas, spaces or newlines.
const MirrorsEnv = "PINSEAL_MIRRORS"

// Mirror rewrites the URL prefix From to To when fetching (an air-gapped
// site's copy of GitHub releases, an artifact proxy). Pins keep the
// canonical upstream URL; only the fetch goes to the mirror.
type Mirror struct {
	From string
	To   string
}

// ParseMirror reads one FROM=TO mirror setting.
func ParseMirror(s string) (Mirror, error) {
	from, to, ok := strings.Cut(strings.TrimSpace(s), "=")
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	if !ok || from == "" || to == "" {
		return Mirror{}, fmt.Errorf("mirror %q: want FROM=TO, e.g. https://github.com/=https://artifacts.example.com/github/", s)
	}
	for _, u := range []string{from, to} {
		if err := pin.CheckURL(u); err != nil {
			return Mirror{}, fmt.Errorf("mirror %q: %v; both sides must be http, https or file URL prefixes", s, err)
		}
	}
	return Mirror{From: from, To: to}, nil
}

// ParseMirrors reads a list of FROM=TO settings (flags, then the
// environment's PINSEAL_MIRRORS value env). The first mirror whose From
// prefixes a URL wins, so flags take precedence over the environment.
func ParseMirrors(flags []string, env string) ([]Mirror, error) {
	var out []Mirror
	items := append([]string(nil), flags...)
	items = append(items, strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })...)
	for _, s := range items {
		if strings.TrimSpace(s) == "" {
			continue
		}
		m, err := ParseMirror(s)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// MirrorsFromEnv reads PINSEAL_MIRRORS (nil when unset).
func MirrorsFromEnv() ([]Mirror, error) {
	ms, err := ParseMirrors(nil, os.Getenv(MirrorsEnv))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MirrorsEnv, err)
	}
	return ms, nil
}

// RewriteURL returns where the canonical URL u is fetched from: the first
// mirror whose From prefixes it, else u itself.
func RewriteURL(mirrors []Mirror, u string) string {
	for _, m := range mirrors {
		if strings.HasPrefix(u, m.From) {
			return m.To + strings.TrimPrefix(u, m.From)
		}
	}
	return u
}

// FetchUnverified downloads u (through the mirrors) with the Fetcher's
// limits and retries, without a pin and without the cache: for a checksums
// file a release publishes, or for `builder bump --trust-on-first-use`,
// whose caller must print the digest of what it got.
func (f *Fetcher) FetchUnverified(ctx context.Context, u string) ([]byte, error) {
	if err := pin.CheckURL(u); err != nil {
		return nil, fmt.Errorf("fetching: url %v; use an http, https or file URL", err)
	}
	if f.Offline && !strings.HasPrefix(RewriteURL(f.Mirrors, u), "file:") {
		return nil, fmt.Errorf("%s: %w, and an unpinned file is never served from the cache", u, ErrOffline)
	}
	return f.get(ctx, u)
}

// get reads the canonical URL u from wherever the mirrors send it.
func (f *Fetcher) get(ctx context.Context, u string) ([]byte, error) {
	from := RewriteURL(f.Mirrors, u)
	var data []byte
	var err error
	if strings.HasPrefix(from, "file:") {
		data, err = f.readFileURL(from)
	} else {
		data, err = f.download(ctx, from)
	}
	if err != nil && from != u {
		return nil, fmt.Errorf("%s (through mirror %s): %w", u, from, err)
	}
	return data, err
}
