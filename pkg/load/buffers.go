package load

import (
	"io"
	"math/bits"
	"strings"
	"sync"
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

// bufferPools holds, by size class (a power of two), buffers of exactly
// that capacity.
var bufferPools [bits.UintSize]sync.Pool

// sizeClass is the class of a buffer that holds n bytes: the exponent of
// the smallest power of two >= n.
func sizeClass(n int) int { return bits.Len(uint(n - 1)) }

// readBuffer returns an empty buffer able to hold n bytes without
// growing: pooled for sizes between pooledMin and pooledMax.
func readBuffer(n int) []byte {
	if n < pooledMin || n > pooledMax {
		return make([]byte, 0, n)
	}
	c := sizeClass(n)
	if b, ok := bufferPools[c].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<c)
}

// releaseBuffers gives the pooled buffers of a package's chart files back
// (see above). mem must not be used after.
func releaseBuffers(mem map[string][]byte) {
	for name, b := range mem {
		c := cap(b)
		if c < pooledMin || c > pooledMax || c&(c-1) != 0 || !pooledFile(name) {
			continue
		}
		b = b[:0]
		bufferPools[sizeClass(c)].Put(&b)
	}
}

// pooledFile tells whether a chart file's buffer may be pooled: not a
// template, not a file Helm's loader itself parses.
func pooledFile(name string) bool {
	return !strings.HasPrefix(name, "templates/") && !strings.Contains(name, "/templates/") && !chartLoaderFiles[name]
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
