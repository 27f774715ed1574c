package bump

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/pkg/pin"
)

// pinNewSources moves each source URL to the new version and pins it with
// the digest the caller gave; a URL that does not change keeps its pin.
// A digest given for no source is an error.
func (b *bump) pinNewSources() error {
	lay, opts := b.lay, b.opts
	b.srcs = make([]pin.Source, len(lay.Sources))
	used := map[string]bool{}
	for i, s := range lay.Sources {
		ns := s
		ns.URL = replaceTokens(s.URL, lay.Version, opts.To)
		if ns.URL == s.URL && s.SHA256 != "" {
			if h, ok := opts.SHA256[ns.URL]; ok {
				if h != s.SHA256 {
					return fmt.Errorf("bump %s: SHA-256 %s=%s given, but that URL does not change with the version and stays pinned to %s; drop it, or re-pin it with `builder build` after checking the upstream file", b.dir, ns.URL, h, s.SHA256)
				}
				used[ns.URL] = true
			}
			b.res.Digests = append(b.res.Digests, Digest{URL: ns.URL, SHA256: s.SHA256, From: FromUnchanged})
			b.srcs[i] = ns
			continue
		}
		ns.SHA256 = ""
		if h, ok := opts.SHA256[ns.URL]; ok {
			ns.SHA256, used[ns.URL] = h, true
			b.res.Digests = append(b.res.Digests, Digest{URL: ns.URL, SHA256: h, From: FromFlag})
		}
		b.srcs[i] = ns
	}
	for u := range opts.SHA256 {
		if !used[u] {
			var urls []string
			for _, s := range b.srcs {
				urls = append(urls, s.URL)
			}
			return fmt.Errorf("bump %s: a SHA-256 is given for %s, which is not a source of %s %s; its sources are: %s", b.dir, u, b.prov.ID(), opts.To, strings.Join(urls, ", "))
		}
	}
	return nil
}

// readChecksums pins the sources still without a digest from the new
// release's checksums file, when the pin names one; a digest the caller
// gave that the file contradicts is an error.
func (b *bump) readChecksums(ctx context.Context) error {
	b.fetcher = *b.opts.Fetcher
	b.fetcher.BaseDir = b.real
	b.fetcher.Logger = b.quiet
	b.sums = replaceTokens(b.lay.Checksums, b.lay.Version, b.opts.To)
	if b.sums == "" {
		return nil
	}
	data, err := b.fetcher.FetchUnverified(ctx, b.sums)
	if err != nil {
		return fmt.Errorf("bump %s: the pin names a checksums file: %w", b.dir, err)
	}
	sums, err := ParseChecksums(data)
	if err != nil {
		return fmt.Errorf("bump %s: checksums file %s: %w", b.dir, b.sums, err)
	}
	for i := range b.srcs {
		s := &b.srcs[i]
		h, ok := sums[path.Base(s.URL)]
		switch {
		case !ok:
		case s.SHA256 != "" && s.SHA256 != h:
			return fmt.Errorf("bump %s: SHA-256 %s=%s given, but the release's checksums file %s says %s; find out which is right before pinning", b.dir, s.URL, s.SHA256, b.sums, h)
		case s.SHA256 == "":
			s.SHA256 = h
			b.res.Digests = append(b.res.Digests, Digest{URL: s.URL, SHA256: h, From: FromChecksums})
		}
	}
	return nil
}

// put stores data in the staged fetcher's cache under its SHA-256.
func (b *bump) put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	return h, atomicfile.WriteFile(b.staged.CachePath(h), data, 0o644)
}

// fetchSources downloads every new source, verified against its pin, into
// the staged cache; one still without a digest is taken on first use when
// the caller allows it, else refused (ErrNoDigest).
func (b *bump) fetchSources(ctx context.Context) error {
	for i := range b.srcs {
		s := &b.srcs[i]
		if s.SHA256 == "" {
			if !b.opts.TrustOnFirstUse {
				return fmt.Errorf("bump %s: no SHA-256 for %s: %w", b.dir, s.URL, ErrNoDigest)
			}
			data, err := b.fetcher.FetchUnverified(ctx, s.URL)
			if err != nil {
				return fmt.Errorf("bump %s: %w", b.dir, err)
			}
			if s.SHA256, err = b.put(data); err != nil {
				return err
			}
			b.res.Digests = append(b.res.Digests, Digest{URL: s.URL, SHA256: s.SHA256, From: FromTOFU})
			continue
		}
		b.log.Info("fetch", "url", s.URL)
		data, err := b.fetcher.Fetch(ctx, *s)
		if err != nil {
			return fmt.Errorf("bump %s: %w", b.dir, err)
		}
		if _, err := b.put(data); err != nil {
			return err
		}
	}
	return nil
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ParseChecksums reads a release's checksums file: "<hex>  <name>" or
// "<hex> *<name>" (sha256sum) or "SHA256 (<name>) = <hex>" (BSD) lines;
// other lines and other digest lengths are skipped. It maps file names
// (base names) to lowercase hex. Bump and vendor both read the file the
// pins name with it, so they agree on what it says.
func ParseChecksums(data []byte) (map[string]string, error) {
	if len(data) > 1<<20 {
		return nil, fmt.Errorf("larger than 1 MiB; not a checksums file")
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		var h, name string
		if rest, ok := strings.CutPrefix(line, "SHA256 ("); ok {
			n, hx, ok := strings.Cut(rest, ") = ")
			if !ok {
				continue
			}
			name, h = n, hx
		} else {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			h, name = f[0], strings.TrimPrefix(f[1], "*")
		}
		h = strings.ToLower(h)
		if !pin.ValidSHA256(h) || name == "" {
			continue
		}
		out[path.Base(name)] = h
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("holds no SHA-256 lines (\"<hex>  <file>\")")
	}
	return out, nil
}
