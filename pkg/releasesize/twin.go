package releasesize

import (
	"encoding/base64"
	"io"
	"sort"
	"sync"

	kgzip "github.com/klauspost/compress/gzip"
)

// measuredTwin bounds a twin by compressing its base64 alone at
// twinLevel, within the range of the exact size that level gives
// (twinStreamLo, twinStreamHi). Alone is about as in the release: from inside a
// twin of hundreds of KiB gzip's 32 KiB window sees little of the rest
// (its edges: twinEdge), and a twin shorter than windowPart counts on the
// upper side only, where what it shares with the parts before it only
// makes it smaller. Compressing the twin alone skips the
// blobs' base64 (whose share bounds already knows within gzipMargin) and
// the JSON writer: about half the cost of streamBounds.
func measuredTwin(t twin) (lo, hi float64) {
	k := float64(compressedBase64(t.yaml))
	return k*twinStreamLo - twinEdge, k*twinStreamHi + twinEdge
}

// twinLevel (klauspost's) and the range of the exact size in multiples
// of what it gives: on the base64 of YAML, 2–4 % larger than the exact
// encoding; on incompressible parts klauspost's block coding can come
// out a little smaller. It costs half of what the standard library's
// level 6 (streamBounds) does on the same text.
const (
	twinLevel    = 7
	twinStreamLo = 1 / 1.06
	twinStreamHi = 1.02
)

// twinEdge is what the JSON around a twin can change of its compressed
// size, either way: matches reaching back into the part before it, a
// gzip header and trailer counted once too often.
const twinEdge = 1 << 10

// twinChunk is how much of a twin is base64-encoded at a time: a multiple
// of 3, so the chunks' encodings add up to the whole's.
const twinChunk = 48 << 10

// twinBufs are reused buffers for the base64 of a twinChunk.
var twinBufs sync.Pool

// twinWriters are reused gzip writers at twinLevel.
var twinWriters = newWriters(func() *kgzip.Writer { zw, _ := kgzip.NewWriterLevel(io.Discard, twinLevel); return zw })

// compressedBase64 is the length of the base64 of data compressed at
// twinLevel, encoded a chunk at a time into a reused buffer.
func compressedBase64(data []byte) int64 {
	bp, _ := twinBufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, base64.StdEncoding.EncodedLen(twinChunk))
		bp = &b
	}
	defer twinBufs.Put(bp)
	zw := twinWriters.get()
	defer twinWriters.put(zw)
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

// measureTwins narrows [lo, hi] (the bounds of p with its twins by
// ratioTwin) by measuring the twins (measuredTwin), the smallest first
// (a second provider's YAML costs little and may be enough), until no
// line of the check lies between; decided says whether none does.
func (p *releaseParts) measureTwins(lo, hi int64) (int64, int64, bool) {
	order := make([]int, len(p.twins))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(p.twins[order[a]].yaml) < len(p.twins[order[b]].yaml) })
	measured := make([]*[2]float64, len(p.twins))
	tb := func(i int) (float64, float64) {
		if m := measured[i]; m != nil {
			return m[0], m[1]
		}
		return ratioTwin(p.twins[i])
	}
	for _, i := range order {
		l, h := measuredTwin(p.twins[i])
		measured[i] = &[2]float64{l, h}
		p.measured += len(p.twins[i].yaml)
		tlo, thi := p.boundsBy(tb)
		lo, hi = max(lo, tlo), min(hi, thi)
		if !straddles(lo, hi) {
			return lo, hi, true
		}
	}
	return lo, hi, false
}

// isGzip reports whether b starts with gzip's magic bytes.
func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }
