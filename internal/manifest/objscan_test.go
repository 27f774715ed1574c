package manifest

import (
	"strings"
	"testing"
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
	})
}
