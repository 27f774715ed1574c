package gentree

import "strings"

// Took is how the verifier's loader settled a chart.
type Took string

// The ways a chart is settled, as `verifier check` reports them.
const (
	TookProvider Took = "provider" // a provider package: checked
	TookSettled  Took = "settled"  // its templates show it holds no provider: not rendered
	TookRendered Took = "rendered" // rendered with its default values: no provider in it
	TookFailing  Took = "failing"  // does not render with its default values
	TookEmpty    Took = "empty"    // renders nothing with its default values
)

// ChartPath is how the verifier's loader took one chart: Took, whether it
// rendered in a render child (Child, and Why not in process, as the
// loader's debug log says it), and for a failing chart how it failed
// (from Helm's error: "index" a missing map indexed, "nil" a missing
// map's field read, "required" or "fail").
type ChartPath struct {
	Took    Took
	Child   bool
	Why     string
	Failure string
}

// WhyKind is what kind of reason why says a chart renders in a child:
// "subcharts", "schema" (a values schema), "size" (a template, or the
// templates, over the fast path's caps), "packed" (a packed file) or
// "proof" (a construct the proof of bounded templates does not admit).
func WhyKind(why string) string {
	switch {
	case strings.Contains(why, "has subcharts"):
		return "subcharts"
	case strings.Contains(why, "values schema"):
		return "schema"
	case strings.Contains(why, "packed file"):
		return "packed"
	case strings.Contains(why, " bytes") && strings.Contains(why, " over "), strings.Contains(why, "over") && strings.Contains(why, "templates"):
		return "size"
	default:
		return "proof"
	}
}
