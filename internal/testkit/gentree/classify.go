package gentree

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/pkg/load"
	chartrender "github.com/pinseal/pinseal/pkg/render"
)

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
// (failureKind of Helm's error).
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

// ClassifyCharts loads each chart directory (relative to root) with the
// verifier's loader, as `verifier check` does with its default options, and
// says how it was taken. The program must serve as the render child
// (render.MaybeRunChild in main, rendertest.Main in tests).
func ClassifyCharts(ctx context.Context, root string, charts []string) (map[string]ChartPath, error) {
	sb := chartrender.New(nil)
	defer sb.Close()
	out := map[string]ChartPath{}
	for _, c := range charts {
		rec := &childLog{}
		tree, err := load.Tree(ctx, filepath.Join(root, filepath.FromSlash(c)), load.Options{Sandbox: sb, Logger: slog.New(rec)})
		if err != nil {
			return nil, fmt.Errorf("classify %s: %w", c, err)
		}
		p := ChartPath{}
		p.Child, p.Why = rec.child()
		switch {
		case len(tree.Packages) > 0:
			p.Took = TookProvider
		case len(tree.Skipped) == 0:
			return nil, fmt.Errorf("classify %s: neither a package nor skipped", c)
		default:
			r := tree.Skipped[0].Reason
			switch {
			case strings.HasPrefix(r, "no template holds"):
				p.Took = TookSettled
			case strings.HasPrefix(r, "renders no "):
				p.Took = TookRendered
			case strings.HasPrefix(r, "renders nothing"):
				p.Took = TookEmpty
			case strings.HasPrefix(r, "does not render"):
				p.Took = TookFailing
				p.Failure = failureKind(r)
			default:
				return nil, fmt.Errorf("classify %s: skip reason %q not understood", c, r)
			}
		}
		out[c] = p
	}
	return out, nil
}

// failureKind names how a chart fails with its default values, from
// Helm's error: a missing map indexed ("index"), a missing map's field
// ("nil"), a `required` value ("required") or a `fail` ("fail").
func failureKind(reason string) string {
	switch {
	case strings.Contains(reason, "at <index "):
		return "index"
	case strings.Contains(reason, "nil pointer"):
		return "nil"
	case strings.Contains(reason, " is required"):
		return "required"
	default:
		return "fail"
	}
}

// childLog records the loader's "chart renders in a child" debug lines.
type childLog struct {
	mu  sync.Mutex
	why []string
}

func (h *childLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *childLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *childLog) WithGroup(string) slog.Handler            { return h }

func (h *childLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "chart renders in a child" {
		return nil
	}
	why := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "why" {
			why = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	h.why = append(h.why, why)
	h.mu.Unlock()
	return nil
}

func (h *childLog) child() (bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.why) == 0 {
		return false, ""
	}
	return true, h.why[0]
}
