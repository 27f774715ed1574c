package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// HumanOptions tune the human-readable writer.
type HumanOptions struct {
	// Color adds ANSI colours; set it only when writing to a terminal.
	Color bool
}

// ANSI SGR sequences.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

type painter bool

func (p painter) paint(code, s string) string {
	if !p || s == "" {
		return s
	}
	return code + s + ansiReset
}

// label is the severity column of a finding.
func label(f Finding) (text, code string) {
	switch {
	case f.Waiver != nil:
		return "waived", ansiCyan
	case f.Severity == Error:
		return "error", ansiRed
	case f.Severity == Warning:
		return "warning", ansiYellow
	}
	return string(f.Severity), ""
}

// WriteHuman writes the report for people: findings grouped by package
// (packages in path order, each with its providers), then a summary. What
// came from the files checked is shown with its terminal controls escaped
// (termSafe).
func WriteHuman(w io.Writer, r *Report, o HumanOptions) error {
	r = r.normalized()
	p := painter(o.Color)
	bw := bufio.NewWriter(w)

	byPkg := map[string][]Finding{}
	for _, f := range r.Findings {
		byPkg[f.Package] = append(byPkg[f.Package], f)
	}
	known := map[string]bool{}
	for _, pkg := range r.Packages {
		known[pkg.Path] = true
		fs := byPkg[pkg.Path]
		mark := p.paint(ansiGreen, "ok  ")
		if worst(fs) == Error {
			mark = p.paint(ansiRed, "FAIL")
		} else if len(fs) > 0 {
			mark = p.paint(ansiYellow, "warn")
		}
		fmt.Fprintf(bw, "%s %s%s\n", mark, p.paint(ansiBold, termSafe(pkg.Path)), p.paint(ansiDim, termSafe(pkgInfo(pkg))))
		if !compactInfo(pkg) {
			for _, pr := range pkg.Providers {
				fmt.Fprintf(bw, "     %s\n", p.paint(ansiDim, termSafe(providerLine(pr))))
			}
		}
		writeFindings(bw, p, fs)
	}
	// Findings for packages the report does not list (e.g. an expired
	// waiver naming a package that is gone).
	var others []string
	for path := range byPkg {
		if !known[path] {
			others = append(others, path)
		}
	}
	slices.Sort(others)
	for _, path := range others {
		fs := byPkg[path]
		mark := p.paint(ansiYellow, "warn")
		if worst(fs) == Error {
			mark = p.paint(ansiRed, "FAIL")
		}
		fmt.Fprintf(bw, "%s %s\n", mark, p.paint(ansiBold, termSafe(path)))
		writeFindings(bw, p, fs)
	}

	s := r.Summary
	verdict := p.paint(ansiGreen+ansiBold, "PASSED")
	if !s.Passed {
		verdict = p.paint(ansiRed+ansiBold, "FAILED")
	} else if s.Packages == 0 {
		// Warnings outside every package, and no package: no gate passes on that.
		verdict = p.paint(ansiYellow+ansiBold, "NOTHING CHECKED")
	}
	what := "checked " + plural(s.Packages, "package") + ", " + plural(s.Providers, "provider")
	if r.Root != "" {
		what += " under " + termSafe(r.Root)
	}
	fmt.Fprintf(bw, "\n%s: %s: %s, %s, %d waived\n", verdict, what,
		plural(s.Errors, "error"), plural(s.Warnings, "warning"), s.Waived)
	if c := s.Sources; c != nil {
		fmt.Fprintln(bw, sourcesLine(s.Providers, c))
	}
	if n := len(r.Skipped); n > 0 {
		fmt.Fprintf(bw, "%s\n", p.paint(ansiDim, fmt.Sprintf("skipped %s that %s not provider packages or excluded (the JSON report lists each with the reason)", plural(n, "chart"), map[bool]string{true: "is", false: "are"}[n == 1])))
	}
	return bw.Flush()
}

// compactProviders is the most providers a package header lists on its
// own line; a package with more, or with providers in more than one
// namespace, lists one provider a line below a header that counts them.
const compactProviders = 4

// compactInfo reports whether the package's providers fit its header line:
// a few, all in the package's namespace.
func compactInfo(pkg PackageSummary) bool {
	if len(pkg.Providers) > compactProviders {
		return false
	}
	for _, pr := range pkg.Providers {
		if pr.Namespace != "" && pr.Namespace != pkg.Namespace {
			return false
		}
	}
	return true
}

// pkgInfo is the rest of a package's header line: its namespace and
// providers, or, when they do not fit (compactInfo), how many providers in
// how many namespaces.
func pkgInfo(pkg PackageSummary) string {
	var parts []string
	if !compactInfo(pkg) {
		ns := map[string]bool{}
		for _, pr := range pkg.Providers {
			ns[cmp.Or(pr.Namespace, pkg.Namespace)] = true
		}
		return fmt.Sprintf("  (%s in %s)", plural(len(pkg.Providers), "provider"), plural(len(ns), "namespace"))
	}
	if pkg.Namespace != "" {
		parts = append(parts, "namespace "+pkg.Namespace)
	}
	for _, pr := range pkg.Providers {
		parts = append(parts, providerWords(pr))
	}
	if len(parts) == 0 {
		return ""
	}
	return "  (" + strings.Join(parts, "; ") + ")"
}

// providerWords is a provider in a few words: Kind/name, version, source,
// and the CAPIProvider it is written as.
func providerWords(pr ProviderSummary) string {
	s := pr.Kind + "/" + pr.Name
	if pr.Object != "" {
		s = pr.Object + " as " + s
	}
	if pr.Version != "" {
		s += " " + pr.Version
	}
	if src := pr.Source; src != nil {
		s += " [" + sourceWords(src) + "]"
	}
	return s
}

// providerLine is one provider of a package listed below its header: its
// words, namespace and file.
func providerLine(pr ProviderSummary) string {
	s := providerWords(pr)
	if pr.Namespace != "" {
		s += " in namespace " + pr.Namespace
	}
	if pr.File != "" {
		s += " (" + pr.File + ")"
	}
	return s
}

// sourceWords is a provider's source in a few words: "vendored, pinned",
// "default, fetched at install time", "oci HOST, not verified".
func sourceWords(src *Source) string {
	w := src.Kind
	if src.Kind == SourceOCI && src.Registry != "" {
		w += " " + src.Registry
	}
	switch {
	case src.Pinned && src.Kind == SourceOCI:
		return w + ", verified"
	case src.Pinned:
		return w + ", pinned"
	case src.Kind == SourceVendored:
		return w + ", not pinned"
	case src.Kind == SourceOCI:
		return w + ", not verified"
	}
	return w + ", fetched at install time"
}

// sourcesLine counts providers by source: "13 providers: 0 pinned, 13
// fetched at install time (13 default)".
func sourcesLine(n int, c *SourceCounts) string {
	line := fmt.Sprintf("%s: %d pinned, %d fetched at install time", plural(n, "provider"), c.Pinned, c.Fetched)
	if c.Unpinned > 0 {
		line += fmt.Sprintf(", %d vendored without a pin", c.Unpinned)
	}
	var by []string
	for _, k := range []struct {
		n    int
		kind string
	}{{c.Vendored, SourceVendored}, {c.OCI, SourceOCI}, {c.URL, SourceURL}, {c.Default, SourceDefault}} {
		if k.n > 0 {
			by = append(by, fmt.Sprintf("%d %s", k.n, k.kind))
		}
	}
	if len(by) > 0 {
		line += " (" + strings.Join(by, ", ") + ")"
	}
	return line
}

func writeFindings(w io.Writer, p painter, fs []Finding) {
	for _, f := range fs {
		text, code := label(f)
		head := fmt.Sprintf("  %s %s", p.paint(code, fmt.Sprintf("%-7s", text)), p.paint(ansiBold, termSafe(f.Check)))
		if f.Provider != "" {
			head += " " + termSafe(f.Provider)
		}
		if loc := location(f); loc != "" {
			head += "  " + p.paint(ansiDim, termSafe(loc))
		}
		fmt.Fprintln(w, head)
		for _, line := range strings.Split(termSafeLines(f.Message), "\n") {
			fmt.Fprintf(w, "          %s\n", line)
		}
		if f.Hint != "" {
			fmt.Fprintf(w, "          %s %s\n", p.paint(ansiCyan, "fix:"), termSafe(f.Hint))
		}
		if f.Waiver != nil {
			fmt.Fprintf(w, "          %s %s (until %s)\n", p.paint(ansiCyan, "waived:"), termSafe(f.Waiver.Reason), termSafe(f.Waiver.Expires))
		}
		if f.Detail != "" {
			for _, line := range strings.Split(termSafeLines(strings.TrimRight(f.Detail, "\n")), "\n") {
				fmt.Fprintf(w, "          %s %s\n", p.paint(ansiDim, "|"), diffColor(p, line))
			}
		}
	}
}

func diffColor(p painter, line string) string {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "@@"):
		return p.paint(ansiDim, line)
	case strings.HasPrefix(line, "-"):
		return p.paint(ansiRed, line)
	case strings.HasPrefix(line, "+"):
		return p.paint(ansiGreen, line)
	}
	return line
}

// location renders file:line.
func location(f Finding) string {
	if f.File == "" {
		return ""
	}
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

// worst is the highest unwaived severity of fs ("" when none).
func worst(fs []Finding) Severity {
	var w Severity
	for _, f := range fs {
		if f.Waiver != nil {
			continue
		}
		if f.Severity == Error {
			return Error
		}
		if f.Severity == Warning {
			w = Warning
		}
	}
	return w
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
