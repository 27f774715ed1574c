package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestHumanEscapesControls: names and texts from the files checked reach
// the terminal with their controls escaped, with colours on or off: no
// ESC, CR, C1 or bidi control is written but the writer's own colours.
func TestHumanEscapesControls(t *testing.T) {
	const evil = "x\x1b[2J\x1b]0;pwned\x07\r\u009b31m\u202eevil"
	r := sample()
	r.Root = "root" + evil
	r.Findings[0].Provider = "CoreProvider/" + evil
	r.Findings[0].Message = "line one " + evil + "\nline two"
	r.Findings[0].Detail = "+" + evil
	r.Findings[0].File = "files/" + evil
	r.Findings[1].Hint = "hint\n" + evil
	r.Findings[2].Waiver.Reason = evil
	r.Packages[0].Path = "packages/" + evil
	r.Packages[0].Providers[0].Name = evil
	r.Findings = append(r.Findings, Finding{Check: "x", Severity: Error, Package: "gone/" + evil, Message: "m"})
	r.Tally()
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteHuman(&buf, r, HumanOptions{Color: color}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		for _, sgr := range []string{ansiReset, ansiBold, ansiDim, ansiRed, ansiGreen, ansiYellow, ansiCyan} {
			out = strings.ReplaceAll(out, sgr, "")
		}
		for _, bad := range []string{"\x1b", "\r", "\x07", "\u009b", "\u202e"} {
			if strings.Contains(out, bad) {
				t.Errorf("color=%v: output holds %q:\n%q", color, bad, out)
			}
		}
		if !strings.Contains(out, `x\x1b[2J\x1b]0;pwned\a\r\u009b31m\u202eevil`) {
			t.Errorf("color=%v: the escaped text is not shown:\n%s", color, out)
		}
		if !strings.Contains(out, "line one") || !strings.Contains(out, "\n          line two\n") {
			t.Errorf("color=%v: a message's own newlines are kept:\n%s", color, out)
		}
	}
	var gh bytes.Buffer
	if err := WriteGitHub(&gh, r); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x1b", "\r", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(gh.String(), bad) {
			t.Errorf("GitHub annotations hold %q:\n%q", bad, gh.String())
		}
	}
	if termSafe("plain text\twith tab") != "plain text\twith tab" {
		t.Error("plain text changed")
	}
}

func FuzzTermSafe(f *testing.F) {
	f.Add("a\x1b[31mb\r\n\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		for _, keep := range []bool{false, true} {
			out := escapeControls(s, keep)
			for _, r := range out {
				if r != '\t' && !(keep && r == '\n') && isTerminalControl(r) {
					t.Fatalf("escapeControls(%q, %v) = %q keeps %U", s, keep, out, r)
				}
			}
		}
	})
}
