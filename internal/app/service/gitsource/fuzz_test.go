package gitsource

import (
	"bytes"
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

// FuzzPackGuard: the pack guard never panics nor hangs on any bytes, in
// any chunking; what it accepts reaches the writer behind it unchanged,
// and what it refuses never reaches it whole.
func FuzzPackGuard(f *testing.F) {
	small := packObject{typ: objBlob, size: -1, data: []byte("hello\n")}
	f.Add(pack(small), 3)
	f.Add(pack(small, packObject{typ: objOFSDelta, size: -1, pre: []byte{0x05}, data: append(deltaHead(6, 3<<30), 0x90, 0x01)}), 7)
	f.Add(pack(packObject{typ: objREFDelta, size: -1, pre: make([]byte, 20), data: deltaHead(6, 100)}), 1)
	f.Add(pack(packObject{typ: objBlob, size: 3, data: []byte("hello")}), 5)
	f.Add([]byte("PACK\x00\x00\x00\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f"), 2)
	f.Fuzz(func(t *testing.T, p []byte, n int) {
		if n <= 0 || n > len(p) {
			n = len(p) + 1
		}
		out, err := guard(t, p, 1<<16, n)
		if err == nil && !bytes.Equal(out, p) {
			t.Fatalf("accepted, but %d of %d bytes passed", len(out), len(p))
		}
		if err != nil && len(p) > 0 && bytes.Equal(out, p) && !strings.Contains(err.Error(), "malformed") {
			t.Fatalf("refused (%v), but every byte passed", err)
		}
	})
}
