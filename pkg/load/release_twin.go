package load

import (
	"encoding/base64"
	"io"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"
)

// measuredTwin bounds a twin by compressing its base64 alone at
// streamLevel, within the range of the exact size streamBounds uses
// (streamLo, streamHi). Alone is as in the release: the twin is a part of
// hundreds of KiB, which gzip's 32 KiB window sees apart from the rest
// but for its edges (twinEdge). Compressing the twin alone skips the
// blobs' base64 (whose share bounds already knows within gzipMargin) and
// the JSON writer: about two thirds of the cost of streamBounds.
func measuredTwin(t twin) (lo, hi float64) {
	k := float64(compressedBase64(t.yaml))
	return k*streamLo - twinEdge, k*streamHi + twinEdge
}

// twinEdge is what the JSON around a twin can change of its compressed
// size, either way: matches reaching back into the part before it, a
// gzip header and trailer counted once too often.
const twinEdge = 1 << 10

// twinChunk is how much of a twin is base64-encoded at a time: a multiple
// of 3, so the chunks' encodings add up to the whole's.
const twinChunk = 48 << 10

// twinBufs are reused buffers for the base64 of a twinChunk.
var twinBufs sync.Pool

// compressedBase64 is the length of the base64 of data compressed at
// streamLevel, encoded a chunk at a time into a reused buffer.
func compressedBase64(data []byte) int64 {
	bp, _ := twinBufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, base64.StdEncoding.EncodedLen(twinChunk))
		bp = &b
	}
	defer twinBufs.Put(bp)
	zw, _ := streamWriters.Get().(*kgzip.Writer)
	if zw == nil {
		zw, _ = kgzip.NewWriterLevel(io.Discard, streamLevel)
	}
	defer streamWriters.Put(zw)
	cw := &countWriter{}
	zw.Reset(cw)
	for off := 0; off < len(data); off += twinChunk {
		p := data[off:min(len(data), off+twinChunk)]
		n := base64.StdEncoding.EncodedLen(len(p))
		base64.StdEncoding.Encode((*bp)[:n], p)
		_, _ = zw.Write((*bp)[:n]) // a countWriter does not fail
	}
	_ = zw.Close()
	return cw.n
}
