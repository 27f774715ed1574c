package report

import (
	"fmt"
	"io"
	"strings"
)

// Format is an output format of a report.
type Format string

// Output formats.
const (
	FormatHuman  Format = "human"  // grouped by package, for people
	FormatJSON   Format = "json"   // the stable contract (api/report.schema.json)
	FormatSARIF  Format = "sarif"  // SARIF 2.1.0, for code scanning
	FormatGitHub Format = "github" // GitHub Actions workflow annotations
)

// Formats lists the output formats, default first.
func Formats() []Format { return []Format{FormatHuman, FormatJSON, FormatSARIF, FormatGitHub} }

// ParseFormat checks an output format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, 0, 4)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, strings.Join(names, ", "))
}

// Options tune the writers.
type Options struct {
	Color bool   // human: ANSI colours (only when writing to a terminal)
	Rules []Rule // sarif: the rules (the check catalog)
}

// Write writes r in format f.
func Write(w io.Writer, r *Report, f Format, o Options) error {
	switch f {
	case FormatHuman, "":
		return WriteHuman(w, r, HumanOptions{Color: o.Color})
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatSARIF:
		return WriteSARIF(w, r, o.Rules)
	case FormatGitHub:
		return WriteGitHub(w, r)
	}
	_, err := ParseFormat(string(f))
	return err
}
