package remote

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// FuzzFirstDifference: the excerpt finder never panics, finds no
// difference exactly when the blob inflates to the YAML, and otherwise
// points at the first differing byte and its line.
func FuzzFirstDifference(f *testing.F) {
	f.Add([]byte("a: 1\nb: 2\n"), []byte("a: 1\nb: 3\n"))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, yml, data []byte) {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(data)
		w.Close()
		d := firstDifference(yml, b.Bytes(), 1<<20)
		if (d == nil) != bytes.Equal(yml, data) {
			t.Fatalf("diff %+v for equal=%v", d, bytes.Equal(yml, data))
		}
		if d == nil {
			return
		}
		off := 0
		for off < len(yml) && off < len(data) && yml[off] == data[off] {
			off++
		}
		if d.Offset != int64(off) || d.Line != 1+bytes.Count(yml[:off], []byte{'\n'}) || d.Excerpt == "" {
			t.Fatalf("diff %+v, want offset %d", d, off)
		}
	})
}
