package gitsource

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/gitbomb"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// pack builds a pack (version 2) of objects, each a header and its
// inflated bytes; a delta's prefix (base offset or name) goes in pre. The
// trailer is not a real checksum: the guard does not check it (go-git
// does).
type packObject struct {
	typ  byte
	size int64 // declared; -1: len(data)
	pre  []byte
	data []byte
}

func pack(objs ...packObject) []byte {
	var b bytes.Buffer
	b.WriteString("PACK")
	binary.Write(&b, binary.BigEndian, uint32(2))
	binary.Write(&b, binary.BigEndian, uint32(len(objs)))
	for _, o := range objs {
		size := o.size
		if size < 0 {
			size = int64(len(o.data))
		}
		c := o.typ<<4 | byte(size&15)
		size >>= 4
		for size > 0 {
			b.WriteByte(c | 0x80)
			c = byte(size & 0x7f)
			size >>= 7
		}
		b.WriteByte(c)
		b.Write(o.pre)
		z := zlib.NewWriter(&b)
		z.Write(o.data)
		z.Close()
	}
	b.Write(make([]byte, 20))
	return b.Bytes()
}

// deltaHead is the start of a delta's instructions: the sizes of its base
// and of the object it makes.
func deltaHead(base, target int64) []byte {
	b := binary.AppendUvarint(nil, uint64(base))
	return binary.AppendUvarint(b, uint64(target))
}

type sink struct {
	bytes.Buffer
	closed bool
}

func (s *sink) Close() error { s.closed = true; return nil }

// guard writes p to a packGuard in chunks of n bytes and returns what
// reached the writer behind it and the refusal, if any.
func guard(t *testing.T, p []byte, max int64, n int) ([]byte, error) {
	t.Helper()
	var refused error
	out := &sink{}
	g := newPackGuard(context.Background(), out, max, "c0ffee", func(err error) { refused = err })
	for len(p) > 0 {
		k := min(n, len(p))
		if w, err := g.Write(p[:k]); err != nil || w != k {
			t.Fatalf("Write: %d, %v", w, err)
		}
		p = p[k:]
	}
	err := g.Close()
	if !out.closed {
		t.Error("the writer behind the guard was not closed")
	}
	if (err == nil) != (refused == nil) {
		t.Errorf("Close: %v, refused: %v", err, refused)
	}
	return out.Bytes(), err
}

// TestPackGuard: the guard refuses a pack at the first object whose
// declared size, or for a delta the size of the object it makes, is over
// the bound, before more than that object's header reaches the writer
// behind it; a pack within the bound passes through unchanged, in any
// chunking; a pack that is not one is refused.
func TestPackGuard(t *testing.T) {
	const max, maxHeader = 1 << 20, 10
	small := packObject{typ: objBlob, size: -1, data: []byte("hello\n")}
	tree := packObject{typ: objTree, size: -1, data: bytes.Repeat([]byte("x"), 300)}
	zeros := packObject{typ: objBlob, size: -1, data: make([]byte, 4<<20)}
	ofs := packObject{typ: objOFSDelta, size: -1, pre: []byte{0x05}, data: append(deltaHead(6, 3<<30), 0x90, 0x01)}
	ref := packObject{typ: objREFDelta, size: -1, pre: make([]byte, 20), data: deltaHead(6, 100)}
	for _, tc := range []struct {
		name string
		objs []packObject
		want string // "" passes
	}{
		{"within", []packObject{small, tree, ref}, ""},
		{"blob over", []packObject{small, zeros, tree}, "a blob object of 4194304 bytes (at byte 31 of the pack), more than the 1048576"},
		{"delta making an object over", []packObject{small, ofs}, "a delta object of 3221225472 bytes"},
		{"declared size lies", []packObject{{typ: objBlob, size: 3, data: []byte("hello")}}, "malformed pack: object at 12 inflates to other than the 3 bytes"},
		{"bad type", []packObject{{typ: 5, size: -1, data: []byte("x")}}, "malformed pack: object at 12 has type 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pack(tc.objs...)
			for _, n := range []int{1, 7, 4096, len(p)} {
				out, err := guard(t, p, max, n)
				if tc.want == "" {
					if err != nil || !bytes.Equal(out, p) {
						t.Fatalf("chunks of %d: %v, %d of %d bytes passed", n, err, len(out), len(p))
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("chunks of %d: %v, want %q", n, err, tc.want)
				}
				var ol *ObjectLimitError
				if len(out) >= len(p) {
					t.Errorf("chunks of %d: the whole pack passed", n)
				}
				if errors.As(err, &ol) {
					// Nothing of a whole object passes but (in chunks
					// smaller than it) some bytes of its header; a delta's
					// pass up to the sizes at the start of its instructions.
					if ol.Type != "delta" && int64(len(out)) > ol.Offset+maxHeader {
						t.Errorf("chunks of %d: %d bytes passed, beyond the refused object's header at %d", n, len(out), ol.Offset)
					}
					if !strings.Contains(err.Error(), "git ls-tree -r -l c0ffee") {
						t.Errorf("%v does not say how to find the file", err)
					}
				}
			}
		})
	}
	if _, err := guard(t, []byte("PACX\x00\x00\x00\x02\x00\x00\x00\x00"), max, 4); err == nil || !strings.Contains(err.Error(), "no PACK signature") {
		t.Fatalf("not a pack: %v", err)
	}
}

// TestFetchObjectBound: a repository holding a file over the per-file
// bound is refused during the fetch, from the object's header, however
// much of the pack is still to come (2 MiB that do not compress: the
// upload-pack is still writing when the fetch stops), fast, leaving
// nothing in the cache directory.
func TestFetchObjectBound(t *testing.T) {
	blob := make([]byte, 2<<20)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	commit, err := gitbomb.Write(repo, 1, 1, blob)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	const bound = 20 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	start := time.Now()
	_, err = Fetch(ctx, Spec{URL: "file://" + repo, Ref: "main", MaxFileBytes: 1 << 20}, cache)
	took := time.Since(start)
	var ol *ObjectLimitError
	if !errors.As(err, &ol) || ol.Type != "blob" || ol.Size != 2<<20 || !strings.Contains(err.Error(), "git ls-tree -r -l "+commit) {
		t.Fatalf("Fetch: %v; want the 2 MiB blob refused by its header, naming the commit", err)
	}
	if timebound.Over(took, bound) {
		t.Errorf("refusing took %s", took)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("cache holds %v after a refused fetch", ents)
	}
	// Within the bound: fetched.
	if _, err := Fetch(context.Background(), Spec{URL: "file://" + repo, Ref: "main", MaxFileBytes: 4 << 20}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

var _ io.WriteCloser = (*packGuard)(nil)
