package blob

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

func sha(b []byte) [32]byte { return sha256.Sum256(b) }

// FuzzReadHeader: any input gives a header or an error, never a panic, and
// a header never claims more bytes than it was given.
func FuzzReadHeader(f *testing.F) {
	good, _ := CompressBytes([]byte("kind: Metadata\n"))
	f.Add(good)
	f.Add([]byte{0x1f, 0x8b, 8, 0x1f, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{0x1f, 0x8b, 8, 0x04, 0, 0, 0, 0, 0, 3, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHeader(b)
		if err == nil && h.Len > len(b) {
			t.Fatalf("header length %d > input %d", h.Len, len(b))
		}
		if err != nil {
			if _, ok := IsCorrupt(err); !ok {
				t.Fatalf("error is not a CorruptError: %v", err)
			}
		}
	})
}

// FuzzInspect: Inspect never panics, bounds its output, and whatever it
// accepts the standard library's reader accepts with the same content.
func FuzzInspect(f *testing.F) {
	good, _ := CompressBytes([]byte("apiVersion: v1\nkind: Namespace\n"))
	f.Add(good)
	f.Add(append(bytes.Clone(good), good...))
	f.Add(good[:len(good)-2])
	f.Fuzz(func(t *testing.T, b []byte) {
		info := Inspect(bytes.NewReader(b), 1<<20)
		if info.Size != int64(len(b)) {
			t.Fatalf("size %d != %d", info.Size, len(b))
		}
		if info.RawSize > 1<<20 {
			t.Fatalf("inflated past the limit: %d", info.RawSize)
		}
		if info.Err != nil {
			return
		}
		if info.Members != 1 {
			t.Fatalf("accepted with %d members", info.Members)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("accepted, but compress/gzip refuses the header: %v", err)
		}
		zr.Multistream(false)
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("accepted, but compress/gzip refuses the data: %v", err)
		}
		if sha(out) != [32]byte(info.RawSHA256) {
			t.Fatal("inflated digest differs from compress/gzip's")
		}
	})
}

// FuzzInspectBytes: the in-memory inspection and the streaming one give
// the same Info (errors and their offsets included) and write the same
// inflated bytes, for any input, limit and guess at the inflated bytes.
func FuzzInspectBytes(f *testing.F) {
	text := []byte("apiVersion: v1\nkind: Namespace\n")
	good, _ := CompressBytes(text)
	f.Add(good, uint16(0), text)
	f.Add(good, uint16(len(text)-1), text)
	f.Add(good, uint16(0), text[:5])
	f.Add(append(bytes.Clone(good), good...), uint16(5), []byte("x"))
	f.Add(append(bytes.Clone(good), 0), uint16(0), []byte(nil))
	f.Add(good[:len(good)-2], uint16(3), []byte(nil))
	f.Add(good[:14], uint16(0), text)
	f.Add([]byte{0x1f, 0x8b, 8, 0x1e, 0, 0, 0, 0, 0, 3, 0xff, 0xff}, uint16(0), []byte(nil))
	f.Fuzz(func(t *testing.T, b []byte, limit uint16, guess []byte) {
		var exp *Expect
		if guess != nil {
			exp = &Expect{Data: guess, SHA256: sha256.Sum256(guess)}
		}
		var ws, wm bytes.Buffer
		s := InspectExpect(bytes.NewReader(b), int64(limit), &ws, exp)
		m := InspectBytes(context.Background(), b, int64(limit), &wm, exp)
		if ks, km := infoKey(s), infoKey(m); ks != km {
			t.Fatalf("streaming %s\nin memory %s", ks, km)
		}
		if !bytes.Equal(ws.Bytes(), wm.Bytes()) {
			t.Fatalf("streaming wrote %d inflated bytes, in memory %d", ws.Len(), wm.Len())
		}
	})
}

// infoKey spells out every field of i, a CorruptError's included.
func infoKey(i Info) string {
	e := func(err error) string {
		if ce, ok := IsCorrupt(err); ok {
			return fmt.Sprintf("%#v", *ce)
		}
		return fmt.Sprint(err)
	}
	plain := i
	plain.Err, plain.HeaderErr = nil, nil
	return fmt.Sprintf("%#v err=%s headerErr=%s", plain, e(i.Err), e(i.HeaderErr))
}

// FuzzFirstDifference: two texts differ iff a diff comes back, the diff
// points at the first differing byte and its line, stays within its
// bounds, and is the same whether the content is read plain or inflated
// from a gzip blob (the tree and the registry read it one way each).
func FuzzFirstDifference(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nx\nc\n"))
	f.Add([]byte(""), []byte("x"))
	f.Add([]byte("a: 1\nb: 2\n"), []byte("a: 1\nb: 3\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d := FirstDifference(bytes.NewReader(a), bytes.NewReader(b))
		if bytes.Equal(a, b) != (d == nil) {
			t.Fatalf("equal=%v diff=%+v", bytes.Equal(a, b), d)
		}
		gz, err := CompressBytes(b)
		if err != nil {
			t.Fatal(err)
		}
		if dz := FirstDifference(bytes.NewReader(a), Inflated(gz, int64(len(b))+1)); (d == nil) != (dz == nil) || d != nil && *d != *dz {
			t.Fatalf("plain %+v, inflated %+v", d, dz)
		}
		if d == nil {
			return
		}
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		if d.Offset != int64(i) || d.Line != bytes.Count(a[:i], []byte{'\n'})+1 {
			t.Fatalf("diff at line %d byte %d, want byte %d", d.Line, d.Offset, i)
		}
		if len(d.Excerpt) > diffMaxBytes || strings.Count(d.Excerpt, "\n") > diffMaxLines {
			t.Fatalf("excerpt too big: %d bytes", len(d.Excerpt))
		}
	})
}

// FuzzInspectExpected: the check of a blob against its expected content
// (which never inflates) gives the inflater's Info whenever it vouches for
// a blob, whatever the compression level and whatever byte is damaged.
// The blob is compressed from data, then one byte is xored or the blob is
// cut; the guess is data itself, or data with one byte changed.
func FuzzInspectExpected(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), int8(9), uint16(0), byte(0), uint16(0), false)
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), int8(1), uint16(12), byte(1), uint16(0), false)
	f.Add([]byte("stored, not compressed"), int8(0), uint16(12), byte(0x80), uint16(0), false)
	f.Add([]byte("huffman only: no matches at all"), int8(-2), uint16(0), byte(0), uint16(3), true)
	f.Add([]byte(""), int8(6), uint16(0), byte(0), uint16(0), false)
	f.Fuzz(func(t *testing.T, data []byte, level int8, at uint16, xor byte, cut uint16, wrongGuess bool) {
		zw, err := kgzip.NewWriterLevel(io.Discard, int(level)%12-2)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		zw.Reset(&buf)
		_, _ = zw.Write(data)
		_ = zw.Close()
		gz := buf.Bytes()
		if len(gz) > 0 {
			gz[int(at)%len(gz)] ^= xor
			gz = gz[:len(gz)-int(cut)%(len(gz)+1)]
		}
		guess := data
		if wrongGuess && len(data) > 0 {
			guess = bytes.Clone(data)
			guess[int(at)%len(guess)]++
		}
		exp := &Expect{Data: guess, SHA256: sha256.Sum256(guess)}
		var wi, wf bytes.Buffer
		inflated := InspectExpect(bytes.NewReader(gz), 0, &wi, exp)
		fast, ok := inspectExpected(context.Background(), gz, exp, &wf)
		if !ok {
			return // left to the inflater
		}
		if ki, kf := infoKey(inflated), infoKey(fast); ki != kf {
			t.Fatalf("inflated %s\nchecked  %s", ki, kf)
		}
		if !bytes.Equal(wi.Bytes(), wf.Bytes()) {
			t.Fatalf("inflating wrote %d bytes, the check %d", wi.Len(), wf.Len())
		}
	})
}
