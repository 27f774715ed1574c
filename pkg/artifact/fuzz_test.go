package artifact

import (
	"strings"
	"testing"
)

// FuzzParseReference: prefix and reference parsing never panics, and what
// parses names a repository that round-trips through String/Name.
func FuzzParseReference(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1:5000/capi", "ghcr.io/a/b/", "oci-layout:out/oci", "oci-layout:",
		"localhost:5000/capi/core-cluster-api:v1.10.1-core",
		"oci-layout:/tmp/x:y/core@sha256:" + strings.Repeat("a", 64),
		"http://x/y", "::::", "a/b@", "oci-layout:a:b:c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, err := ParsePrefix(s); err == nil {
			q, err := ParsePrefix(p.String())
			if err != nil || q != p {
				t.Fatalf("ParsePrefix(%q) = %+v, but its String %q parses to %+v, %v", s, p, p.String(), q, err)
			}
			if _, err := p.Repository("core-cluster-api", Options{}); err != nil {
				t.Fatalf("Repository under a parsed prefix: %v", err)
			}
		}
		if repo, ref, err := OpenReference(s, Options{}); err == nil {
			if repo.Name() == "" {
				t.Fatalf("OpenReference(%q) names no repository", s)
			}
			if ref != "" && !strings.Contains(s, ref) {
				t.Fatalf("OpenReference(%q) made up reference %q", s, ref)
			}
		}
	})
}
