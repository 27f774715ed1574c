package remote

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFirstDifference(t *testing.T) {
	yml := "a: 1\nb: 2\nc: 3\nd: 4\n"
	tests := []struct {
		name       string
		blob       string
		line       int
		offset     int64
		wantInDiff []string
	}{
		{"equal", yml, 0, 0, nil},
		{"changed line", "a: 1\nb: 2\nc: 9\nd: 4\n", 3, 13, []string{" a: 1", " b: 2", "-c: 3", "+c: 9"}},
		{"blob shorter", "a: 1\nb: 2\n", 3, 10, []string{"-c: 3", `\ the blob ends here`}},
		{"blob longer", yml + "e: 5\n", 5, int64(len(yml)), []string{`\ the YAML ends here`, "+e: 5"}},
		{"first byte", "z: 1\n", 1, 0, []string{"-a: 1", "+z: 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := firstDifference([]byte(yml), gz(t, tc.blob), 1<<20)
			if tc.wantInDiff == nil {
				if d != nil {
					t.Fatalf("equal content: %+v", d)
				}
				return
			}
			if d == nil || d.Line != tc.line || d.Offset != tc.offset {
				t.Fatalf("diff = %+v, want line %d offset %d", d, tc.line, tc.offset)
			}
			for _, w := range tc.wantInDiff {
				if !strings.Contains(d.Excerpt, w+"\n") {
					t.Errorf("excerpt lacks %q:\n%s", w, d.Excerpt)
				}
			}
		})
	}
	if d := firstDifference([]byte(yml), []byte("not gzip"), 1<<20); d == nil {
		t.Error("not gzip: no difference")
	}
	// The limit stops inflating: a longer blob is cut, not read whole.
	if d := firstDifference([]byte("ab"), gz(t, strings.Repeat("a", 1<<16)), 1); d == nil || d.Offset != 1 {
		t.Errorf("limited: %+v", d)
	}
}
