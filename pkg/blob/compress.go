package blob

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// Compress writes r to w as one reproducible gzip member at best
// compression: MTIME 0, no file name, comment or extra field, so the same
// input gives the same bytes whatever the time zone, umask or file times.
func Compress(w io.Writer, r io.Reader) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("gzip writer: %w", err)
	}
	// The zero Header is what we want; set it explicitly so the intent is
	// visible and a future default cannot change it.
	zw.Header = gzip.Header{OS: 255}
	if _, err := io.Copy(zw, r); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	return nil
}

// CompressBytes is Compress on a byte slice.
func CompressBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	if err := Compress(&buf, bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
