package patch

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: capmox-controller-manager
  namespace: capmox-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7
        livenessProbe:
          httpGet:
            path: /healthz
            port: healthz
        readinessProbe:
          httpGet:
            path: /readyz
            port: healthz
`

const startupProbeDiff = `From: someone
Subject: add a startupProbe

diff --git a/files/infrastructure-components.yaml b/files/infrastructure-components.yaml
index 1111111..2222222 100644
--- a/files/infrastructure-components.yaml
+++ b/files/infrastructure-components.yaml
@@ -13,6 +13,11 @@ spec:
           httpGet:
             path: /healthz
             port: healthz
+        startupProbe:
+          httpGet:
+            path: /healthz
+            port: healthz
+          failureThreshold: 30
         readinessProbe:
           httpGet:
             path: /readyz
`

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantFiles []string // Target() of each file diff
		wantOld   []string
		wantHunks []int
	}{
		{
			name:      "git style with preamble",
			in:        startupProbeDiff,
			wantFiles: []string{"files/infrastructure-components.yaml"},
			wantOld:   []string{"files/infrastructure-components.yaml"},
			wantHunks: []int{1},
		},
		{
			name:      "format-patch signature after the last hunk",
			in:        startupProbeDiff + "-- \n2.43.0\n\n",
			wantFiles: []string{"files/infrastructure-components.yaml"},
			wantOld:   []string{"files/infrastructure-components.yaml"},
			wantHunks: []int{1},
		},
		{
			name: "plain with timestamps",
			in: "--- files/x.yaml.orig\t2024-01-02 03:04:05.000000000 +0000\n" +
				"+++ files/x.yaml\t2024-01-02 03:04:06.000000000 +0000\n" +
				"@@ -1 +1 @@\n-a\n+b\n",
			wantFiles: []string{"files/x.yaml"},
			wantOld:   []string{"files/x.yaml.orig"},
			wantHunks: []int{1},
		},
		{
			name: "several files and hunks",
			in: "--- a/one\n+++ b/one\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n@@ -10 +10,2 @@\n k\n+l\n" +
				"diff --git a/two b/two\n--- a/two\n+++ b/two\n@@ -1 +1 @@\n-p\n+q\n",
			wantFiles: []string{"one", "two"},
			wantOld:   []string{"one", "two"},
			wantHunks: []int{2, 1},
		},
		{
			name:      "new file",
			in:        "--- /dev/null\n+++ b/new.yaml\n@@ -0,0 +1,2 @@\n+a: 1\n+b: 2\n",
			wantFiles: []string{"new.yaml"},
			wantOld:   []string{DevNull},
			wantHunks: []int{1},
		},
		{
			name:      "deleted file",
			in:        "--- a/old.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-a: 1\n",
			wantFiles: []string{"old.yaml"},
			wantOld:   []string{"old.yaml"},
			wantHunks: []int{1},
		},
		{
			name:      "no newline markers",
			in:        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n\\ No newline at end of file\n",
			wantFiles: []string{"f"},
			wantOld:   []string{"f"},
			wantHunks: []int{1},
		},
		{
			name:      "removed line that looks like a header",
			in:        "--- a/f\n+++ b/f\n@@ -1,2 +1,1 @@\n--- x\n+++ y\n-z\n",
			wantFiles: []string{"f"},
			wantOld:   []string{"f"},
			wantHunks: []int{1},
		},
		{
			name:      "empty context line without its space",
			in:        "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n",
			wantFiles: []string{"f"},
			wantOld:   []string{"f"},
			wantHunks: []int{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("x.diff", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Files) != len(tt.wantFiles) {
				t.Fatalf("got %d file diffs, want %d", len(p.Files), len(tt.wantFiles))
			}
			for i, fd := range p.Files {
				if fd.Target() != tt.wantFiles[i] || fd.OldName != tt.wantOld[i] {
					t.Errorf("file %d: target %q old %q, want %q %q", i, fd.Target(), fd.OldName, tt.wantFiles[i], tt.wantOld[i])
				}
				if len(fd.Hunks) != tt.wantHunks[i] {
					t.Errorf("file %d: %d hunks, want %d", i, len(fd.Hunks), tt.wantHunks[i])
				}
				if fd.Patch != "x.diff" {
					t.Errorf("file %d: patch name %q", i, fd.Patch)
				}
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "x.diff:1: no file diff found"},
		{"prose only", "just some text\n", "no file diff found"},
		{"hunk before header", "@@ -1 +1 @@\n-a\n+b\n", `x.diff:1: hunk header "@@ -1 +1 @@" before any ---/+++`},
		{"no hunks", "--- a/f\n+++ b/f\n", "x.diff:1: file diff for f has no @@ hunk"},
		{"bad range", "--- a/f\n+++ b/f\n@@ -x +1 @@\n", `x.diff:3: bad hunk header "@@ -x +1 @@": old range: bad start "x"`},
		{"missing closing", "--- a/f\n+++ b/f\n@@ -1 +1\n", "missing closing @@"},
		{"short hunk", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n", "ends early: 1 old and 1 new lines missing"},
		{"garbage in hunk", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n?b\n", `x.diff:5: hunk @@ -1,2 +1,2 @@ ends early: line "?b"`},
		{"too many lines", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n a\n-b\n", "more lines than its header counts"},
		{"both dev null", "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n", "both sides"},
		{"empty hunk", "--- a/f\n+++ b/f\n@@ -1,0 +1,0 @@\n", "empty hunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.diff", []byte(tt.in))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func mustParse(t *testing.T, s string) *FileDiff {
	t.Helper()
	p, err := Parse("patches/p.diff", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return p.Files[0]
}

func TestApply(t *testing.T) {
	wantPatched := strings.Replace(deployment, "        readinessProbe:\n",
		"        startupProbe:\n          httpGet:\n            path: /healthz\n            port: healthz\n          failureThreshold: 30\n        readinessProbe:\n", 1)
	tests := []struct {
		name       string
		src        string
		diff       string
		want       string
		wantOffset []int
	}{
		{"exact position", deployment, startupProbeDiff, wantPatched, []int{0}},
		{"offset down", "# header\n# more\n" + deployment, startupProbeDiff, "# header\n# more\n" + wantPatched, []int{2}},
		{"offset up", strings.Replace(deployment, "  namespace: capmox-system\n", "", 1), startupProbeDiff,
			strings.Replace(wantPatched, "  namespace: capmox-system\n", "", 1), []int{-1}},
		{"two hunks, offset carried", "a\nb\nc\nd\ne\nf\ng\nh\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -7,2 +7,3 @@\n g\n+G\n h\n",
			"a\nB\nc\nd\ne\nf\ng\nG\nh\n", []int{0, 0}},
		{"add newline at eof", "x\ny", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n",
			"x\ny\n", []int{0}},
		{"remove newline at eof", "x\ny\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n",
			"x\ny", []int{0}},
		{"create file", "", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n", "a\nb\n", []int{0}},
		{"pure insertion", "a\nb\n", "--- a/f\n+++ b/f\n@@ -1,0 +2 @@\n+x\n", "a\nx\nb\n", []int{0}},
		{"crlf kept", "a\r\nb\r\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n", "a\r\nc\r\n", []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := mustParse(t, tt.diff)
			got, res, err := fd.Apply([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
			if len(res) != len(tt.wantOffset) {
				t.Fatalf("results %v", res)
			}
			for i, r := range res {
				if r.Offset != tt.wantOffset[i] {
					t.Errorf("hunk %d offset %d, want %d", r.Hunk, r.Offset, tt.wantOffset[i])
				}
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	patched := mustParse(t, startupProbeDiff)
	alreadyApplied, _, err := patched.Apply([]byte(deployment))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		src  string
		diff string
		want []string
		hunk int
		line int
	}{
		{
			name: "context changed upstream",
			src:  strings.Replace(deployment, "            path: /healthz\n", "            path: /livez\n", 1),
			diff: startupProbeDiff,
			want: []string{
				"patch patches/p.diff: files/infrastructure-components.yaml: hunk #1 @@ -13,6 +13,11 @@ spec: does not apply",
				`line 14 is "            path: /livez", the patch expects "            path: /healthz"`,
			},
			hunk: 1, line: 14,
		},
		{
			name: "already applied",
			src:  string(alreadyApplied),
			diff: startupProbeDiff,
			want: []string{"hunk #1", "seems to be applied already"},
			hunk: 1, line: 16,
		},
		{
			name: "file too short",
			src:  "a\n",
			diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
			want: []string{`expected "b" at line 2 but the file ends at line 1`},
			hunk: 1, line: 2,
		},
		{
			name: "second hunk fails",
			src:  "a\nb\nc\nd\ne\nf\ng\nh\n",
			diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -7,2 +7,2 @@\n g\n-x\n+X\n",
			want: []string{"hunk #2 @@ -7,2 +7,2 @@", `line 8 is "h", the patch expects "x"`},
			hunk: 2, line: 8,
		},
		{
			name: "newline at eof differs",
			src:  "x\ny\n",
			diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n",
			want: []string{`line 2 is "y", the patch expects "y [no newline at end of file]"`},
			hunk: 1, line: 2,
		},
		{
			name: "crlf vs lf",
			src:  "a\r\nb\r\n",
			diff: "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
			want: []string{`line 1 is "a\r", the patch expects "a"`},
			hunk: 1, line: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := mustParse(t, tt.diff)
			got, _, err := fd.Apply([]byte(tt.src))
			if err == nil {
				t.Fatalf("applied; got %q", got)
			}
			if string(got) != tt.src {
				t.Errorf("source changed on error")
			}
			var ae *ApplyError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T is not an *ApplyError: %v", err, err)
			}
			if ae.Hunk != tt.hunk || ae.Line != tt.line {
				t.Errorf("hunk %d line %d, want %d %d (%v)", ae.Hunk, ae.Line, tt.hunk, tt.line, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestRoundTripWithDiff checks Parse+Apply against GNU diff(1): for random
// edits of a manifest, `diff -u` output applied to the old file gives the
// new one. No diff in PATH skips, or fails with PINSEAL_REQUIRE_PEERS=1.
func TestRoundTripWithDiff(t *testing.T) {
	withGNUDiffs(t, 1, false, func(iter int, fd *FileDiff, oldText, newText string, out []byte) {
		got, _, err := fd.Apply([]byte(oldText))
		if err != nil {
			t.Fatalf("iter %d: %v\n%s", iter, err, out)
		}
		if string(got) != newText {
			t.Fatalf("iter %d: result differs from the new file\n%s", iter, out)
		}
	})
}

// withGNUDiffs calls check with 40 random edits of a manifest (seeded)
// as GNU diff -u writes them, parsed: the old and new texts (one of them
// without its last newline at times: the new one, or with bothEnds either)
// and diff's output. It fails when no edit produced a diff, and skips (or
// fails with PINSEAL_REQUIRE_PEERS=1) without diff in PATH.
func withGNUDiffs(t *testing.T, seed int64, bothEnds bool, check func(iter int, fd *FileDiff, oldText, newText string, out []byte)) {
	t.Helper()
	diffBin := testpeer.Binary(t, "diff", "apt-get install diffutils")
	r := rand.New(rand.NewSource(seed))
	base := strings.Split(strings.Repeat(deployment, 5), "\n")
	dir := t.TempDir()
	checked := 0
	for iter := 0; iter < 40; iter++ {
		old := mutate(r, base)
		neu := mutate(r, old)
		oldText := strings.Join(old, "\n")
		newText := strings.Join(neu, "\n")
		switch r.Intn(3) {
		case 0:
			newText = strings.TrimSuffix(newText, "\n")
		case 1:
			if bothEnds {
				oldText = strings.TrimSuffix(oldText, "\n")
			}
		}
		a := filepath.Join(dir, "a.yaml")
		b := filepath.Join(dir, "b.yaml")
		if err := os.WriteFile(a, []byte(oldText), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, []byte(newText), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(diffBin, fmt.Sprintf("-U%d", r.Intn(4)), a, b).Output()
		if err == nil {
			continue // identical
		}
		p, err := Parse("rt.diff", out)
		if err != nil {
			t.Fatalf("iter %d: parse diff output: %v\n%s", iter, err, out)
		}
		check(iter, p.Files[0], oldText, newText, out)
		checked++
	}
	if checked == 0 {
		t.Fatal("no iteration produced a diff")
	}
}

func mutate(r *rand.Rand, lines []string) []string {
	out := append([]string(nil), lines...)
	for n := r.Intn(6) + 1; n > 0; n-- {
		i := r.Intn(len(out))
		switch r.Intn(3) {
		case 0:
			out = append(out[:i], out[i+1:]...)
		case 1:
			out = append(out[:i], append([]string{fmt.Sprintf("  added-%d: %d", n, r.Intn(1000))}, out[i:]...)...)
		default:
			out[i] = out[i] + " # changed"
		}
	}
	return out
}
