package patch

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that what it accepts is
// consistent (hunk bodies match their header counts), and that each hunk
// applies to its own old side, giving its new side. Seeds: the f.Add calls
// below and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(startupProbeDiff))
	f.Add([]byte("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n"))
	f.Add([]byte("--- /dev/null\n+++ b/new\n@@ -0,0 +1,2 @@\n+a\n+b\n"))
	f.Add([]byte("--- x.orig\t2024-01-01\n+++ x\t2024-01-02\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.diff", data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			return
		}
		if len(p.Files) == 0 {
			t.Fatal("no error and no file diffs")
		}
		for _, fd := range p.Files {
			for _, h := range fd.Hunks {
				old, neu := h.sides()
				if len(old) != h.OldLines || len(neu) != h.NewLines {
					t.Fatalf("hunk %s: %d/%d lines, header says %d/%d", h.Header, len(old), len(neu), h.OldLines, h.NewLines)
				}
				single := &FileDiff{Patch: fd.Patch, OldName: fd.OldName, NewName: fd.NewName,
					Hunks: []*Hunk{{OldStart: 1, OldLines: h.OldLines, NewStart: 1, NewLines: h.NewLines, Header: h.Header, Lines: h.Lines}}}
				src := strings.Join(old, "")
				got, _, err := single.Apply([]byte(src))
				if err != nil {
					var ae *ApplyError
					if !errors.As(err, &ae) {
						t.Fatalf("apply error %T is not an *ApplyError", err)
					}
					if ae.Cause == "" {
						// Only a misplaced no-newline marker may fail here.
						t.Fatalf("hunk does not apply to its own old side: %v", err)
					}
					continue
				}
				if want := strings.Join(neu, ""); string(got) != want {
					t.Fatalf("hunk %s: applied to its old side gives %q, want %q", h.Header, got, want)
				}
			}
		}
	})
}
