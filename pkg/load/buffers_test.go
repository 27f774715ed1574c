package load

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// growing is a reader of a file that grew after it was listed.
type growing struct{ r io.Reader }

func (g growing) Read(p []byte) (int, error) { return g.r.Read(p) }

func TestReadSized(t *testing.T) {
	big := strings.Repeat("x", pooledMin+10)
	for _, tt := range []struct {
		name, data string
		size       int64
	}{
		{"exact", big, int64(len(big))},
		{"small exact", "abc", 3},
		{"shrank", big[:100], int64(len(big))},
		{"grew", big + "tail", int64(len(big))},
		{"grew by one", big + "!", int64(len(big))},
		{"empty", "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readSized(growing{strings.NewReader(tt.data)}, tt.size)
			if err != nil || !bytes.Equal(got, []byte(tt.data)) {
				t.Fatalf("readSized = %d bytes, %v; want the %d bytes read", len(got), err, len(tt.data))
			}
		})
	}
}

// TestReleaseBuffers: a vendored file's buffer goes back to its pool and
// is handed out again; a template's and values.yaml's never are.
func TestReleaseBuffers(t *testing.T) {
	n := pooledMin + 1
	tmpl, values := readBuffer(n)[:n], readBuffer(n)[:n]
	releaseBuffers(map[string][]byte{"templates/big.yaml": tmpl, "values.yaml": values, "charts/sub/templates/t.yaml": tmpl})
	reused := false
	for range 10 { // a sync.Pool may drop what it is given (a GC, the race detector)
		vendored := readBuffer(n)[:n]
		releaseBuffers(map[string][]byte{"files/components.yaml": vendored})
		b := readBuffer(n)[:1]
		if &b[0] == &tmpl[0] || &b[0] == &values[0] {
			t.Fatalf("a template's or values.yaml's buffer was reused")
		}
		reused = reused || &b[0] == &vendored[0]
	}
	if !reused {
		t.Errorf("the vendored file's buffer was never reused")
	}
	for name, want := range map[string]bool{"files/a.yaml": true, "templates/a.yaml": false, "charts/x/templates/a.yaml": false, "Chart.yaml": false, "values.yaml": false, "values.schema.json": false} {
		if got := pooledFile(name); got != want {
			t.Errorf("pooledFile(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSizeClass: a class holds what it is asked for, wastes at most a
// quarter, and a class's capacity is its own class.
func TestSizeClass(t *testing.T) {
	for _, n := range []int{2, 3, 5, 1000, pooledMin, pooledMin + 1, 1 << 20, 1<<20 + 1, 1078331, 5 << 20, pooledMax} {
		c, size := sizeClass(n)
		if size < n || float64(size) > 1.25*float64(n)+1 {
			t.Errorf("sizeClass(%d) = capacity %d", n, size)
		}
		if c2, size2 := sizeClass(size); c2 != c || size2 != size {
			t.Errorf("sizeClass(%d) = %d, %d but sizeClass(%d) = %d, %d", n, c, size, size, c2, size2)
		}
		if c >= len(bufferPools) {
			t.Errorf("sizeClass(%d) = class %d, past the pools", n, c)
		}
	}
}
