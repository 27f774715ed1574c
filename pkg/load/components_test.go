package load

import (
	"bytes"
	"context"
	"crypto/sha256"
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
