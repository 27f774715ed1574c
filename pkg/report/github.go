package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// escapeData escapes a workflow command's message.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command's property value.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// WriteGitHub writes the findings as GitHub Actions workflow annotations
// (`::error file=…,line=…,title=…::message`), waived ones as notices, then a
// one-line summary. Terminal controls are escaped as in the human form (a
// workflow log is shown as a terminal would show it).
func WriteGitHub(w io.Writer, r *Report) error {
	r = r.normalized()
	bw := bufio.NewWriter(w)
	for _, f := range r.Findings {
		cmd := "notice"
		switch {
		case f.Waiver != nil:
		case f.Severity == Error:
			cmd = "error"
		case f.Severity == Warning:
			cmd = "warning"
		}
		var props []string
		if f.File != "" {
			props = append(props, "file="+escapeProperty(termSafe(f.File)))
			if f.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Line))
			}
		}
		title := f.Check
		if f.Provider != "" {
			title += " " + f.Provider
		} else if f.Package != "" {
			title += " " + f.Package
		}
		if f.Waiver != nil {
			title += " (waived)"
		}
		props = append(props, "title="+escapeProperty(termSafe(title)))
		msg := f.Message
		if f.Hint != "" {
			msg += "\nWhat to do: " + f.Hint
		}
		if f.Waiver != nil {
			msg += fmt.Sprintf("\nWaived until %s: %s", f.Waiver.Expires, f.Waiver.Reason)
		}
		if f.Detail != "" {
			msg += "\n" + f.Detail
		}
		fmt.Fprintf(bw, "::%s %s::%s\n", cmd, strings.Join(props, ","), escapeData(termSafeLines(msg)))
	}
	s := r.Summary
	verdict := "passed"
	if !s.Passed {
		verdict = "failed"
	}
	fmt.Fprintf(bw, "pinseal: %s: %s, %s: %s, %s, %d waived\n", verdict,
		plural(s.Packages, "package"), plural(s.Providers, "provider"),
		plural(s.Errors, "error"), plural(s.Warnings, "warning"), s.Waived)
	if c := s.Sources; c != nil {
		fmt.Fprintf(bw, "pinseal: %s\n", sourcesLine(s.Providers, c))
	}
	if s.Packages == 0 {
		// Nothing was checked: say why each chart was skipped.
		for _, sk := range r.Skipped {
			fmt.Fprintf(bw, "::notice title=pinseal: skipped %s::%s\n", escapeProperty(sk.Path), escapeData(termSafeLines(sk.Reason)))
		}
	}
	return bw.Flush()
}
