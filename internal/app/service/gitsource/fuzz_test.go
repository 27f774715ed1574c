package gitsource

import (
	"strings"
	"testing"
)

// FuzzGitURL: Scheme and WebURL never panic; a URL Scheme accepts yields a
// link that names the commit and path.
func FuzzGitURL(f *testing.F) {
	for _, s := range []string{"https://github.com/o/r.git", "git@gitlab.com:g/p.git", "ssh://git@h:22/r", "file:///srv/r.git",
		"https://u:pw@h/r", "ftp://x", "::", "git@:", "http://[::1]:80/r", "https://GitHub.com/o/r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		scheme, err := Scheme(raw)
		link := WebURL(raw, "0123456789abcdef", "p/f.yaml", 7)
		if err != nil {
			return
		}
		if scheme == "" {
			t.Fatalf("Scheme(%q) accepted with no scheme", raw)
		}
		if !strings.Contains(link, "0123456789abcdef") || !strings.Contains(link, "p/f.yaml#L7") {
			t.Fatalf("WebURL(%q) = %q lacks the commit or path", raw, link)
		}
	})
}
