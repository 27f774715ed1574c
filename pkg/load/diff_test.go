package load

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/blob"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + itoa(i) + "\n")
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
			d := diffStreams(strings.NewReader(tc.yaml), strings.NewReader(tc.blob))
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
	d := diffStreams(strings.NewReader(a), strings.NewReader(b))
	if d == nil || d.Line != 1 || d.Offset != 0 {
		t.Fatalf("diff = %+v", d)
	}
	if n := strings.Count(d.Excerpt, "\n"); n > diffMaxLines || len(d.Excerpt) > diffMaxBytes {
		t.Errorf("excerpt: %d lines, %d bytes", n, len(d.Excerpt))
	}
}

func TestInflateReaderBounded(t *testing.T) {
	zero := make([]byte, 4<<20)
	gzb, err := blob.CompressBytes(zero)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, _ := out.ReadFrom(inflateReader(gzb, 1000))
	if n != 1000 {
		t.Errorf("inflated %d bytes, want the limit 1000", n)
	}
	n, _ = out.ReadFrom(inflateReader([]byte("not gzip"), 1000))
	if n != 0 {
		t.Errorf("inflated %d bytes of non-gzip", n)
	}
	n, _ = out.ReadFrom(inflateReader(gzb[:len(gzb)/2], 10<<20))
	if n == 0 || n >= 4<<20 {
		t.Errorf("truncated blob inflated to %d bytes", n)
	}
}

func TestParseMetadata(t *testing.T) {
	for _, tc := range []struct {
		name, in, kind, err string
		series              int
	}{
		{"full", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n", "Metadata", "", 1},
		{"no kind", "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- {major: 0, minor: 7, contract: v1beta1}\n- {major: 0, minor: 8, contract: v1beta2}\n", "", "", 2},
		{"no apiVersion", "releaseSeries:\n- {major: 0, minor: 7, contract: v1beta1}\n", "", "", 1},
		{"empty", "  \n", "", "empty", 0},
		{"comments only", "# nothing\n", "", "empty", 0},
		{"wrong kind", "kind: Other\nreleaseSeries: []\n", "Other", "kind", 0},
		{"wrong apiVersion", "apiVersion: v1\nreleaseSeries: []\n", "", "apiVersion", 0},
		{"no series", "kind: Metadata\n", "Metadata", "no releaseSeries", 0},
		{"series not a list", "releaseSeries: 3\n", "", "not a list", 0},
		{"string major", "releaseSeries:\n- {major: \"1\", minor: 2, contract: v1beta1}\n", "", "not an integer", 0},
		{"negative minor", "releaseSeries:\n- {major: 1, minor: -2, contract: v1beta1}\n", "", "non-negative", 0},
		{"missing contract", "releaseSeries:\n- {major: 1, minor: 2}\n", "", "contract missing", 0},
		{"huge major", "releaseSeries:\n- {major: 99999999999999, minor: 2, contract: v1beta1}\n", "", "non-negative integer", 0},
		{"not yaml", "releaseSeries: [\n", "", "does not parse", 0},
		{"a list", "- a\n", "", "not a mapping", 0},
		{"duplicate", "releaseSeries: []\nreleaseSeries: []\n", "", "duplicate key", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := ParseMetadata([]byte(tc.in))
			if tc.err == "" && md.Err != nil || tc.err != "" && (md.Err == nil || !strings.Contains(md.Err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", md.Err, tc.err)
			}
			if md.Kind != tc.kind || (tc.err == "" && len(md.ReleaseSeries) != tc.series) {
				t.Errorf("metadata = %+v", md)
			}
		})
	}
	md := ParseMetadata([]byte("releaseSeries:\n- {major: 0, minor: 8, contract: v1beta2}\n"))
	if s := md.ReleaseSeries[0]; s.Major != 0 || s.Minor != 8 || s.Contract != "v1beta2" {
		t.Errorf("series = %+v", s)
	}
}
