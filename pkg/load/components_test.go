package load

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
)

// TestHashFilesKeepsWhatABlobInflatesTo: a YAML the chart does not hold
// (helmignored, so read from disk) is hashed like one it holds, and the
// blob beside it gets the same inspection either way, whether it inflates
// to the YAML or to something else of the same size.
func TestHashFilesKeepsWhatABlobInflatesTo(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Provider: "p", Prefix: "p", Group: "g.io", Kinds: []string{"PCluster"}, Size: 100 << 10, Seed: 4})
	other := bytes.Clone(yml)
	other[len(other)/2] ^= 1
	for name, content := range map[string][]byte{"its YAML": yml, "another text": other} {
		t.Run(name, func(t *testing.T) {
			gz, err := blob.CompressBytes(content)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
				t.Fatal(err)
			}
			for rel, b := range map[string][]byte{"files/core-components.yaml": yml, "files/components.gz": gz} {
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			load := func(mem map[string][]byte) *model.Package {
				l := &scanner{root: filepath.Dir(dir), opts: Options{}.withDefaults()}
				p := &model.Package{Dir: dir, Files: map[string]*model.File{}}
				l.hashFiles(context.Background(), p, mem)
				if len(p.Problems) > 0 {
					t.Fatalf("problems: %+v", p.Problems)
				}
				return p
			}
			ignored := load(map[string][]byte{"files/components.gz": gz})
			held := load(map[string][]byte{"files/components.gz": gz, "files/core-components.yaml": yml})
			y, b := ignored.Files["files/core-components.yaml"], ignored.Files["files/components.gz"]
			if y == nil || y.SHA256 != sha256.Sum256(yml) || y.Size != int64(len(yml)) || y.Blob != nil {
				t.Fatalf("YAML read from disk: %+v", y)
			}
			if b == nil || b.Blob == nil || b.Blob.Err != nil || b.Blob.RawSHA256 != sha256.Sum256(content) || b.Objects == nil {
				t.Fatalf("blob: %+v", b)
			}
			for rel, f := range held.Files {
				g := ignored.Files[rel]
				if g == nil || g.SHA256 != f.SHA256 || g.Size != f.Size || (g.Blob == nil) != (f.Blob == nil) ||
					f.Blob != nil && (g.Blob.RawSHA256 != f.Blob.RawSHA256 || g.Blob.RawSize != f.Blob.RawSize || *g.Objects != *f.Objects) {
					t.Errorf("%s: read from disk %+v, held by the chart %+v", rel, g, f)
				}
			}
		})
	}
}

// TestHeldBlob: a ConfigMap's decoded components are taken for a vendored
// blob only when they are its exact bytes, held and hashed from memory.
func TestHeldBlob(t *testing.T) {
	gz := []byte{0x1f, 0x8b, 8, 0, 1, 2, 3, 4}
	yaml := []byte("kind: X\n")
	p := &model.Package{Files: map[string]*model.File{
		"files/c.gz":   {Path: "files/c.gz", Size: int64(len(gz)), SHA256: sha256.Sum256(gz), Blob: &blob.Info{Size: int64(len(gz))}},
		"files/c.yaml": {Path: "files/c.yaml", Size: int64(len(yaml)), SHA256: sha256.Sum256(yaml)},
	}}
	mem := map[string][]byte{"files/c.gz": gz, "files/c.yaml": yaml}
	if f := heldBlob(p, mem, bytes.Clone(gz)); f != p.Files["files/c.gz"] {
		t.Fatalf("the blob's own bytes: got %+v", f)
	}
	other := bytes.Clone(gz)
	other[len(other)-1]++
	for what, raw := range map[string][]byte{"a byte changed": other, "one byte more": append(bytes.Clone(gz), 0), "a YAML file's bytes": yaml, "nothing": nil} {
		if f := heldBlob(p, mem, raw); f != nil {
			t.Errorf("%s: took %s for the blob", what, f.Path)
		}
	}
	if f := heldBlob(p, map[string][]byte{}, gz); f != nil {
		t.Errorf("a blob not held in memory: took %s", f.Path)
	}
}

// TestDecodeHeld: base64 that encodes bytes held in memory gives those
// bytes; anything else decodes as decodeBase64 decodes it.
func TestDecodeHeld(t *testing.T) {
	held := make([]byte, 3<<10*2+5) // over two chunks, not a multiple of 3
	for i := range held {
		held[i] = byte(i * 7)
	}
	mem := map[string][]byte{"files/c.gz": held, "templates/cm.yaml": []byte("kind: ConfigMap\n")}
	s := base64.StdEncoding.EncodeToString(held)
	if got, err := decodeHeld(s, mem); err != nil || &got[0] != &held[0] {
		t.Fatalf("the held bytes' base64: got a copy or %v", err)
	}
	other := []byte(s)
	other[len(other)/2] ^= 1 // another base64 letter
	lastLetter := base64.StdEncoding.EncodeToString(held[:4])
	lastLetter = lastLetter[:len(lastLetter)-3] + "x=="
	for what, in := range map[string]string{"a letter changed": string(other), "another last letter": lastLetter, "too short": s[:len(s)-4], "not base64": "%%%%"} {
		want, werr := decodeBase64(in)
		got, err := decodeHeld(in, mem)
		if !bytes.Equal(got, want) || (err == nil) != (werr == nil) {
			t.Errorf("%s: got %d bytes, %v; want %d bytes, %v", what, len(got), err, len(want), werr)
		}
		if len(got) > 0 && &got[0] == &held[0] {
			t.Errorf("%s: took the held bytes", what)
		}
	}
}

// TestEncodes: encodes agrees with base64.Encoding.EncodeToString at every
// length around its group and buffer sizes, and sees any letter changed.
func TestEncodes(t *testing.T) {
	b := make([]byte, 9<<10)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	for _, n := range []int{0, 1, 2, 3, 5, 6, 7, 8, 9, 13, 14, 15, 100, 3071, 3072, 3073, 4095, 4096, 4097, 9 << 10} {
		s := base64.StdEncoding.EncodeToString(b[:n])
		if !encodes(s, b[:n]) {
			t.Errorf("%d bytes: their base64 not seen as theirs", n)
		}
		for _, at := range []int{0, len(s) / 2, len(s) - 1} {
			if len(s) == 0 {
				break
			}
			bad := []byte(s)
			bad[at] ^= 0x20 // another letter (case flipped, or another digit/sign)
			if encodes(string(bad), b[:n]) {
				t.Errorf("%d bytes: letter %d changed, still seen as their base64", n, at)
			}
		}
		if encodes(s+"AAAA", b[:n]) || n > 0 && encodes(s[:len(s)-4], b[:n]) {
			t.Errorf("%d bytes: a longer or shorter text seen as their base64", n)
		}
	}
}

// TestHashFilesKeepsABoundedAmount: files read whole because a blob may
// inflate to them are held up to maxKept for the package; past it they are
// streamed, and the blob is inspected as before. Forty files of a blob's
// size cost the memory of a few, not of forty.
func TestHashFilesKeepsABoundedAmount(t *testing.T) {
	defer func(m int64) { maxKept = m }(maxKept)
	maxKept = 256 << 10
	const size, files = 100 << 10, 40
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for i := range files {
		b := bytes.Repeat([]byte{'a' + byte(i)}, size)
		if i == 0 {
			first = b
		}
		if err := os.WriteFile(filepath.Join(dir, "files", fmt.Sprintf("f%02d.yaml", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gz, err := blob.CompressBytes(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files", "components.gz"), gz, 0o644); err != nil {
		t.Fatal(err)
	}
	l := &scanner{root: filepath.Dir(dir), opts: Options{}.withDefaults()}
	p := &model.Package{Dir: dir, Files: map[string]*model.File{}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l.hashFiles(context.Background(), p, map[string][]byte{"files/components.gz": gz})
	runtime.ReadMemStats(&after)
	if len(p.Problems) > 0 || len(p.Files) != files+1 {
		t.Fatalf("problems %+v, %d files", p.Problems, len(p.Files))
	}
	if b := p.Files["files/components.gz"]; b.Blob == nil || b.Blob.Err != nil || b.Blob.RawSHA256 != sha256.Sum256(first) {
		t.Fatalf("blob: %+v", b.Blob)
	}
	if got, most := after.TotalAlloc-before.TotalAlloc, uint64(files*size/2); got > most {
		t.Errorf("hashing allocated %d bytes, want at most %d: the files of the blob's size were all held", got, most)
	}
}
