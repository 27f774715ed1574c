package blob

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
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
	raw := &countingHash{h: sha256.New()}
	br := GetReader(io.TeeReader(r, raw))
	defer PutReader(br)
	info := inspect(context.Background(), source{
		r:    br,
		pos:  func() int64 { return raw.n - int64(br.Buffered()) },
		peek: br.Peek,
	}, limit, w, exp)
	// Hash the rest of the input so Size and SHA256 cover every byte. The
	// read is bounded by what the caller gave us (a file or a decoded
	// ConfigMap value); draining does not allocate.
	_, _ = io.Copy(io.Discard, br)
	info.Size = raw.n
	copy(info.SHA256[:], raw.h.Sum(nil))
	return info
}

// InspectBytes is InspectExpect on a blob held in memory: the Info is the
// same for the same bytes, but the compressed bytes are hashed in one call
// and inflated straight from the slice, which is faster than streaming.
// When a guess is given, the blob is first checked against it without
// inflating (see inspectExpected); it is inflated only when that check
// cannot vouch for it. Inflating stops with an error once ctx is done.
func InspectBytes(ctx context.Context, b []byte, limit int64, w io.Writer, exp *Expect) Info {
	if limit <= 0 {
		limit = DefaultLimit
	}
	if exp != nil && int64(len(exp.Data)) <= limit {
		if info, ok := inspectExpected(ctx, b, exp, w); ok {
			return info
		}
	}
	r := bytes.NewReader(b)
	info := inspect(ctx, source{
		r:   r,
		pos: func() int64 { return int64(len(b)) - int64(r.Len()) },
		peek: func(n int) ([]byte, error) {
			rest := b[len(b)-r.Len():]
			if len(rest) < n {
				return rest, io.EOF
			}
			return rest[:n], nil
		},
	}, limit, w, exp)
	info.Size = int64(len(b))
	info.SHA256 = sha256.Sum256(b)
	return info
}

// source is the compressed input of inspect. The inflater reads r byte by
// byte; a *bytes.Reader or *bufio.Reader keeps it on its fast paths.
type source struct {
	r    flate.Reader
	pos  func() int64                // offset of the next byte r gives
	peek func(n int) ([]byte, error) // the next n bytes, not consumed (fewer and an error at the end)
}

// inspect fills all of Info but Size and SHA256 from src.
func inspect(ctx context.Context, src source, limit int64, w io.Writer, exp *Expect) Info {
	if limit <= 0 {
		limit = DefaultLimit
	}
	var info Info
	h, err := readHeader(src.r)
	info.Header = h
	if err != nil {
		info.HeaderErr = err
		info.Err = err
		return info
	}
	info.Members = 1

	out := &sink{ctx: ctx, limit: limit, w: w, raw: newRawHash(exp)}
	err = out.inflate(src.r)
	info.RawSize = out.n
	switch {
	case out.n > limit:
		info.RawSize = limit
		info.Err = &CorruptError{Kind: TooLarge, Offset: -1, Detail: fmt.Sprintf("inflates to more than %d bytes; stopped there (raise the limit if this blob is genuine)", limit)}
		return info
	case err != nil:
		info.Err = &CorruptError{Kind: errorKind(err), Offset: src.pos(), Detail: "deflate data: " + err.Error()}
		return info
	}
	info.RawSHA256 = out.raw.sum()

	var trailer [8]byte
	if _, err := io.ReadFull(src.r, trailer[:]); err != nil {
		info.Err = &CorruptError{Kind: Truncated, Offset: src.pos(), Detail: "trailer (CRC-32 and size) missing or cut short"}
		return info
	}
	wantCRC := binary.LittleEndian.Uint32(trailer[:4])
	wantSize := binary.LittleEndian.Uint32(trailer[4:])
	if got := out.crc; got != wantCRC {
		info.Err = &CorruptError{Kind: BadChecksum, Offset: -1, Detail: fmt.Sprintf("CRC-32 of the data is %08x, trailer says %08x", got, wantCRC)}
		return info
	}
	if got := uint32(out.n); got != wantSize {
		info.Err = &CorruptError{Kind: BadChecksum, Offset: -1, Detail: fmt.Sprintf("inflated size mod 2^32 is %d, trailer says %d", got, wantSize)}
		return info
	}

	end := src.pos()
	next, err := src.peek(2)
	switch {
	case len(next) == 0 && err != nil:
		// Clean end of input.
	case len(next) == 2 && next[0] == 0x1f && next[1] == 0x8b:
		info.Members = 2
		info.Err = &CorruptError{Kind: MultiMember, Offset: end, Detail: "a second gzip member follows the first; the operator and most tools read only one"}
	default:
		info.Err = &CorruptError{Kind: Trailing, Offset: end, Detail: "bytes follow the gzip trailer"}
	}
	return info
}

// errLimit stops inflating one byte past the limit.
var errLimit = errors.New("inflate limit reached")

// sink takes the inflated bytes as the inflater flushes its window (32
// KiB at a time, no copy): it counts them, keeps their CRC-32, compares
// or hashes them (raw) and passes them on to w, in one loop rather than a
// fan-out of writers. It stops with errLimit once limit+1 bytes came out,
// and with ctx's error once ctx is done.
type sink struct {
	ctx   context.Context
	limit int64
	w     io.Writer // may be nil; its errors are ignored
	raw   *rawHash
	n     int64
	crc   uint32
}

func (s *sink) Write(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
	var err error
	if room := s.limit + 1 - s.n; int64(len(p)) > room {
		p, err = p[:room], errLimit
	}
	s.n += int64(len(p))
	s.crc = crc32.Update(s.crc, crc32.IEEETable, p)
	s.raw.write(p)
	if s.w != nil {
		_, _ = s.w.Write(p)
	}
	return len(p), err
}

// inflate inflates one deflate stream from r into s. It returns nil at
// the end of the stream, else why it stopped (errLimit included).
//
// The inflater is new each time, not pooled: a reset one keeps the
// Huffman tables of its last stream, and on corrupt input which error it
// reports (truncated or bad data) could then depend on that history.
func (s *sink) inflate(r flate.Reader) error {
	// r has ReadByte, so the inflater adds no buffer of its own.
	fr := flate.NewReader(r)
	_, err := fr.(io.WriterTo).WriteTo(s)
	return err
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

func (r *rawHash) write(p []byte) {
	if r.same {
		if rest := r.exp.Data[r.n:]; len(p) <= len(rest) && bytes.Equal(p, rest[:len(p)]) {
			r.n += int64(len(p))
			return
		}
		r.diverge()
	}
	r.n += int64(len(p))
	r.h.Write(p)
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
