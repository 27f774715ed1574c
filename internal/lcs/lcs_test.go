package lcs

import (
	"strings"
	"testing"
)

// script renders an edit script as "<kind><line>" steps, checking that
// the indices name the lines they should.
func script(t *testing.T, a, b []string) string {
	t.Helper()
	var out []string
	for _, e := range Edits(a, b) {
		switch e.Kind {
		case ' ':
			if a[e.A] != b[e.B] {
				t.Fatalf("kept %q of a as %q of b", a[e.A], b[e.B])
			}
			out = append(out, " "+a[e.A])
		case '-':
			out = append(out, "-"+a[e.A])
		case '+':
			out = append(out, "+"+b[e.B])
		default:
			t.Fatalf("kind %q", e.Kind)
		}
	}
	return strings.Join(out, ",")
}

func TestEdits(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"", "", ""},
		{"x y", "x y", " x, y"},
		{"", "x y", "+x,+y"},
		{"x y", "", "-x,-y"},
		{"a b c", "a B c", " a,-b,+B, c"},                  // a changed line: "-" before "+"
		{"a b c d", "a c d e", " a,-b, c, d,+e"},           // keeps the longest common run
		{"a b a b", "b a b a", "-a, b, a, b,+a"},           // ties delete first
		{"k a k b k", "k b k a k", " k,-a,-k, b, k,+a,+k"}, // four common lines, not three
	} {
		a, b := strings.Fields(tc.a), strings.Fields(tc.b)
		if got := script(t, a, b); got != tc.want {
			t.Errorf("Edits(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestEditsRebuild: the kept and inserted lines, in order, are b; the kept
// and deleted ones are a.
func TestEditsRebuild(t *testing.T) {
	a := strings.Fields("apiVersion kind metadata name spec replicas template spec containers image")
	b := strings.Fields("apiVersion kind metadata name labels spec template spec initContainers containers image args")
	var ra, rb []string
	for _, e := range Edits(a, b) {
		if e.Kind != '+' {
			ra = append(ra, a[e.A])
		}
		if e.Kind != '-' {
			rb = append(rb, b[e.B])
		}
	}
	if strings.Join(ra, " ") != strings.Join(a, " ") || strings.Join(rb, " ") != strings.Join(b, " ") {
		t.Errorf("rebuilt %q and %q", ra, rb)
	}
}
