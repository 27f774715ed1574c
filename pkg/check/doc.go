package check

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
		needs := "tree"
		switch {
		case c.ID == WaiverExpired:
			needs = "policy"
		case c.ID == VersionReused:
			needs = "registry or base"
		case c.ID == VersionDowngrade:
			needs = "base"
		case strings.HasPrefix(c.ID, "cluster-"):
			needs = "cluster"
		case c.Run == nil:
			needs = "registry"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.ID, c.Severity, needs, mdEscape.Replace(c.Description))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
