package blob

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below load without the system tzdata: the test cannot skip

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

var manifest = []byte(strings.Repeat("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", 200))

func stdGzip(t testing.TB, data []byte, hdr gzip.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Header = hdr
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCompressDeterministic(t *testing.T) {
	first, err := CompressBytes(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, tz := range []string{"UTC", "America/New_York", "Asia/Kolkata"} {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			t.Fatalf("time zone %s: %v", tz, err)
		}
		old := time.Local
		time.Local = loc
		got, err := CompressBytes(manifest)
		time.Local = old
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("TZ=%s: output differs from first run", tz)
		}
	}
	h, err := ReadHeader(first)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Reproducible() || h.MTime != 0 || h.Flags != 0 {
		t.Fatalf("header not clean: %+v problems=%v", h, h.Problems())
	}
	info := Inspect(bytes.NewReader(first), 0)
	if info.Err != nil {
		t.Fatalf("inspect own output: %v", info.Err)
	}
	if info.RawSize != int64(len(manifest)) || info.RawSHA256 != Digest(sha(manifest)) {
		t.Fatalf("inflated size/digest wrong: %d", info.RawSize)
	}
}

// TestCompressGolden pins the exact bytes Compress makes. Determinism within
// one run is not enough: a compressor change (a klauspost/compress upgrade,
// another level) changes the bytes of every blob built afterwards, so a
// rebuilt release pushes different content under the same tag
// (version-reused) even though the tree's blobs are kept (same YAML). If
// this fails after a dependency bump, do not just update the digests: keep
// the output identical or treat it as a breaking change.
func TestCompressGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string // sha256 of the blob
	}{
		// Empty input: header 1f8b 08 00 00000000 02 ff, an empty final
		// block, CRC 0 and size 0.
		{"empty", nil, "9ceffb7310338057cfe71a4ae1e2c98d2c485d81cdef906532a801f457a38d64"},
		{"manifest", manifest, "6c88171c5f5d606cb2a72ad1435183d025d6fcffa47daf98e41b41bb466f631f"},
	} {
		got, err := CompressBytes(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if d := fmt.Sprintf("%x", sha256.Sum256(got)); d != tc.want {
			t.Errorf("%s: blob sha256 %s, want %s (bytes % x)", tc.name, d, tc.want, got[:min(len(got), 32)])
		}
	}
}

// TestGNUGzipInterop checks that blobs GNU gzip made are read the same way
// and that GNU gzip accepts ours.
func TestGNUGzipInterop(t *testing.T) {
	gz := testpeer.Binary(t, "gzip", "apt-get install gzip")
	dir := t.TempDir()
	src := filepath.Join(dir, "core-components.yaml")
	if err := os.WriteFile(src, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		wantName bool
	}{{[]string{"-9", "-n", "-c"}, false}, {[]string{"-9", "-c"}, true}} {
		out, err := exec.Command(gz, append(tc.args, src)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		info := Inspect(bytes.NewReader(out), 0)
		if info.Err != nil {
			t.Fatalf("gzip %v: %v", tc.args, info.Err)
		}
		if got := info.Header.HasName; got != tc.wantName {
			t.Fatalf("gzip %v: HasName=%v", tc.args, got)
		}
		if tc.wantName && (info.Header.Name != "core-components.yaml" || info.Header.MTime == 0 || info.Header.Reproducible()) {
			t.Fatalf("gzip without -n: header %+v", info.Header)
		}
		if info.RawSHA256 != Digest(sha(manifest)) {
			t.Fatal("digest of GNU blob differs")
		}
	}
	ours, _ := CompressBytes(manifest)
	cmd := exec.Command(gz, "-t")
	cmd.Stdin = bytes.NewReader(ours)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gzip -t rejects our blob: %v %s", err, out)
	}
}

func TestInspectCorrupt(t *testing.T) {
	good, _ := CompressBytes(manifest)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-6] ^= 0xff // CRC byte
	sizeWrong := bytes.Clone(good)
	sizeWrong[len(sizeWrong)-1] ^= 0x01
	bomb, _ := CompressBytes(make([]byte, 4<<20))
	named := stdGzip(t, manifest, gzip.Header{Name: "x.yaml", ModTime: time.Unix(1700000000, 0), Comment: "hi", Extra: []byte{1, 2, 3, 4}})
	// FHCRC: the low 16 bits of the CRC-32 of the header bytes before it.
	withHCRC := func(corrupt bool) []byte {
		hdr := []byte{0x1f, 0x8b, 8, flagHCRC | flagName, 0, 0, 0, 0, 0, 3, 'x', 0}
		c := uint16(crc32.ChecksumIEEE(hdr))
		if corrupt {
			c ^= 1
		}
		return append(append(hdr, byte(c), byte(c>>8)), good[10:]...)
	}
	if info := Inspect(bytes.NewReader(withHCRC(false)), 0); info.Err != nil || !info.Header.HasHCRC {
		t.Fatalf("a header with a correct FHCRC: err=%v HasHCRC=%v", info.Err, info.Header.HasHCRC)
	}
	for _, tc := range []struct {
		name  string
		in    []byte
		limit int64
		want  Kind
	}{
		{"empty", nil, 0, NotGzip},
		{"not gzip", []byte("apiVersion: v1\n"), 0, NotGzip},
		{"header cut", good[:5], 0, Truncated},
		{"body cut", good[:len(good)/2], 0, Truncated},
		{"trailer cut", good[:len(good)-3], 0, Truncated},
		{"bad crc", flipped, 0, BadChecksum},
		{"bad size", sizeWrong, 0, BadChecksum},
		{"multi member", append(bytes.Clone(good), good...), 0, MultiMember},
		{"trailing", append(bytes.Clone(good), 0, 0, 0), 0, Trailing},
		{"bad method", append([]byte{0x1f, 0x8b, 7}, good[3:]...), 0, BadHeader},
		{"reserved flags", append([]byte{0x1f, 0x8b, 8, 0x80}, good[4:]...), 0, BadHeader},
		{"bad deflate", append(bytes.Clone(good[:10]), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 0, BadData},
		{"bomb", bomb, 1 << 20, TooLarge},
		{"named name cut", named[:14], 0, Truncated},
		{"bad header crc", withHCRC(true), 0, BadHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := Inspect(bytes.NewReader(tc.in), tc.limit)
			ce, ok := IsCorrupt(info.Err)
			if !ok {
				t.Fatalf("want %s, got err=%v", tc.want, info.Err)
			}
			if ce.Kind != tc.want {
				t.Fatalf("want %s, got %s (%v)", tc.want, ce.Kind, ce)
			}
			if info.Size != int64(len(tc.in)) || info.SHA256 != Digest(sha(tc.in)) {
				t.Fatalf("compressed size/digest must cover all input: %d vs %d", info.Size, len(tc.in))
			}
			if got, want := infoKey(InspectBytes(context.Background(), tc.in, tc.limit, nil, nil)), infoKey(info); got != want {
				t.Fatalf("in memory %s\nstreaming %s", got, want)
			}
		})
	}
	info := Inspect(bytes.NewReader(named), 0)
	if info.Err != nil {
		t.Fatal(info.Err)
	}
	p := strings.Join(info.Header.Problems(), "; ")
	for _, want := range []string{`file name "x.yaml"`, "2023-11-14T22:13:20Z", `comment "hi"`, "4 bytes of extra"} {
		if !strings.Contains(p, want) {
			t.Errorf("problems %q lack %q", p, want)
		}
	}
}

func TestBombStopsEarly(t *testing.T) {
	bomb, _ := CompressBytes(make([]byte, 64<<20))
	info := Inspect(bytes.NewReader(bomb), 1<<20)
	if ce, ok := IsCorrupt(info.Err); !ok || ce.Kind != TooLarge || !strings.Contains(ce.Detail, "1048576") {
		t.Fatalf("got %v", info.Err)
	}
	if info.RawSize != 1<<20 {
		t.Fatalf("RawSize %d", info.RawSize)
	}
}

// TestInspectBytesCancel: inflating from memory, or checking against the
// right guess, stops once the context is done, with an error rather than
// a verdict on the blob.
func TestInspectBytesCancel(t *testing.T) {
	good, _ := CompressBytes(manifest)
	for _, exp := range []*Expect{nil, {Data: manifest, SHA256: sha256.Sum256(manifest)}} {
		if info := InspectBytes(context.Background(), good, 0, nil, exp); info.Err != nil {
			t.Fatal(info.Err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		info := InspectBytes(ctx, good, 0, nil, exp)
		if ce, ok := IsCorrupt(info.Err); !ok || !strings.Contains(ce.Detail, context.Canceled.Error()) {
			t.Fatalf("cancelled (guess %v): got %v", exp != nil, info.Err)
		}
	}
}

// TestInspectExpect: a guess at the inflated bytes never changes the
// result, right or wrong; a right guess gives the guess's digest without
// hashing the bytes (a planted wrong digest shows the shortcut was taken,
// which is why the caller must hash Data itself).
func TestInspectExpect(t *testing.T) {
	good, _ := CompressBytes(manifest)
	want := Inspect(bytes.NewReader(good), 0)
	if want.Err != nil {
		t.Fatal(want.Err)
	}
	mut := func(f func([]byte) []byte) []byte { return f(bytes.Clone(manifest)) }
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"right", manifest},
		{"first byte differs", mut(func(b []byte) []byte { b[0] ^= 1; return b })},
		{"middle byte differs", mut(func(b []byte) []byte { b[len(b)/2] ^= 1; return b })},
		{"last byte differs", mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b })},
		{"guess is a prefix", manifest[:len(manifest)-1]},
		{"guess is longer", append(bytes.Clone(manifest), 'x')},
		{"empty guess", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := InspectExpect(bytes.NewReader(good), 0, nil, &Expect{Data: tc.data, SHA256: sha256.Sum256(tc.data)})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("with the guess:\n%+v\nwithout:\n%+v", got, want)
			}
		})
	}
	planted := Digest{1}
	if got := InspectExpect(bytes.NewReader(good), 0, nil, &Expect{Data: manifest, SHA256: planted}); got.RawSHA256 != planted {
		t.Fatalf("a right guess was hashed again (RawSHA256 %x)", got.RawSHA256)
	}
	if got := InspectExpect(bytes.NewReader(good), 0, nil, &Expect{Data: manifest[1:], SHA256: planted}); got.RawSHA256 != want.RawSHA256 {
		t.Fatalf("a wrong guess's digest was taken")
	}
}
