package gentree

import (
	"fmt"
	"strings"
)

// MeasuredRow is c and p as a row of the measured table (measuredOthers),
// with the certificates and bcrypt hashes its render made.
func MeasuredRow(c ChartStats, p ChartPath, certs, hashes int) string {
	child := ""
	if p.Child {
		child = WhyKind(p.Why)
	}
	return fmt.Sprintf("{%q, %s, %q, %q, %d, %d, %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %s, %d, %d, %d, %d, %d, %d},",
		c.Path, tookName(p.Took), child, p.Failure, c.Files, c.Bytes, c.Values, c.Schema,
		c.Templates, c.TemplateBytes, goConstruct(c.Uses),
		c.Subcharts, c.SubFiles, c.SubBytes, c.SubTemplates, c.SubTemplateBytes, goConstruct(c.SubUses),
		c.CRDFiles, c.CRDBytes, c.Actions, c.SubActions, certs, hashes)
}

func tookName(t Took) string {
	return "Took" + strings.ToUpper(string(t[:1])) + string(t[1:])
}

// goConstruct is c as a Go expression.
func goConstruct(c Construct) string {
	var names []string
	for _, k := range constructs {
		if c&k.c != 0 {
			names = append(names, k.goID)
		}
	}
	if len(names) == 0 {
		return "0"
	}
	return strings.Join(names, "|")
}

// Summarize is the statistics of a tree's charts docs/performance.md
// shows: counts, distributions per top-level chart, and how the verifier
// took them.
func Summarize(charts []ChartStats, took map[string]ChartPath) string {
	var b strings.Builder
	subs, with := 0, 0
	for _, c := range charts {
		subs += c.Subcharts
		if c.Subcharts > 0 {
			with++
		}
	}
	fmt.Fprintf(&b, "charts (top-level): %d (%d)\n", len(charts)+subs, len(charts))
	fmt.Fprintf(&b, "with subcharts (subcharts): %d (%d)\n", with, subs)
	fmt.Fprintf(&b, "bytes per chart: median, p90, max, sum: %s\n", Distribute(charts, func(c ChartStats) int { return c.Bytes }))
	d := Distribute(charts, func(c ChartStats) int { return c.Files })
	fmt.Fprintf(&b, "files per chart: median, sum: %d; %d\n", d.Median, d.Sum)
	d = Distribute(charts, func(c ChartStats) int { return c.Templates })
	fmt.Fprintf(&b, "templates per chart: median, p90, max, sum: %s\n", d)
	d = Distribute(charts, func(c ChartStats) int { return c.TemplateBytes })
	fmt.Fprintf(&b, "template bytes per chart: median, p90, max: %d; %d; %d\n", d.Median, d.P90, d.Max)
	d = Distribute(charts, func(c ChartStats) int { return c.SubTemplates })
	fmt.Fprintf(&b, "subchart templates: sum %d, bytes %d\n", d.Sum, Distribute(charts, func(c ChartStats) int { return c.SubTemplateBytes }).Sum)
	fmt.Fprintf(&b, "template actions: %d, in subcharts %d\n", Distribute(charts, func(c ChartStats) int { return c.Actions }).Sum, Distribute(charts, func(c ChartStats) int { return c.SubActions }).Sum)
	if took != nil {
		n := map[Took]int{}
		child, failing := 0, 0
		for _, p := range took {
			n[p.Took]++
			if p.Child {
				child++
			}
			if p.Took == TookFailing || p.Took == TookEmpty {
				failing++
			}
		}
		fmt.Fprintf(&b, "providers %d; settled from templates %d / rendered %d (%d failing or empty); in a render child %d\n",
			n[TookProvider], n[TookSettled], n[TookRendered]+n[TookFailing]+n[TookEmpty], failing, child)
	}
	return b.String()
}
