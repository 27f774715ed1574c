package blob

import (
	"bytes"
	stdflate "compress/flate"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"testing"

	"github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
)

// The deflate streams compressors write use a small part of what RFC 1951
// allows, so FuzzInspectExpected (a compressor's blob with one byte
// damaged) rarely reaches the corners of the check against the expected
// content. craft writes a stream from fuzz bytes instead: stored blocks
// with right or wrong LEN/NLEN, fixed blocks with any symbol (286, 287,
// distance codes 30 and 31 included), dynamic blocks with complete,
// incomplete, oversubscribed, degenerate and empty codes, their code
// lengths run-length coded with 16, 17 and 18 in and out of bounds, and
// back-references near, at and past the start of the output.

// bitWriter writes bits least significant first, as deflate packs them.
type bitWriter struct {
	out []byte
	acc uint64
	n   uint
}

func (w *bitWriter) put(v uint32, k uint) {
	w.acc |= uint64(v&(1<<k-1)) << w.n
	w.n += k
	for w.n >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// code writes a Huffman code, which deflate packs most significant bit first.
func (w *bitWriter) code(c uint32, l uint) { w.put(uint32(reverseBits(int(c), l)), l) }

func (w *bitWriter) align() {
	if w.n > 0 {
		w.put(0, 8-w.n)
	}
}

func (w *bitWriter) bytes() []byte {
	w.align()
	return w.out
}

// fuzzSource hands out the fuzz input a byte at a time, zeros once spent.
type fuzzSource struct{ b []byte }

func (s *fuzzSource) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *fuzzSource) done() bool { return len(s.b) == 0 }

// canonical assigns the canonical codes of RFC 1951 section 3.2.2 (codes
// of an oversubscribed set of lengths overflow; they are written anyway).
func canonical(lengths []uint8) []uint32 {
	var count, next [17]uint32
	for _, l := range lengths {
		count[l]++
	}
	count[0] = 0
	c := uint32(0)
	for l := 1; l <= 16; l++ {
		c = (c + count[l-1]) << 1
		next[l] = c
	}
	codes := make([]uint32, len(lengths))
	for i, l := range lengths {
		if l != 0 {
			codes[i] = next[l]
			next[l]++
		}
	}
	return codes
}

// craftLengths gives n code lengths of at most maxLen bits: usually a
// complete code over some of the symbols (must ones always among them),
// sometimes one the inflater refuses or accepts only as a special case.
func craftLengths(s *fuzzSource, n int, maxLen uint8, must ...int) []uint8 {
	l := make([]uint8, n)
	switch s.next() % 16 { // a spent source (zeros) gives a complete code
	case 13: // empty
		return l
	case 14: // one code of one bit (zlib writes these)
		l[int(s.next())%n] = 1
		return l
	case 15: // raw lengths: mostly invalid
		for i := range l {
			l[i] = s.next() % (maxLen + 1)
		}
		return l
	}
	// Split leaves of a complete binary tree until there are enough.
	want := min(max(2+int(s.next())%n, len(must)), n)
	leaves := []uint8{1, 1}
	for len(leaves) < want {
		i := int(s.next()) % len(leaves)
		for k := 0; k < len(leaves) && leaves[i] >= maxLen; k++ {
			i = (i + 1) % len(leaves)
		}
		if leaves[i] >= maxLen {
			break
		}
		leaves[i]++
		leaves = append(leaves, leaves[i])
	}
	syms := make([]int, 0, n)
	syms = append(syms, must...)
	// Then every step-th symbol from a start, then any.
	at, step := int(s.next())%n, 1+int(s.next()%7)
	for range n {
		if len(syms) >= len(leaves) {
			break
		}
		if !contains(syms, at) {
			syms = append(syms, at)
		}
		at = (at + step) % n
	}
	for i := range n {
		if len(syms) >= len(leaves) {
			break
		}
		if !contains(syms, i) {
			syms = append(syms, i)
		}
	}
	for i, sym := range syms {
		if i < len(leaves) && sym < n {
			l[sym] = leaves[i]
		}
	}
	if c := s.next(); c >= 240 { // damage one length: over- or undersubscribed
		l[int(s.next())%n] = c % (maxLen + 1)
	}
	return l
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// craft writes a deflate stream driven by s.
func craft(s *fuzzSource) []byte {
	w := &bitWriter{}
	out := 0 // bytes the stream gives, if valid
	for blocks := 0; ; blocks++ {
		final := s.done() || blocks == 8 || s.next()%4 == 0
		w.put(b2u(final), 1)
		t := s.next() % 8
		switch {
		case t < 2: // stored
			w.put(0, 2)
			w.align()
			n := uint16(s.next() % 40)
			nn := ^n
			if s.next() == 0xff {
				nn ^= 1 << (s.next() % 16)
			}
			w.put(uint32(n), 16)
			w.put(uint32(nn), 16)
			for range n {
				w.put(uint32(s.next()%4+'a'), 8)
			}
			out += int(n)
		case t < 5:
			w.put(1, 2)
			out = craftSymbols(s, w, fixedLengths(), fixedDistLengths(), out)
		case t < 7:
			w.put(2, 2)
			lit, dist := craftTables(s, w)
			out = craftSymbols(s, w, lit, dist, out)
		default:
			w.put(3, 2)
		}
		if final {
			break
		}
	}
	return w.bytes()
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func fixedLengths() []uint8 {
	l := make([]uint8, 288)
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	return l
}

func fixedDistLengths() []uint8 {
	l := make([]uint8, 32)
	for i := range l {
		l[i] = 5
	}
	return l
}

// craftTables writes the header of a dynamic block and returns its codes.
func craftTables(s *fuzzSource, w *bitWriter) (lit, dist []uint8) {
	nlit := 257 + int(s.next()%32) // 286..288 are invalid
	ndist := 1 + int(s.next()%32)  // 31, 32 are invalid
	if s.next()%4 != 3 {
		nlit, ndist = min(nlit, 286), min(ndist, 30)
	}
	lit = craftLengths(s, nlit, 15, 256)
	dist = craftLengths(s, ndist, 15)
	all := append(append([]uint8{}, lit...), dist...)
	// Run-length code them: a symbol and its extra bits per entry.
	type rl struct {
		sym   int
		extra uint32
		nx    uint
	}
	var seq []rl
	damage := s.next() // one in 8 tables has a run damaged where this says
	for i := 0; i < len(all); {
		run := 1
		for i+run < len(all) && all[i+run] == all[i] {
			run++
		}
		switch {
		case damage == 255 && i == 0: // 16 with nothing before: invalid
			seq = append(seq, rl{16, 0, 2})
			i += 3
		case damage >= 224 && len(all)-i < 138 && all[i] == 0: // a repeat past the end: invalid
			seq = append(seq, rl{18, 127, 7})
			i += 138
		case all[i] == 0 && run >= 11:
			k := min(run, 138)
			seq = append(seq, rl{18, uint32(k - 11), 7})
			i += k
		case all[i] == 0 && run >= 3:
			k := min(run, 10)
			seq = append(seq, rl{17, uint32(k - 3), 3})
			i += k
		case i > 0 && all[i] == all[i-1] && run >= 3:
			k := min(run, 6)
			seq = append(seq, rl{16, uint32(k - 3), 2})
			i += k
		default:
			seq = append(seq, rl{int(all[i]), 0, 0})
			i++
		}
	}
	var used []int
	for _, e := range seq {
		if !contains(used, e.sym) {
			used = append(used, e.sym)
		}
	}
	clen := craftLengths(s, 19, 7, used...)
	nclen := 19
	for nclen > 4 && clen[codeOrder[nclen-1]] == 0 {
		nclen--
	}
	if s.next()%8 == 7 {
		nclen = 4 + int(s.next()%16) // may leave used lengths out
	}
	w.put(uint32(nlit-257), 5)
	w.put(uint32(ndist-1), 5)
	w.put(uint32(nclen-4), 4)
	for i := range nclen {
		w.put(uint32(clen[codeOrder[i]]), 3)
	}
	codes := canonical(clen)
	for _, e := range seq {
		w.code(codes[e.sym], uint(clen[e.sym]))
		w.put(e.extra, e.nx)
	}
	return lit, dist
}

// craftSymbols writes the symbols of a Huffman block, its end of block
// last (unless the input runs out first), and returns the output length
// so far when the block is valid.
func craftSymbols(s *fuzzSource, w *bitWriter, lit, dist []uint8, out int) int {
	lc, dc := canonical(lit), canonical(dist)
	// want, else a symbol of lo..hi that has a code.
	sym := func(l []uint8, want, lo, hi int) int {
		hi = min(hi, len(l))
		for i := range hi - lo {
			if j := lo + (want-lo+i)%(hi-lo); l[j] != 0 {
				return j
			}
		}
		return -1
	}
	for n := 0; n < 64 && !s.done(); n++ {
		c := s.next()
		if c%4 != 0 { // a literal of a small alphabet, so matches can match
			if v := sym(lit, int('a'+c%3), 0, 256); v >= 0 {
				w.code(lc[v], uint(lit[v]))
				out++
			}
			continue
		}
		v := sym(lit, 257+int(s.next()%31), 257, 288)
		if v < 0 {
			continue
		}
		w.code(lc[v], uint(lit[v]))
		length := 3
		if v-257 < 29 {
			x := uint(lengthExtra[v-257])
			e := uint32(s.next()) & (1<<x - 1)
			if s.next()%4 == 0 {
				e = 1<<x - 1 // the longest: 284's is 258
			}
			w.put(e, x)
			length = int(lengthBase[v-257]) + int(e)
		}
		// A distance near the output so far: one past it, at its start,
		// overlapping the copy, or anything.
		var d int
		switch c := s.next() % 16; {
		case c == 0:
			d = out + 1
		case c == 1:
			d = max(out, 1)
		case c < 10:
			d = 1 + int(s.next()%4)
		default:
			d = 1 + (int(s.next())*int(s.next()))%max(out, 1)
		}
		ds := 0
		for ds < 29 && int(distBase[ds+1]) <= d {
			ds++
		}
		if s.next() == 0xff {
			ds = 30 + int(s.next()%2)
		}
		v = sym(dist, ds, 0, 32)
		if v < 0 {
			continue
		}
		if v != ds && v < 30 {
			d = int(distBase[v]) // the nearest the code has
		}
		w.code(dc[v], uint(dist[v]))
		if v < 30 {
			x := uint(distExtra[v])
			w.put(uint32(d-int(distBase[v])), x)
		}
		out += length
	}
	if v := sym(lit, 256, 256, 257); v == 256 {
		w.code(lc[v], uint(lit[v]))
	}
	return out
}

// inflateOracle inflates a deflate stream with klauspost's inflater (the
// one InspectBytes falls back to) reading byte by byte, as inspect does:
// the output, the bytes of in it took and its error.
func inflateOracle(in []byte) ([]byte, int, error) {
	r := bytes.NewReader(in)
	out, err := io.ReadAll(flate.NewReader(r))
	return out, len(in) - r.Len(), err
}

// FuzzMatchDeflate: matchDeflate says a stream decodes to want only when
// the inflater decodes it, without error, to exactly want, and then takes
// exactly the bytes the inflater takes; and it says so for every stream the
// inflater takes (the inflater is then never needed for a right guess).
// Go's own inflater is asked too, so an error in both oracles at once
// would have to agree.
func FuzzMatchDeflate(f *testing.F) {
	f.Add([]byte{0}, []byte{}, uint16(0), false)
	f.Add([]byte("\x01\x05\x00\x03\x03\x01\x02"), []byte("x"), uint16(3), true)
	f.Add([]byte("\x02\x03\x03\x01\x00\x00\x05\x00\x05\x07\x00\x01\x00\x02\x00\x03"), []byte("ab"), uint16(1), false)
	f.Add(bytes.Repeat([]byte{0x13, 0x20, 0x00, 0x44}, 16), []byte{}, uint16(7), true)
	f.Fuzz(func(t *testing.T, prog, tail []byte, at uint16, raw bool) {
		stream := prog
		if !raw {
			stream = craft(&fuzzSource{b: prog})
		}
		out, took, err := inflateOracle(stream)
		sout, serr := io.ReadAll(stdflate.NewReader(bytes.NewReader(stream)))
		if (err == nil) != (serr == nil) || err == nil && !bytes.Equal(out, sout) {
			t.Logf("klauspost and Go's inflater disagree: %v / %v", err, serr)
		}
		check := func(want []byte, what string) {
			n, ok := matchDeflate(context.Background(), stream, want)
			good := err == nil && bytes.Equal(out, want)
			switch {
			case ok && !good:
				t.Fatalf("%s: vouched for %d bytes, the inflater gives %d bytes, error %v", what, len(want), len(out), err)
			case ok && n != took:
				t.Fatalf("%s: the stream takes %d bytes, the inflater's %d", what, n, took)
			case !ok && good:
				t.Fatalf("%s: a stream the inflater takes (%d bytes out) was left to it", what, len(out))
			}
		}
		check(out, "the inflater's output")
		check(append(bytes.Clone(out), tail...), "the output and more")
		if len(out) > 0 {
			check(out[:len(out)-1], "the output but its last byte")
			bad := bytes.Clone(out)
			bad[int(at)%len(bad)] ^= 1 << (at >> 13)
			check(bad, "the output with a bit changed")
		}
		// The whole blob: Info as the inflater gives it, every field.
		gz := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, stream[:took]...)
		gz = binary.LittleEndian.AppendUint32(gz, crc32.ChecksumIEEE(out))
		gz = binary.LittleEndian.AppendUint32(gz, uint32(len(out)))
		if len(tail) > 0 && tail[0]%2 == 0 {
			gz = append(gz, tail[1:]...)
		}
		for _, g := range [][]byte{out, append(bytes.Clone(out), tail...)} {
			exp := &Expect{Data: g, SHA256: sha256.Sum256(g)}
			var wm, ws bytes.Buffer
			m := InspectBytes(context.Background(), gz, int64(at), &wm, exp)
			s := InspectExpect(bytes.NewReader(gz), int64(at), &ws, exp)
			if km, ks := infoKey(m), infoKey(s); km != ks {
				t.Fatalf("in memory %s\nstreaming %s", km, ks)
			}
			if !bytes.Equal(wm.Bytes(), ws.Bytes()) {
				t.Fatalf("in memory wrote %d bytes, streaming %d", wm.Len(), ws.Len())
			}
		}
	})
}

// TestMatchDeflateCrafted: streams written by hand for the corners of RFC
// 1951, each checked against the inflater as FuzzMatchDeflate checks them.
func TestMatchDeflateCrafted(t *testing.T) {
	fixedEOB := func(w *bitWriter) { w.code(0, 7) }
	lit := func(w *bitWriter, c byte) { // fixed code of a literal below 144
		w.code(uint32(0x30+int(c)), 8)
	}
	// match writes a fixed-code length 3..10 and a distance of at most 4.
	match := func(w *bitWriter, length, d int) {
		w.code(uint32(length-3+1), 7) // 257+(length-3): codes 0000001..
		w.code(uint32(d-1), 5)
	}
	cases := []struct {
		name  string
		write func(w *bitWriter)
		want  string // what a buggy check might vouch for
	}{
		{"distance before the start", func(w *bitWriter) {
			w.put(1, 1)
			w.put(1, 2)
			lit(w, 'a')
			match(w, 3, 2)
			fixedEOB(w)
		}, "aaaa"},
		{"overlapping copy", func(w *bitWriter) {
			w.put(1, 1)
			w.put(1, 2)
			lit(w, 'a')
			lit(w, 'b')
			match(w, 5, 2)
			fixedEOB(w)
		}, "abababa"},
		{"no final block", func(w *bitWriter) {
			w.put(0, 1)
			w.put(1, 2)
			lit(w, 'a')
			fixedEOB(w)
		}, "a"},
		{"stored with bad NLEN", func(w *bitWriter) {
			w.put(1, 1)
			w.put(0, 2)
			w.align()
			w.put(1, 16)
			w.put(0xfffe^1, 16)
			w.put('a', 8)
		}, "a"},
		{"stored after a fixed block", func(w *bitWriter) {
			w.put(0, 1)
			w.put(1, 2)
			lit(w, 'a')
			fixedEOB(w)
			w.put(1, 1)
			w.put(0, 2)
			w.align()
			w.put(2, 16)
			w.put(0xfffd, 16)
			w.put('b', 8)
			w.put('c', 8)
		}, "abc"},
		{"fixed distance code 30", func(w *bitWriter) {
			w.put(1, 1)
			w.put(1, 2)
			lit(w, 'a')
			w.code(1, 7)
			w.code(30, 5)
			fixedEOB(w)
		}, "aaaa"},
		{"fixed literal 286", func(w *bitWriter) {
			w.put(1, 1)
			w.put(1, 2)
			lit(w, 'a')
			w.code(0xc0+286-280, 8)
			w.code(0, 5)
			fixedEOB(w)
		}, "aaaa"},
		{"reserved block type", func(w *bitWriter) {
			w.put(1, 1)
			w.put(3, 2)
		}, ""},
	}
	for _, tc := range cases {
		w := &bitWriter{}
		tc.write(w)
		stream := w.bytes()
		out, took, err := inflateOracle(stream)
		for _, want := range []string{tc.want, string(out)} {
			n, ok := matchDeflate(context.Background(), stream, []byte(want))
			good := err == nil && string(out) == want
			if ok != good || ok && n != took {
				t.Errorf("%s: want %q: check says %v (%d bytes), inflater %q %v (%d bytes)", tc.name, want, ok, n, out, err, took)
			}
		}
	}
}

// TestMatchDeflateAllocates: the check allocates nothing that grows with
// the blob: its tables are pooled and of a fixed size, whatever the
// stream's codes (a blob of many dynamic blocks, here), and nothing is
// written out.
func TestMatchDeflateAllocates(t *testing.T) {
	var yaml []byte
	for i := range 20000 {
		yaml = fmt.Appendf(yaml, "  - name: item-%d\n    image: example.com/x:v%d\n", i*7919%10007, i%13)
	}
	gz, err := kgzip.NewWriterLevel(io.Discard, 9)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz.Reset(&buf)
	_, _ = gz.Write(yaml)
	_ = gz.Close()
	b := buf.Bytes()
	exp := &Expect{Data: yaml, SHA256: sha256.Sum256(yaml)}
	if _, ok := inspectExpected(context.Background(), b, exp, nil); !ok {
		t.Fatal("a clean blob was left to the inflater")
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, ok := inspectExpected(context.Background(), b, exp, nil); !ok {
			t.Fatal("left to the inflater")
		}
	})
	if allocs > 4 {
		t.Errorf("%v allocations per check of a %d-byte blob of %d bytes", allocs, len(b), len(yaml))
	}
}
