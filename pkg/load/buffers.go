package load

import (
	"io"
	"math/bits"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/pkg/render"
)

// Read buffers of large chart files (a vendored manifest of megabytes),
// reused from one package to the next: allocating and zeroing a fresh
// megabyte for every package cost more than reading it.
//
// Only what collectChart reads into a package's mem goes back, and only
// once loadPackage is done with the package: nothing a package's model
// holds points into a chart file's bytes (hashes, sizes and objects
// parsed from rendered text are copies). Templates and the files Helm's
// loader parses are never pooled, whatever their size.

const (
	pooledMin = 256 << 10 // smaller files are read into fresh memory
	pooledMax = 64 << 20  // larger ones too: rare, and not worth keeping
)

// bufferPools holds, by size class, buffers of exactly the class's
// capacity.
var bufferPools [4*bits.UintSize + 5]sync.Pool

// sizeClass is the class of a buffer that holds n (> 1) bytes and its
// capacity: four classes between two powers of two, so a buffer is at
// most a quarter larger than the file it was made for.
func sizeClass(n int) (class, capacity int) {
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e
	base := 1 << (e - 1)
	step := max(base/4, 1)
	q := (n - base + step - 1) / step // 1..4
	return 4*e + q, base + q*step
}

// readBuffer returns an empty buffer able to hold n bytes without
// growing: pooled for sizes between pooledMin and pooledMax.
func readBuffer(n int) []byte {
	if n < pooledMin || n > pooledMax {
		return make([]byte, 0, n)
	}
	c, size := sizeClass(n)
	if b, ok := bufferPools[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, size)
}

// releaseBuffers gives the pooled buffers of a package's chart files back
// (see above). mem must not be used after.
func releaseBuffers(mem map[string][]byte) {
	for name, b := range mem {
		if cap(b) < pooledMin || cap(b) > pooledMax || !pooledFile(name) {
			continue
		}
		c, size := sizeClass(cap(b))
		if size != cap(b) {
			continue // not a pooled buffer (a file that grew)
		}
		b = b[:0]
		bufferPools[c].Put(&b)
	}
}

// pooledFile tells whether a chart file's buffer may be pooled: not a
// template, not a file Helm's loader itself parses.
func pooledFile(name string) bool {
	return !strings.HasPrefix(name, "templates/") && !strings.Contains(name, "/templates/") && !render.ReadByLoader(name)
}

// readSized reads r to its end, expecting size bytes (a file's size when
// it was listed): into a buffer from readBuffer, grown only when the file
// grew since.
func readSized(r io.Reader, size int64) ([]byte, error) {
	buf := readBuffer(int(size))[:size]
	n, err := io.ReadFull(r, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return buf[:n], nil // it shrank
	case err != nil:
		return nil, err
	}
	var more [1]byte
	if m, _ := r.Read(more[:]); m == 0 {
		return buf, nil // the usual case: exactly size bytes
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return append(append(buf, more[0]), rest...), nil
}
