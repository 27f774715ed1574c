package blob

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	return b.String()
}

func TestDiffStreams(t *testing.T) {
	base := numbered(100)
	long := strings.Repeat("x", 100000)
	for _, tc := range []struct {
		name       string
		yaml, blob string
		line       int
		offset     int64
		want       []string // lines of the excerpt, in order
		not        []string
	}{
		{"equal", base, base, 0, 0, nil, nil},
		{"empty", "", "", 0, 0, nil, nil},
		{"changed line", base, strings.Replace(base, "line 50\n", "line fifty\n", 1), 50, int64(len(numbered(49))) + 5,
			[]string{"@@ line 50, byte 388 @@", " line 47", " line 48", " line 49", "-line 50", "+line fifty", " line 51", " line 52"}, []string{" line 53", " line 46"}},
		{"first line", "a\nb\n", "x\nb\n", 1, 0, []string{"-a", "+x", " b"}, nil},
		{"inserted in blob", base, strings.Replace(base, "line 10\n", "line 10\nnew\n", 1), 11, int64(len(numbered(10))),
			[]string{" line 10", "+new", " line 11", " line 12"}, []string{"-"}},
		{"blob cut short", base, base[:200], 0, 200, []string{`\ the blob ends here`}, nil},
		{"yaml cut short", base[:200], base, 0, 200, []string{`\ the YAML ends here`}, nil},
		{"blob empty", "a\n", "", 1, 0, []string{"-a", `\ the blob ends here`}, nil},
		{"no trailing newline", "a\nb", "a\nb\n", 2, 3, []string{"-b", "+b"}, nil},
		{"long line", long + "\nend\n", long + "y\nend\n", 1, 100000, []string{"-…xxx", "+…xxx", " end"}, nil},
		{"binary", "a\n", "\x00\x01\xff\n", 1, 0, []string{`+\x00\x01` + "\uFFFD"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := FirstDifference(strings.NewReader(tc.yaml), strings.NewReader(tc.blob))
			if tc.want == nil && tc.line == 0 && tc.offset == 0 {
				if d != nil {
					t.Fatalf("diff of equal texts: %+v", d)
				}
				return
			}
			if d == nil {
				t.Fatal("no diff")
			}
			if (tc.line != 0 && d.Line != tc.line) || d.Offset != tc.offset {
				t.Errorf("at line %d byte %d, want line %d byte %d", d.Line, d.Offset, tc.line, tc.offset)
			}
			lines := strings.Split(strings.TrimSuffix(d.Excerpt, "\n"), "\n")
			k := 0
			for _, l := range lines {
				if k < len(tc.want) && strings.HasPrefix(l, tc.want[k]) {
					k++
				}
			}
			if k != len(tc.want) {
				t.Errorf("excerpt lacks %q (in order):\n%s", tc.want[k], d.Excerpt)
			}
			for _, n := range tc.not {
				for _, l := range lines[1:] {
					if strings.HasPrefix(l, n) {
						t.Errorf("excerpt has %q:\n%s", n, d.Excerpt)
					}
				}
			}
			if len(lines) > diffMaxLines || len(d.Excerpt) > diffMaxBytes {
				t.Errorf("excerpt too big: %d lines, %d bytes", len(lines), len(d.Excerpt))
			}
		})
	}
}

func TestDiffBounded(t *testing.T) {
	// Completely different texts: the excerpt stays within its caps.
	a := strings.Repeat(strings.Repeat("a", 300)+"\n", 1000)
	b := strings.Repeat(strings.Repeat("b", 300)+"\n", 1000)
	d := FirstDifference(strings.NewReader(a), strings.NewReader(b))
	if d == nil || d.Line != 1 || d.Offset != 0 {
		t.Fatalf("diff = %+v", d)
	}
	if n := strings.Count(d.Excerpt, "\n"); n > diffMaxLines || len(d.Excerpt) > diffMaxBytes {
		t.Errorf("excerpt: %d lines, %d bytes", n, len(d.Excerpt))
	}
}

func TestInflateReaderBounded(t *testing.T) {
	zero := make([]byte, 4<<20)
	gzb, err := CompressBytes(zero)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, _ := out.ReadFrom(Inflated(gzb, 1000))
	if n != 1000 {
		t.Errorf("inflated %d bytes, want the limit 1000", n)
	}
	n, _ = out.ReadFrom(Inflated([]byte("not gzip"), 1000))
	if n != 0 {
		t.Errorf("inflated %d bytes of non-gzip", n)
	}
	n, _ = out.ReadFrom(Inflated(gzb[:len(gzb)/2], 10<<20))
	if n == 0 || n >= 4<<20 {
		t.Errorf("truncated blob inflated to %d bytes", n)
	}
}
