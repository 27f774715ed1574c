package patch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestUnapplyRoundTrip applies a diff and undoes it: the result is the
// original bytes, newline at end of file or not.
func TestUnapplyRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		src  string
		diff string
	}{
		{"startup probe", deployment, startupProbeDiff},
		{"at an offset", "# header\n# more\n" + deployment, startupProbeDiff},
		{"two hunks", "a\nb\nc\nd\ne\nf\ng\nh\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -7,2 +7,3 @@\n g\n+G\n h\n"},
		{"two hunks, the first grows the file", "a\nb\nc\nd\ne\nf\ng\nh\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,4 @@\n a\n+a1\n+a2\n b\n@@ -7,2 +9,2 @@\n g\n-h\n+H\n"},
		{"add newline at eof", "x\ny", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n"},
		{"remove newline at eof", "x\ny\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n"},
		{"change the last line, no newline on either side", "x\ny",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n"},
		{"create file", "", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"delete file", "a\nb\n", "--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"pure insertion", "a\nb\n", "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+x\n"},
		{"pure deletion", "a\nx\nb\n", "--- a/f\n+++ b/f\n@@ -2 +1,0 @@\n-x\n"},
		{"crlf", "a\r\nb\r\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := mustParse(t, tt.diff)
			patched, _, err := fd.Apply([]byte(tt.src))
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if string(patched) == tt.src {
				t.Fatalf("the diff changed nothing; the test would prove nothing")
			}
			got, res, err := fd.Unapply(patched)
			if err != nil {
				t.Fatalf("unapply: %v", err)
			}
			if string(got) != tt.src {
				t.Errorf("unapply gave\n%q\nwant the original\n%q", got, tt.src)
			}
			if len(res) != len(fd.Hunks) {
				t.Errorf("%d hunk results, want %d", len(res), len(fd.Hunks))
			}
			// Reverse().Apply is the same thing.
			got2, _, err := fd.Reverse().Apply(patched)
			if err != nil || string(got2) != tt.src {
				t.Errorf("Reverse().Apply: %q, %v", got2, err)
			}
		})
	}
}

func TestReverseSwapsSides(t *testing.T) {
	fd := mustParse(t, "--- a/old\n+++ b/new\n@@ -3,3 +3,4 @@ section\n c\n-d\n+D\n+E\n f\n")
	r := fd.Reverse()
	if r.OldName != "new" || r.NewName != "old" {
		t.Errorf("names %q -> %q, want new -> old", r.OldName, r.NewName)
	}
	h := r.Hunks[0]
	if h.OldStart != 3 || h.OldLines != 4 || h.NewStart != 3 || h.NewLines != 3 {
		t.Errorf("ranges -%d,%d +%d,%d, want -3,4 +3,3", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	}
	want := []Line{{' ', "c\n"}, {'-', "D\n"}, {'-', "E\n"}, {'+', "d\n"}, {' ', "f\n"}}
	if !reflect.DeepEqual(h.Lines, want) {
		t.Errorf("lines %q, want %q", h.Lines, want)
	}
	if h.Header != fd.Hunks[0].Header || h.Line != fd.Hunks[0].Line || r.Line != fd.Line || r.Patch != fd.Patch {
		t.Errorf("reverse lost where the hunk is written: %+v", h)
	}
	if !reflect.DeepEqual(r.Reverse(), fd) {
		t.Errorf("reversing twice does not give the diff back")
	}
	if fd.Hunks[0].Lines[1].Op != '-' {
		t.Errorf("Reverse modified its receiver")
	}
}

func TestPatchReverse(t *testing.T) {
	p, err := Parse("patches/two.diff", []byte(
		"--- a/one\n+++ b/one\n@@ -1 +1 @@\n-a\n+A\n"+
			"--- a/two\n+++ b/two\n@@ -1 +1,2 @@\n b\n+c\n"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"one": "a\n", "two": "b\n"}
	patched := map[string]string{}
	for _, fd := range p.Files {
		out, _, err := fd.Apply([]byte(files[fd.Target()]))
		if err != nil {
			t.Fatal(err)
		}
		patched[fd.Target()] = string(out)
	}
	r := p.Reverse()
	if r.Name != p.Name || len(r.Files) != 2 || r.Files[0].Target() != "two" || r.Files[1].Target() != "one" {
		t.Fatalf("reversed patch %+v: want the file diffs of %s in reverse order", r.Files, p.Name)
	}
	for _, fd := range r.Files {
		out, _, err := fd.Apply([]byte(patched[fd.Target()]))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != files[fd.Target()] {
			t.Errorf("%s: %q, want %q", fd.Target(), out, files[fd.Target()])
		}
	}
}

// TestUnapplyEdited: an edit outside every hunk survives the reversal (the
// result is the original plus the edit); an edit inside a hunk, context or
// added line, makes the reversal fail naming the hunk.
func TestUnapplyEdited(t *testing.T) {
	fd := mustParse(t, startupProbeDiff)
	patched, _, err := fd.Apply([]byte(deployment))
	if err != nil {
		t.Fatal(err)
	}

	outside := strings.Replace(string(patched), "  namespace: capmox-system\n", "  namespace: edited\n", 1)
	got, _, err := fd.Unapply([]byte(outside))
	if err != nil {
		t.Fatalf("edit outside the hunk: %v", err)
	}
	if want := strings.Replace(deployment, "  namespace: capmox-system\n", "  namespace: edited\n", 1); string(got) != want {
		t.Errorf("edit outside the hunk: got\n%s\nwant\n%s", got, want)
	}

	tests := []struct {
		name   string
		src    string
		want   []string
		line   int
		hinted bool
	}{
		{
			name: "context line edited",
			src:  strings.Replace(string(patched), "            port: healthz\n        startupProbe:\n", "            port: 8081\n        startupProbe:\n", 1),
			want: []string{"patch patches/p.diff: files/infrastructure-components.yaml: hunk #1 @@ -13,6 +13,11 @@ spec: does not apply",
				`line 15 is "            port: 8081", the patch expects "            port: healthz"`},
			line: 15,
		},
		{
			name: "added line edited",
			src:  strings.Replace(string(patched), "failureThreshold: 30", "failureThreshold: 60", 1),
			want: []string{"hunk #1", `line 20 is "          failureThreshold: 60", the patch expects "          failureThreshold: 30"`},
			line: 20,
		},
		{
			name:   "patch not applied at all",
			src:    deployment,
			want:   []string{"hunk #1", "seems to hold the text before this hunk"},
			line:   16,
			hinted: true,
		},
		{
			name: "no newline at end of file where the patch has one",
			src:  "x\ny",
			want: []string{`line 2 is "y [no newline at end of file]", the patch expects "z"`},
			line: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := fd
			if strings.HasPrefix(tt.name, "no newline") {
				d = mustParse(t, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n")
			}
			got, _, err := d.Unapply([]byte(tt.src))
			if err == nil {
				t.Fatalf("unapplied an edited file; got %q", got)
			}
			if string(got) != tt.src {
				t.Errorf("source changed on error")
			}
			var ae *ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not an *ApplyError: %v", err, err)
			}
			if ae.Hunk != 1 || ae.Line != tt.line || ae.Header != d.Hunks[0].Header {
				t.Errorf("hunk %d %q line %d, want 1 %q %d", ae.Hunk, ae.Header, ae.Line, d.Hunks[0].Header, tt.line)
			}
			if (ae.Hint != "") != tt.hinted || strings.Contains(ae.Hint, "applied already") {
				t.Errorf("hint %q", ae.Hint)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestUnapplyRoundTripWithDiff: for random edits, `diff -u old new`
// undone on new gives old.
func TestUnapplyRoundTripWithDiff(t *testing.T) {
	withGNUDiffs(t, 2, true, func(iter int, fd *FileDiff, oldText, newText string, out []byte) {
		got, _, err := fd.Unapply([]byte(newText))
		if err != nil {
			t.Fatalf("iter %d: %v\n%s", iter, err, out)
		}
		if string(got) != oldText {
			t.Fatalf("iter %d: undoing the diff does not give the old file\n%s", iter, out)
		}
	})
}
