// Package loadpath says how the verifier's loader takes each chart of a
// tree: settled from its templates, rendered in process or in a render
// child, failing or empty with default values (gentree's monorepo is held
// to the measured tree's answers).
package loadpath

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/render"
)

// Charts loads each chart directory (relative to root) with the
// verifier's loader, as `verifier check` does with its default options, and
// says how it was taken. The program must serve as the render child
// (render.MaybeRunChild in main, rendertest.Main in tests).
func Charts(ctx context.Context, root string, charts []string) (map[string]gentree.ChartPath, error) {
	sb := render.New(nil)
	defer sb.Close()
	out := map[string]gentree.ChartPath{}
	for _, c := range charts {
		rec := &childLog{}
		tree, err := load.Tree(ctx, filepath.Join(root, filepath.FromSlash(c)), load.Options{Sandbox: sb, Logger: slog.New(rec)})
		if err != nil {
			return nil, fmt.Errorf("classify %s: %w", c, err)
		}
		p := gentree.ChartPath{}
		p.Child, p.Why = rec.child()
		switch {
		case len(tree.Packages) > 0:
			p.Took = gentree.TookProvider
		case len(tree.Skipped) == 0:
			return nil, fmt.Errorf("classify %s: neither a package nor skipped", c)
		default:
			r := tree.Skipped[0].Reason
			switch {
			case strings.HasPrefix(r, "no template holds"):
				p.Took = gentree.TookSettled
			case strings.HasPrefix(r, "renders no "):
				p.Took = gentree.TookRendered
			case strings.HasPrefix(r, "renders nothing"):
				p.Took = gentree.TookEmpty
			case strings.HasPrefix(r, "does not render"):
				p.Took = gentree.TookFailing
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
