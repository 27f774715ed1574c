package blob

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// countingHash hashes and counts what passes through it.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.h.Write(p)
}

// Inspect reads a blob once, streaming: it parses the header, inflates the
// first member while hashing the output (SHA-256 and CRC-32), checks the
// trailer, and looks for anything after it. It never holds the blob or its
// inflated form in memory. Inflating stops once limit bytes (DefaultLimit
// when limit <= 0) have come out, so a gzip bomb is reported, not expanded.
//
// Info.Err is nil only for exactly one complete, valid gzip member.
func Inspect(r io.Reader, limit int64) Info { return InspectTo(r, limit, nil) }

// InspectTo is Inspect that also writes the inflated bytes of the first
// member to w (when not nil) as they come out, so a caller can look at
// the content in the same pass. Errors writing to w are ignored.
func InspectTo(r io.Reader, limit int64, w io.Writer) Info {
	return InspectExpect(r, limit, w, nil)
}

// Expect is a guess at what a blob inflates to: Data and its SHA-256. When
// the inflated bytes are exactly Data, InspectExpect takes RawSHA256 from
// the guess instead of hashing a second copy of the same bytes; the bytes
// are compared, never assumed. A wrong guess (or a right one with a wrong
// SHA256: the caller must hash Data itself) costs only the comparison up
// to the first differing byte; the digest is then computed from the bytes.
type Expect struct {
	Data   []byte
	SHA256 Digest
}

// InspectExpect is InspectTo with a guess at the inflated bytes (nil: no
// guess). The Info is the same as InspectTo's for the same input.
func InspectExpect(r io.Reader, limit int64, w io.Writer, exp *Expect) Info {
	if limit <= 0 {
		limit = DefaultLimit
	}
	raw := &countingHash{h: sha256.New()}
	br := GetReader(io.TeeReader(r, raw))
	defer PutReader(br)
	var info Info
	finish := func() Info {
		// Hash the rest of the input so Size and SHA256 cover every byte.
		// The read is bounded by what the caller gave us (a file or a
		// decoded ConfigMap value); draining does not allocate.
		_, _ = io.Copy(io.Discard, br)
		info.Size = raw.n
		copy(info.SHA256[:], raw.h.Sum(nil))
		return info
	}

	h, err := readHeader(br)
	info.Header = h
	if err != nil {
		info.HeaderErr = err
		info.Err = err
		return finish()
	}
	info.Members = 1

	out := newRawHash(exp)
	crc := crc32.NewIEEE()
	fr := flate.NewReader(br)
	var dst io.Writer = io.MultiWriter(out, crc)
	if w != nil {
		dst = io.MultiWriter(out, crc, lenient{w})
	}
	n, err := io.CopyN(dst, fr, limit+1)
	_ = fr.Close()
	info.RawSize = n
	switch {
	case n > limit:
		info.RawSize = limit
		info.Err = &CorruptError{Kind: TooLarge, Offset: -1, Detail: fmt.Sprintf("inflates to more than %d bytes; stopped there (raise the limit if this blob is genuine)", limit)}
		return finish()
	case err != nil && err != io.EOF:
		info.Err = &CorruptError{Kind: errorKind(err), Offset: raw.n - int64(br.Buffered()), Detail: "deflate data: " + err.Error()}
		return finish()
	}
	info.RawSHA256 = out.sum()

	var trailer [8]byte
	if _, err := io.ReadFull(br, trailer[:]); err != nil {
		info.Err = &CorruptError{Kind: Truncated, Offset: raw.n - int64(br.Buffered()), Detail: "trailer (CRC-32 and size) missing or cut short"}
		return finish()
	}
	wantCRC := binary.LittleEndian.Uint32(trailer[:4])
	wantSize := binary.LittleEndian.Uint32(trailer[4:])
	if got := crc.Sum32(); got != wantCRC {
		info.Err = &CorruptError{Kind: BadChecksum, Offset: -1, Detail: fmt.Sprintf("CRC-32 of the data is %08x, trailer says %08x", got, wantCRC)}
		return finish()
	}
	if got := uint32(n); got != wantSize {
		info.Err = &CorruptError{Kind: BadChecksum, Offset: -1, Detail: fmt.Sprintf("inflated size mod 2^32 is %d, trailer says %d", got, wantSize)}
		return finish()
	}

	end := raw.n - int64(br.Buffered())
	next, err := br.Peek(2)
	switch {
	case len(next) == 0 && err != nil:
		// Clean end of input.
	case len(next) == 2 && next[0] == 0x1f && next[1] == 0x8b:
		info.Members = 2
		info.Err = &CorruptError{Kind: MultiMember, Offset: end, Detail: "a second gzip member follows the first; the operator and most tools read only one"}
	default:
		info.Err = &CorruptError{Kind: Trailing, Offset: end, Detail: "bytes follow the gzip trailer"}
	}
	return finish()
}

// rawHash is the SHA-256 of the inflated bytes. With an expectation it
// only compares them with it while they match, and hashes the matched
// prefix and the rest once they differ.
type rawHash struct {
	exp  *Expect
	same bool // every byte so far equals exp.Data at its offset
	h    hash.Hash
	n    int64
}

func newRawHash(exp *Expect) *rawHash {
	if exp == nil {
		return &rawHash{h: sha256.New()}
	}
	return &rawHash{exp: exp, same: true}
}

func (r *rawHash) Write(p []byte) (int, error) {
	if r.same {
		if rest := r.exp.Data[r.n:]; len(p) <= len(rest) && bytes.Equal(p, rest[:len(p)]) {
			r.n += int64(len(p))
			return len(p), nil
		}
		r.diverge()
	}
	r.n += int64(len(p))
	return r.h.Write(p)
}

// diverge switches to hashing: the bytes so far are exp.Data's prefix.
func (r *rawHash) diverge() {
	r.same = false
	r.h = sha256.New()
	r.h.Write(r.exp.Data[:r.n])
}

func (r *rawHash) sum() Digest {
	if r.same && r.n == int64(len(r.exp.Data)) {
		return r.exp.SHA256
	}
	if r.same {
		r.diverge() // a strict prefix of the guess
	}
	var d Digest
	copy(d[:], r.h.Sum(nil))
	return d
}

// lenient is a writer whose errors do not stop the copy.
type lenient struct{ w io.Writer }

func (l lenient) Write(p []byte) (int, error) {
	_, _ = l.w.Write(p)
	return len(p), nil
}

// readers are 64 KiB buffered readers, reused: a tree of a thousand
// packages reads several thousand files.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// GetReader returns a 64 KiB buffered reader of r from a pool; give it back
// with PutReader once done with it.
func GetReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// PutReader returns br (from GetReader) to the pool; br must not be used
// after.
func PutReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}
