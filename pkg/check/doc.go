package check

// The lists outside Go that name the checks (docs/verifier.md's table, the
// policy default and schema, the report schema) are written from the
// catalog by TestGenerated; it fails while one is stale.
//go:generate go test -count=1 -run ^TestGenerated$ . -update

import (
	"fmt"
	"io"
	"strings"
)

// mdEscape keeps a description's |, < and * literal in a Markdown table.
var mdEscape = strings.NewReplacer("|", `\|`, "<", `\<`, "*", `\*`)

// WriteMarkdown writes the catalog as a Markdown table (ID, default
// severity, whether the tree alone answers it, what must hold): the docs
// of the checks are generated from it, like the SARIF rules.
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| id | default | needs | what must hold |\n|---|---|---|---|\n")
	for _, c := range catalog {
		needs := c.Needs()
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.ID, c.Severity, needs, mdEscape.Replace(c.Description))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Needs says what a check reads besides the tree: "tree" (the tree
// alone), "registry", "registry or base", "base" (verifier check --base),
// "cluster" (a live cluster) or "policy" (waiver-expired).
func (c Check) Needs() string {
	switch {
	case c.ID == WaiverExpired:
		return "policy"
	case c.ID == VersionReused:
		return "registry or base"
	case c.ID == VersionDowngrade:
		return "base"
	case strings.HasPrefix(c.ID, "cluster-"):
		return "cluster"
	case c.Run == nil:
		return "registry"
	}
	return "tree"
}
