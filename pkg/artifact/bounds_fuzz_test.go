package artifact

import (
	"encoding/json"
	"net/url"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// FuzzSignatureLimits: any manifest bytes either fail to parse or are
// judged by SignatureLimits without a panic; an accepted one really is
// within every bound.
func FuzzSignatureLimits(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":2,"layers":[{"size":300},{"size":300}]}`))
	f.Add([]byte(`{"layers":[{"size":16777216},{"size":16777216}]}`))
	f.Add([]byte(`{"layers":[{"size":-1}]}`))
	f.Add([]byte(`{"layers":[{"size":9223372036854775807},{"size":9223372036854775807}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m ocispec.Manifest
		if json.Unmarshal(raw, &m) != nil {
			return
		}
		l := SignatureLimits
		if err := l.CheckLayers("x", m.Layers); err != nil {
			return
		}
		if len(m.Layers) > l.MaxLayers {
			t.Fatalf("%d layers accepted", len(m.Layers))
		}
		var total int64
		for _, d := range m.Layers {
			if d.Size < 0 || d.Size > l.MaxLayerBytes {
				t.Fatalf("layer of %d bytes accepted", d.Size)
			}
			total += d.Size
		}
		if total > l.MaxTotalBytes {
			t.Fatalf("%d bytes in total accepted", total)
		}
	})
}

// FuzzGuardHost: whatever URL a registry sends the client to, the guard
// lets it through only to the registry itself or an allowed host.
func FuzzGuardHost(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:5000/v2/", "http://169.254.169.254/latest/meta-data", "https://ghcr.io:443/token",
		"https://GHCR.IO/token", "http://ghcr.io:80/x", "file:///etc/passwd", "http://[::1]:5000/x", "http://user:pw@ghcr.io/x"} {
		f.Add(s)
	}
	g := newGuard("ghcr.io", []string{"auth.example:8443"}, nil)
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		if g.check(u) != nil {
			return
		}
		host := CanonicalHost(u.Scheme, u.Host)
		if (u.Scheme != "http" && u.Scheme != "https") || (host != "ghcr.io" && host != "auth.example:8443") {
			t.Fatalf("%q (host %q) let through", raw, host)
		}
	})
}
