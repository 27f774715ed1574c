package blob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/klauspost/compress/flate"
)

// gzip header flags (RFC 1952 section 2.3.1).
const (
	flagText    = 1 << 0
	flagHCRC    = 1 << 1
	flagExtra   = 1 << 2
	flagName    = 1 << 3
	flagComment = 1 << 4
	flagReserve = 0xe0
)

// maxHeaderString bounds FNAME and FCOMMENT so a hostile header cannot make
// the reader buffer without end.
const maxHeaderString = 64 << 10

// ReadHeader parses the gzip member header at the start of b. It needs only
// the header bytes, not the whole blob.
func ReadHeader(b []byte) (Header, error) {
	return readHeader(bytes.NewReader(b))
}

// readHeader parses one member header from r, consuming exactly its bytes.
func readHeader(r flate.Reader) (Header, error) {
	hr := &headerReader{r: r}
	if err := hr.fixed(); err != nil {
		return hr.h, err
	}
	h := &hr.h
	if h.Flags&flagExtra != 0 {
		if err := hr.extra(); err != nil {
			return *h, err
		}
	}
	var err error
	if h.Flags&flagName != 0 {
		if h.Name, err = hr.readString("FNAME"); err != nil {
			return *h, err
		}
		h.HasName = true
	}
	if h.Flags&flagComment != 0 {
		if h.Comment, err = hr.readString("FCOMMENT"); err != nil {
			return *h, err
		}
		h.HasComm = true
	}
	if h.Flags&flagHCRC != 0 {
		if err := hr.checkCRC(); err != nil {
			return *h, err
		}
	}
	return *h, nil
}

// headerReader reads a gzip header field by field, keeping the CRC of the
// bytes read so far: the header CRC (FHCRC) covers every header byte
// before it.
type headerReader struct {
	r    flate.Reader
	h    Header
	hcrc uint32
}

func (hr *headerReader) short(what string) error {
	return &CorruptError{Kind: Truncated, Offset: int64(hr.h.Len), Detail: "header cut short in " + what}
}

// fixed reads the ten fixed bytes: magic, method, flags, mtime, XFL, OS.
func (hr *headerReader) fixed() error {
	h := &hr.h
	var fixed [10]byte
	n, err := io.ReadFull(hr.r, fixed[:])
	h.Len = n
	if err != nil {
		if n >= 2 && (fixed[0] != 0x1f || fixed[1] != 0x8b) {
			return &CorruptError{Kind: NotGzip, Offset: 0, Detail: "no gzip magic (1f 8b)"}
		}
		if n == 0 {
			return &CorruptError{Kind: NotGzip, Offset: 0, Detail: "empty input"}
		}
		return &CorruptError{Kind: Truncated, Offset: int64(n), Detail: "header cut short"}
	}
	if fixed[0] != 0x1f || fixed[1] != 0x8b {
		return &CorruptError{Kind: NotGzip, Offset: 0, Detail: fmt.Sprintf("no gzip magic: starts with %02x %02x", fixed[0], fixed[1])}
	}
	h.Method, h.Flags = fixed[2], fixed[3]
	if h.Method != 8 {
		return &CorruptError{Kind: BadHeader, Offset: 2, Detail: fmt.Sprintf("compression method %d, want 8 (deflate)", h.Method)}
	}
	if h.Flags&flagReserve != 0 {
		return &CorruptError{Kind: BadHeader, Offset: 3, Detail: fmt.Sprintf("reserved flag bits set (%#02x)", h.Flags)}
	}
	h.MTime = binary.LittleEndian.Uint32(fixed[4:8])
	if h.MTime != 0 {
		h.ModTime = time.Unix(int64(h.MTime), 0).UTC()
	}
	h.XFL, h.OS = fixed[8], fixed[9]
	hr.hcrc = crc32.Update(0, crc32.IEEETable, fixed[:])
	return nil
}

// extra reads the FEXTRA field: a two-byte length, then that many bytes.
func (hr *headerReader) extra() error {
	h := &hr.h
	var l [2]byte
	if _, err := io.ReadFull(hr.r, l[:]); err != nil {
		return hr.short("FEXTRA length")
	}
	h.Len += 2
	h.Extra = make([]byte, binary.LittleEndian.Uint16(l[:]))
	if _, err := io.ReadFull(hr.r, h.Extra); err != nil {
		return hr.short("FEXTRA")
	}
	h.Len += len(h.Extra)
	hr.hcrc = crc32.Update(hr.hcrc, crc32.IEEETable, l[:])
	hr.hcrc = crc32.Update(hr.hcrc, crc32.IEEETable, h.Extra)
	h.HasExtra = true
	return nil
}

// readString reads a zero-terminated field (FNAME, FCOMMENT).
func (hr *headerReader) readString(what string) (string, error) {
	var buf []byte
	for {
		c, err := hr.r.ReadByte()
		if err != nil {
			return "", hr.short(what)
		}
		hr.h.Len++
		hr.hcrc = crc32.Update(hr.hcrc, crc32.IEEETable, []byte{c})
		if c == 0 {
			return string(buf), nil
		}
		if len(buf) >= maxHeaderString {
			return "", &CorruptError{Kind: BadHeader, Offset: int64(hr.h.Len), Detail: what + " longer than 64 KiB"}
		}
		buf = append(buf, c)
	}
}

// checkCRC reads FHCRC and compares it with the header's bytes.
func (hr *headerReader) checkCRC() error {
	h := &hr.h
	var c [2]byte
	if _, err := io.ReadFull(hr.r, c[:]); err != nil {
		return hr.short("FHCRC")
	}
	h.Len += 2
	h.HasHCRC = true
	// Readers that check it (Go's compress/gzip, which the
	// cluster-api-operator uses) refuse a header whose CRC is wrong.
	if got, want := uint16(hr.hcrc), binary.LittleEndian.Uint16(c[:]); got != want {
		// BadHeader, not BadChecksum: that kind means the data
		// inflated and only the trailer disagrees.
		return &CorruptError{Kind: BadHeader, Offset: int64(h.Len - 2),
			Detail: fmt.Sprintf("header CRC (FHCRC) is %04x, the header's bytes give %04x", want, got)}
	}
	return nil
}

// errorKind maps a decompressor error to a corruption kind.
func errorKind(err error) Kind {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return Truncated
	default:
		return BadData
	}
}
