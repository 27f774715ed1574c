// Package blob builds reproducible gzip blobs of provider packages and
// inspects them streaming.
//
// It builds and inspects the gzip blobs of provider packages:
// reproducible compression (MTIME 0, no name, comment or extra field) and a
// streaming inspector that checks a blob is one complete gzip member, hashes
// it while inflating and stops at a size limit.
package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// DefaultLimit bounds the inflated size of a blob (a gzip bomb stops here).
const DefaultLimit int64 = 256 << 20

// Header is the fixed part of a gzip member header (RFC 1952) plus its
// optional fields.
type Header struct {
	Method   byte      // 8 = deflate
	Flags    byte      // FTEXT, FHCRC, FEXTRA, FNAME, FCOMMENT
	ModTime  time.Time // zero when MTIME is 0
	MTime    uint32    // raw MTIME
	XFL      byte
	OS       byte
	Name     string // FNAME, if present
	Comment  string // FCOMMENT, if present
	Extra    []byte // FEXTRA, if present
	HasName  bool
	HasComm  bool
	HasExtra bool
	HasHCRC  bool
	Len      int // header length in bytes
}

// Problems lists what makes the header non-reproducible, in words a user can
// act on (e.g. `embeds file name "x.yaml"`). Empty means the header is clean.
func (h Header) Problems() []string {
	var p []string
	if h.HasName {
		p = append(p, fmt.Sprintf("embeds file name %q", h.Name))
	}
	if h.MTime != 0 {
		p = append(p, fmt.Sprintf("embeds modification time %s", h.ModTime.UTC().Format(time.RFC3339)))
	}
	if h.HasComm {
		p = append(p, fmt.Sprintf("embeds comment %q", h.Comment))
	}
	if h.HasExtra {
		p = append(p, fmt.Sprintf("embeds %d bytes of extra field", len(h.Extra)))
	}
	return p
}

// Reproducible reports whether the header embeds nothing that changes
// between runs on the same input.
func (h Header) Reproducible() bool { return len(h.Problems()) == 0 }

// Digest is a SHA-256.
type Digest [sha256.Size]byte

// Hex returns the lowercase hex form.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// String returns "sha256:<hex>".
func (d Digest) String() string { return "sha256:" + d.Hex() }

// Info is what Inspect learns about a blob in one streaming pass.
type Info struct {
	Header    Header
	HeaderErr error  // the header could not be parsed
	Size      int64  // compressed size in bytes
	SHA256    Digest // of the compressed bytes
	RawSize   int64  // inflated size (up to the limit)
	RawSHA256 Digest // of the inflated bytes (valid only when Err == nil)
	Members   int    // gzip members seen
	Err       error  // nil for one valid complete member; else a *CorruptError
}

// Kind of corruption found by Inspect.
type Kind string

const (
	NotGzip     Kind = "not-gzip"     // no gzip magic
	BadHeader   Kind = "bad-header"   // header fields invalid or truncated
	Truncated   Kind = "truncated"    // stream ends before the trailer
	BadData     Kind = "bad-data"     // the deflate stream is invalid
	BadChecksum Kind = "bad-checksum" // CRC-32 or ISIZE trailer mismatch
	MultiMember Kind = "multi-member" // more than one gzip member
	Trailing    Kind = "trailing-data"
	TooLarge    Kind = "too-large" // inflated size passed the limit
)

// CorruptError says why a blob is not one valid complete gzip member.
type CorruptError struct {
	Kind   Kind
	Offset int64 // compressed offset where it was noticed, -1 if unknown
	Detail string
}

func (e *CorruptError) Error() string {
	if e.Detail == "" {
		return string(e.Kind)
	}
	return string(e.Kind) + ": " + e.Detail
}

// IsCorrupt reports whether err is a *CorruptError and returns it.
func IsCorrupt(err error) (*CorruptError, bool) {
	var ce *CorruptError
	ok := errors.As(err, &ce)
	return ce, ok
}
