package blob

import (
	"bytes"
	"compress/gzip"
	"os/exec"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestForYAML: a blob of exactly the YAML under a header that embeds a
// name or a time becomes CompressBytes(YAML), whatever name and time it
// embeds; a reproducible one (ours, or GNU gzip -9 -n) is kept byte for
// byte; one of other content, corrupt or of several members is returned
// unchanged, never re-encoded into agreement.
func TestForYAML(t *testing.T) {
	ours, err := CompressBytes(manifest)
	if err != nil {
		t.Fatal(err)
	}
	dirty1 := stdGzip(t, manifest, gzip.Header{Name: "core-components.yaml", ModTime: time.Unix(1745280000, 0)})
	dirty2 := stdGzip(t, manifest, gzip.Header{Name: "other.yaml", ModTime: time.Unix(1, 0), Comment: "c"})
	edited := append(bytes.Clone(manifest), "# edited\n"...)
	other := stdGzip(t, edited, gzip.Header{Name: "core-components.yaml", ModTime: time.Unix(1745280000, 0)})
	cleanOther := stdGzip(t, manifest, gzip.Header{OS: 3}) // a clean header, and the standard library deflates otherwise than ours
	for _, tc := range []struct {
		name string
		gz   []byte
		want Encoding
		out  []byte
	}{
		{"ours", ours, Reproducible, ours},
		{"clean header, other bytes", cleanOther, Reproducible, cleanOther},
		{"name and mtime", dirty1, DirtyHeader, ours},
		{"other name, time and a comment", dirty2, DirtyHeader, ours},
		{"other content", other, NotOf, other},
		{"truncated", dirty1[:len(dirty1)-4], NotOf, dirty1[:len(dirty1)-4]},
		{"two members", append(bytes.Clone(ours), ours...), NotOf, append(bytes.Clone(ours), ours...)},
		{"not gzip", manifest, NotOf, manifest},
	} {
		got, enc, err := ForYAML(tc.gz, manifest)
		if err != nil || enc != tc.want || !bytes.Equal(got, tc.out) {
			t.Errorf("%s: encoding %v, err %v, same bytes as want %v; want encoding %v", tc.name, enc, err, bytes.Equal(got, tc.out), tc.want)
		}
	}
	if bytes.Equal(cleanOther, ours) {
		t.Fatal("the clean-header blob of another writer equals ours: the case tests nothing")
	}
}

// TestForYAMLGNU: blobs GNU gzip makes of the same YAML with and without
// -n: the one with -n is kept as is, the one without becomes ours.
func TestForYAMLGNU(t *testing.T) {
	gz := testpeer.Binary(t, "gzip", "apt-get install gzip")
	ours, _ := CompressBytes(manifest)
	run := func(args ...string) []byte {
		cmd := exec.Command(gz, args...)
		cmd.Stdin = bytes.NewReader(manifest)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	n := run("-9", "-n", "-c")
	if got, enc, _ := ForYAML(n, manifest); enc != Reproducible || !bytes.Equal(got, n) {
		t.Errorf("gzip -9 -n: %v", enc)
	}
	// gzip reading stdin stores no name; -N with a name needs a file, so
	// plant the time in the header of the -n output instead.
	dirty := bytes.Clone(n)
	dirty[4], dirty[5], dirty[6], dirty[7] = 0x80, 0x3a, 0x06, 0x68
	if got, enc, _ := ForYAML(dirty, manifest); enc != DirtyHeader || !bytes.Equal(got, ours) {
		t.Errorf("gzip with a time in its header: %v", enc)
	}
}
