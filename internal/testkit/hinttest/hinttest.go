// Package hinttest finds command-line flags in the words of findings.
// Libraries (pkg/) word a finding for every interface that shows it: a
// setting to change is named in words and in report.Finding.Settings, and
// the CLI adds its flag, the service its config key. So a finding made in
// pkg/ that tells the user to pass a flag is a bug; a command line of
// another tool written out to run (`builder push DIR --to PREFIX --key
// cosign.key`, `cosign copy …`) is not.
package hinttest

import (
	"regexp"
	"strings"

	"github.com/pinseal/pinseal/pkg/report"
)

var flagRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_-])(--[a-z][a-z0-9-]*)`)

// Flags are the flags text tells the user to pass: every --flag outside a
// `code span`, and every flag of a code span that runs the verifier itself
// (a hint of the verifier's own library must not spell its CLI).
func Flags(text string) []string {
	var out []string
	for i, part := range strings.Split(text, "`") {
		code := i%2 == 1
		if code && !strings.HasPrefix(strings.TrimSpace(part), "verifier ") {
			continue // another tool's command line
		}
		for _, m := range flagRE.FindAllStringSubmatch(part, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// FindingFlags are the flags the message or hint of f tells the user to
// pass (the detail quotes files, such as manifests with container args,
// and is not the finding's words).
func FindingFlags(f report.Finding) []string {
	return append(Flags(f.Message), Flags(f.Hint)...)
}
