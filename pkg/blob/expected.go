package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"
)

// inspectExpected is InspectBytes for the usual case of a verifier: a
// blob of one clean gzip member whose content is exactly exp.Data. It
// decodes the deflate stream without writing any output, checking each
// literal and each back-reference against exp.Data, so a blob costs the
// Huffman decoding and a comparison, not an inflate into a window and a
// copy out of it.
//
// ok is true only when the blob is one valid member with that content and
// nothing after it; the Info is then the one inflating gives. On anything
// else (a difference, an error, a coding the inflater accepts but this
// check leaves to it, such as an incomplete Huffman code) ok is false and
// the caller inflates, which says what is wrong and where. It gives up
// once ctx is done.
func inspectExpected(ctx context.Context, b []byte, exp *Expect, w io.Writer) (Info, bool) {
	r := bytes.NewReader(b)
	h, err := readHeader(r)
	if err != nil {
		return Info{}, false
	}
	start := len(b) - r.Len()
	n, ok := matchDeflate(ctx, b[start:], exp.Data)
	end := start + n
	if !ok || len(b) != end+8 ||
		binary.LittleEndian.Uint32(b[end:]) != crc32.ChecksumIEEE(exp.Data) ||
		binary.LittleEndian.Uint32(b[end+4:]) != uint32(len(exp.Data)) {
		return Info{}, false
	}
	if w != nil {
		_, _ = w.Write(exp.Data)
	}
	return Info{Header: h, Size: int64(len(b)), SHA256: sha256.Sum256(b), RawSize: int64(len(exp.Data)),
		RawSHA256: exp.SHA256, Members: 1}, true
}

// bitReader reads a deflate stream (RFC 1951) least significant bit
// first, refilling its 64-bit buffer a word at a time. Near the end of
// the input it loads zero bytes (counted in over), so a decoder never
// checks for the end per symbol; whether it used bits past the end is
// checked once, at the end.
type bitReader struct {
	in   []byte
	pos  int // next byte of in to load
	over int // zero bytes loaded past the end of in
	buf  uint64
	n    uint // valid bits in buf
}

// refill makes at least 56 bits valid.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.in) {
		// The bits of a partly loaded byte above n are that byte's own,
		// so loading it again at the same place changes nothing. n is
		// below 64 here (63-n must not wrap): the byte loop below, which
		// may leave 64, runs only once fewer than 8 bytes are left, and
		// then this branch is not taken again (a stored block starts a
		// new reader with n 0).
		r.buf |= binary.LittleEndian.Uint64(r.in[r.pos:]) << r.n
		r.pos += int(63-r.n) >> 3
		r.n |= 56
		return
	}
	for r.n <= 56 {
		if r.pos < len(r.in) {
			r.buf |= uint64(r.in[r.pos]) << r.n
			r.pos++
		} else {
			r.over++
		}
		r.n += 8
	}
}

func (r *bitReader) bits(k uint) uint32 {
	v := uint32(r.buf & (1<<k - 1))
	r.buf >>= k
	r.n -= k
	return v
}

// used is the number of bits consumed, zero bits past the end included.
func (r *bitReader) used() int { return (r.pos+r.over)*8 - int(r.n) }

// huffTable decodes one canonical Huffman code: a primary table indexed
// by the next pbits bits, and subtables for longer codes. An entry is
// symbol<<8 | length, or offset<<8 | subPointer | subtable bits.
type huffTable struct {
	e     []uint32
	pbits uint
}

const subPointer = 0x80

// Primary table bits of the literal/length and distance codes.
const (
	litBits  = 10
	distBits = 8
)

// invalidEntry decodes to a symbol no code has (and takes no bits): the
// bit strings an empty or a one-code code leaves unassigned.
const invalidEntry = 0xffff << 8

// build makes the table of the code with these lengths. Like the
// inflater it takes complete codes, the empty code and a single code of
// one bit (zlib writes those); false for any other incomplete or an
// oversubscribed code.
func (t *huffTable) build(lengths []uint8, pbits uint) bool {
	var count [16]int
	maxLen := uint(0)
	for _, l := range lengths {
		count[l]++
		if uint(l) > maxLen {
			maxLen = uint(l)
		}
	}
	count[0] = 0
	left := 1
	for l := 1; l <= 15; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
	}
	if left != 0 && maxLen != 0 && !(maxLen == 1 && count[1] == 1) {
		return false
	}
	var next [16]int
	code := 0
	for l := 1; l <= 15; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	t.pbits = pbits
	t.e = t.e[:0]
	for range 1 << pbits {
		t.e = append(t.e, invalidEntry)
	}
	sb := max(maxLen, pbits) - pbits
	for sym, l8 := range lengths {
		l := uint(l8)
		if l == 0 {
			continue
		}
		rev := reverseBits(next[l], l)
		next[l]++
		entry := uint32(sym)<<8 | uint32(l)
		if l <= pbits {
			for i := rev; i < 1<<pbits; i += 1 << l {
				t.e[i] = entry
			}
			continue
		}
		p := rev & (1<<pbits - 1)
		if t.e[p] == invalidEntry {
			t.e[p] = uint32(len(t.e))<<8 | subPointer | uint32(sb)
			t.e = append(t.e, make([]uint32, 1<<sb)...)
		}
		off := int(t.e[p] >> 8)
		for i := rev >> pbits; i < 1<<sb; i += 1 << (l - pbits) {
			t.e[off+i] = entry
		}
	}
	return true
}

func reverseBits(c int, l uint) int {
	r := 0
	for range l {
		r = r<<1 | c&1
		c >>= 1
	}
	return r
}

// decode reads one symbol; r holds at least 15 valid bits.
func (t *huffTable) decode(r *bitReader) uint32 {
	e := t.e[r.buf&(1<<t.pbits-1)]
	if e&subPointer != 0 {
		e = t.e[int(e>>8)+int(r.buf>>t.pbits)&(1<<(e&0xf)-1)]
	}
	l := uint(e & 0xf)
	r.buf >>= l
	r.n -= l
	return e >> 8
}

// Base values and extra bits of the length (257..285) and distance
// (0..29) symbols, RFC 1951 section 3.2.5.
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	codeOrder   = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// fixedLit and fixedDist are the codes of BTYPE=01 (RFC 1951 section 3.2.6).
var fixedLit, fixedDist = func() (huffTable, huffTable) {
	var l [288]uint8
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
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	var lit, dist huffTable
	lit.build(l[:], litBits)
	dist.build(d[:], distBits)
	return lit, dist
}()

// matcher holds the tables of dynamic blocks, reused between blobs.
type matcher struct {
	lit, dist, clen huffTable
	lengths         [286 + 30]uint8
}

var matchers = sync.Pool{New: func() any { return new(matcher) }}

// matchDeflate reports whether the deflate stream at the start of in
// decodes to exactly want, and how many bytes of in it takes (up to the
// byte holding its last bit). Like the inflater it never reads past the
// end of the stream, so the gzip trailer is found where the inflater
// finds it.
func matchDeflate(ctx context.Context, in, want []byte) (int, bool) {
	m := matchers.Get().(*matcher)
	defer matchers.Put(m)
	r := &bitReader{in: in}
	out := 0
	for final := false; !final; {
		if r.over > 8 || ctx.Err() != nil {
			return 0, false // past the end of the input, or given up
		}
		r.refill()
		final = r.bits(1) == 1
		var lit, dist *huffTable
		switch r.bits(2) {
		case 0:
			n, ok := storedBlock(r, want[out:])
			if !ok {
				return 0, false
			}
			out += n
			continue
		case 1:
			lit, dist = &fixedLit, &fixedDist
		case 2:
			if !m.readTables(r) {
				return 0, false
			}
			lit, dist = &m.lit, &m.dist
		default:
			return 0, false
		}
		n, ok := huffmanBlock(r, lit, dist, want, out)
		if !ok {
			return 0, false
		}
		out = n
	}
	if out != len(want) || r.used() > len(in)*8 {
		return 0, false
	}
	return (r.used() + 7) / 8, true
}

// storedBlock checks a stored block against the start of want and
// returns its length.
func storedBlock(r *bitReader, want []byte) (int, bool) {
	r.bits(r.n & 7) // to a byte boundary
	p := r.pos + r.over - int(r.n/8)
	if p+4 > len(r.in) {
		return 0, false
	}
	n := int(binary.LittleEndian.Uint16(r.in[p:]))
	if uint16(n) != ^binary.LittleEndian.Uint16(r.in[p+2:]) {
		return 0, false
	}
	p += 4
	if p+n > len(r.in) || n > len(want) || !bytes.Equal(r.in[p:p+n], want[:n]) {
		return 0, false
	}
	*r = bitReader{in: r.in, pos: p + n}
	return n, true
}

// readTables reads the code lengths of a dynamic block and builds its
// literal/length and distance tables.
func (m *matcher) readTables(r *bitReader) bool {
	r.refill()
	nlit := int(r.bits(5)) + 257
	ndist := int(r.bits(5)) + 1
	nclen := int(r.bits(4)) + 4
	if nlit > 286 || ndist > 30 {
		return false
	}
	var cl [19]uint8
	for i := range nclen {
		if r.n < 3 {
			r.refill()
		}
		cl[codeOrder[i]] = uint8(r.bits(3))
	}
	if !m.clen.build(cl[:], 7) {
		return false
	}
	lengths := m.lengths[:nlit+ndist]
	for i := 0; i < len(lengths); {
		r.refill()
		sym := m.clen.decode(r)
		if sym < 16 {
			lengths[i] = uint8(sym)
			i++
			continue
		}
		if sym > 18 {
			return false
		}
		var rep int
		var v uint8
		switch sym {
		case 16:
			if i == 0 {
				return false
			}
			rep, v = 3+int(r.bits(2)), lengths[i-1]
		case 17:
			rep = 3 + int(r.bits(3))
		default:
			rep = 11 + int(r.bits(7))
		}
		if i+rep > len(lengths) {
			return false
		}
		for range rep {
			lengths[i] = v
			i++
		}
	}
	return m.lit.build(lengths[:nlit], litBits) && m.dist.build(lengths[nlit:], distBits)
}

// huffmanBlock checks a compressed block against want from out on and
// returns the offset in want after it. It keeps the bit buffer in locals
// (the compiler keeps them in registers) and refills it only when fewer
// bits are left than the next step needs: a literal/length code (15
// bits), or a length's extra bits, a distance code and its extra bits
// (5+15+13).
func huffmanBlock(r *bitReader, lit, dist *huffTable, want []byte, out int) (int, bool) {
	in, buf, n, pos := r.in, r.buf, r.n, r.pos
	lt, dt := (*[1 << litBits]uint32)(lit.e), (*[1 << distBits]uint32)(dist.e)
	for {
		if n < 15 {
			if pos+8 <= len(in) {
				buf |= binary.LittleEndian.Uint64(in[pos:]) << n
				pos += int(63-n) >> 3
				n |= 56
			} else {
				r.buf, r.n, r.pos = buf, n, pos
				r.refill()
				buf, n, pos = r.buf, r.n, r.pos
			}
		}
		e := lt[buf&(1<<litBits-1)]
		if e&subPointer != 0 {
			e = lit.e[int(e>>8)+int(buf>>litBits)&(1<<(e&0xf)-1)]
		}
		buf >>= e & 0xf
		n -= uint(e & 0xf)
		sym := e >> 8
		if sym < 256 {
			if out >= len(want) || want[out] != byte(sym) {
				return 0, false
			}
			out++
			continue
		}
		if sym == 256 {
			r.buf, r.n, r.pos = buf, n, pos
			return out, true
		}
		sym -= 257
		if sym >= 29 {
			return 0, false
		}
		if n < 33 { // once a match: the call costs little
			r.buf, r.n, r.pos = buf, n, pos
			r.refill()
			buf, n, pos = r.buf, r.n, r.pos
		}
		x := uint(lengthExtra[sym])
		length := int(lengthBase[sym]) + int(buf&(1<<x-1))
		buf >>= x
		n -= x
		e = dt[buf&(1<<distBits-1)]
		if e&subPointer != 0 {
			e = dist.e[int(e>>8)+int(buf>>distBits)&(1<<(e&0xf)-1)]
		}
		buf >>= e & 0xf
		n -= uint(e & 0xf)
		ds := e >> 8
		if ds >= 30 {
			return 0, false
		}
		x = uint(distExtra[ds])
		d := int(distBase[ds]) + int(buf&(1<<x-1))
		buf >>= x
		n -= x
		// The copy reads bytes it may itself have written; as they must
		// equal want's, comparing want with itself checks it.
		if d > out || length > len(want)-out {
			return 0, false
		}
		if length <= 8 && out+8 <= len(want) {
			// Most matches are short: one word of each, the bytes past
			// length shifted out.
			x := binary.LittleEndian.Uint64(want[out:]) ^ binary.LittleEndian.Uint64(want[out-d:])
			if x<<(64-8*uint(length)) != 0 {
				return 0, false
			}
		} else if !sameBytes(want, out, out-d, length) {
			return 0, false
		}
		out += length
	}
}

// sameBytes reports whether b[i:i+l] equals b[j:j+l] (j < i, both in b),
// a word at a time: matches are short, and calling into bytes.Equal costs
// more than comparing them.
func sameBytes(b []byte, i, j, l int) bool {
	if l < 8 {
		if i+8 > len(b) {
			return bytes.Equal(b[i:i+l], b[j:j+l])
		}
		x := binary.LittleEndian.Uint64(b[i:]) ^ binary.LittleEndian.Uint64(b[j:])
		return x<<(64-8*uint(l)) == 0
	}
	x, y := b[i:i+l], b[j:j+l]
	for k := 0; k+8 <= l; k += 8 {
		if binary.LittleEndian.Uint64(x[k:]) != binary.LittleEndian.Uint64(y[k:]) {
			return false
		}
	}
	return binary.LittleEndian.Uint64(x[l-8:]) == binary.LittleEndian.Uint64(y[l-8:])
}
