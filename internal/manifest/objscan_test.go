package manifest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

func TestScanObjects(t *testing.T) {
	tests := []struct {
		name, in string
		count    int
		problem  string // substring; "" = none
	}{
		{"objects", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n# c\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    name: x\n  name: b\nspec:\n  template:\n    metadata:\n      name: y\n", 2, ""},
		{"leading separator and comments", "---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", 1, ""},
		{"json line", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}}` + "\n", 1, ""},
		{"404 body", "Not Found", 0, `the text "Not Found"`},
		{"html", "<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n", 0, "HTML"},
		{"bare scalar", "42\n", 0, `the text "42"`},
		{"empty", "", 0, "no Kubernetes object"},
		{"only comments", "# nothing\n---\n", 0, "no Kubernetes object"},
		{"truncated", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deploy", 1, "document 2 (starting \"apiVersion: apps/v1\") has no metadata.name"},
		{"nested name only", "apiVersion: v1\nkind: X\nmetadata:\n  labels:\n    name: x\n", 0, "has no metadata.name"},
		{"list", "- a\n- b\n", 0, "YAML list"},
		{"url value is not a key", "https://example.com/x\n", 0, "the text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{len(tc.in) + 1, 3} { // whole, and split across writes
				s := &Scanner{}
				for i := 0; i < len(tc.in); i += chunk {
					_, _ = s.Write([]byte(tc.in[i:min(i+chunk, len(tc.in))]))
				}
				o := s.Result()
				if o.Count != tc.count || (tc.problem == "") != (o.Problem == "") || !strings.Contains(o.Problem, tc.problem) {
					t.Errorf("chunk %d: got %+v, want count %d problem %q", chunk, o, tc.count, tc.problem)
				}
			}
		})
	}
}

func FuzzScanObjects(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"))
	f.Add([]byte("Not Found"))
	f.Add([]byte("<html>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o := Scan(b)
		if o.Count == 0 && o.Problem == "" {
			t.Fatal("no object and no problem")
		}
		// Byte by byte (no line is ever whole in one write, so the
		// no-copy path of Write is never taken): the same result.
		s := &Scanner{}
		for i := range b {
			_, _ = s.Write(b[i : i+1])
		}
		if slow := s.Result(); *slow != *o {
			t.Fatalf("written whole: %+v; byte by byte: %+v", *o, *slow)
		}
		// Every line read, none skipped: the same result.
		if lines := scanLines(b); *lines != *o {
			t.Fatalf("written whole: %+v; line by line: %+v", *o, *lines)
		}
	})
}

// scanLines is the scanner without its skips: every line read by
// scanBytes, as Write read them before it skipped quiet lines.
func scanLines(b []byte) *model.Objects {
	s := &Scanner{}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.add(b)
			break
		}
		s.scanBytes(b[:i])
		b = b[i+1:]
	}
	return s.Result()
}

func TestScanSkipsOnlyQuietLines(t *testing.T) {
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a\nspec:\n  versions:\n  - name: v1\n" +
		strings.Repeat("    description: text text text text\n      more: x\n", 40)
	for _, in := range []string{
		crd,
		crd + "kind:\n", // an empty kind at column 0 after a run of indented lines
		crd + "apiVersion: \"\"\n---\n" + crd,
		crd + "\t{\"apiVersion\":\"v1\"}\n",
		crd + "\u00a0{\"kind\":\"v1\"}\n---\nnot an object\n",
		crd + "metadata:\n  name: b\n" + crd,
		crd + "'kind': ''\n",
		crd + "zebra: 1\n...\n" + crd + "--- x\n",
		strings.TrimPrefix(crd, "apiVersion: apiextensions.k8s.io/v1\n") + "  \n\n" + crd,
	} {
		want := scanLines([]byte(in))
		for _, chunk := range []int{len(in) + 1, 1, 7, 64, 100} {
			s := &Scanner{}
			for i := 0; i < len(in); i += chunk {
				_, _ = s.Write([]byte(in[i:min(i+chunk, len(in))]))
			}
			if got := s.Result(); *got != *want {
				t.Errorf("chunk %d: got %+v, want %+v (line by line)", chunk, *got, *want)
			}
		}
	}
}
