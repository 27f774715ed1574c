package remote

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
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

// TestInspectDiff: Inspect records where the blob's content first differs
// from the YAML layer (blob.FirstDifference), and nothing when they agree
// or the blob does not inflate (blob-corrupt says why).
func TestInspectDiff(t *testing.T) {
	yml := "a: 1\nb: 2\nc: 3\nd: 4\n"
	tests := []struct {
		name       string
		blob       []byte
		line       int
		offset     int64
		wantInDiff []string
	}{
		{"equal", gz(t, yml), 0, 0, nil},
		{"changed line", gz(t, "a: 1\nb: 2\nc: 9\nd: 4\n"), 3, 13, []string{" a: 1", " b: 2", "-c: 3", "+c: 9"}},
		{"blob shorter", gz(t, "a: 1\nb: 2\n"), 3, 10, []string{"-c: 3", `\ the blob ends here`}},
		{"blob longer", gz(t, yml+"e: 5\n"), 5, int64(len(yml)), []string{`\ the YAML ends here`, "+e: 5"}},
		{"first byte", gz(t, "z: 1\n"), 1, 0, []string{"-a: 1", "+z: 1"}},
		{"not gzip", []byte("not gzip"), 0, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &model.Artifact{YAMLTitle: "core-components.yaml"}
			Inspect(a, &artifact.Pulled{Blob: tc.blob, Files: map[string][]byte{a.YAMLTitle: []byte(yml)}}, "v1.0.0", 1<<20)
			d := a.Content.Diff
			if tc.wantInDiff == nil {
				if d != nil {
					t.Fatalf("no difference expected: %+v", d)
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
}
