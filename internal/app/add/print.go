package add

import (
	"fmt"
	"io"
	"strings"
)

// PrintHuman writes res for a reader: the release and why newer ones
// were passed over, the sibling followed, the pins and every file with
// its digest.
func PrintHuman(w io.Writer, res *Result) {
	verb := "added"
	if res.DryRun {
		verb = "would add (dry run, nothing written)"
	}
	fmt.Fprintf(w, "%s %s %s (%s %s, contract %s) at %s\n", verb, res.Provider, res.Release, res.Repo, res.Version, res.Contract, res.Package)
	if res.Core != nil {
		fmt.Fprintf(w, "  core %s %s serves %s\n", res.Core.Provider, res.Core.Version, strings.Join(res.Core.Serves, ", "))
	} else {
		fmt.Fprintln(w, "  no core provider beside it: the contract was not judged")
	}
	for _, p := range res.PassedOver {
		fmt.Fprintf(w, "  passed over %s\n", p.Reason)
	}
	if res.Sibling != "" {
		fmt.Fprintf(w, "  shaped like %s: pins in %s", res.Sibling, res.Pins)
	} else {
		fmt.Fprintf(w, "  no sibling package: the layout of examples/, pins in %s", res.Pins)
	}
	if res.Namespace != "" {
		fmt.Fprintf(w, ", namespace %s", res.Namespace)
	}
	fmt.Fprintf(w, ", selected by %s\n", strings.ReplaceAll(strings.TrimSpace(strings.ReplaceAll(labelLines(res.Selector, ""), ": ", "=")), "\n", ","))
	if len(res.Variables) > 0 {
		fmt.Fprintf(w, "  the provider's Secret (values.yaml configSecret) must give: %s\n", strings.Join(res.Variables, ", "))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	for _, d := range res.Digests {
		fmt.Fprintf(w, "  pinned %s sha256:%s (%s)\n", d.URL, d.SHA256, d.From)
	}
	for _, f := range res.Files {
		fmt.Fprintf(w, "  %s %d bytes sha256:%s\n", f.Path, f.Size, f.SHA256)
	}
}
