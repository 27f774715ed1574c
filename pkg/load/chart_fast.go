package load

import (
	"context"
	"encoding/json"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/pinseal/pinseal/pkg/render"
)

// fastPath tells whether the chart of files may render in this process
// (render.FastCandidate; Bounded decides once it is loaded): render
// children are available and wanted, and the files rule nothing out.
func (l *scanner) fastPath(files []*loader.BufferedFile) bool {
	lim := l.opts.Render
	if lim.NoFastPath || !render.Available(lim) {
		return false
	}
	ok, _ := render.FastCandidate(files)
	return ok
}

// needRenderFor starts the render children for a chart about to render,
// unless it may take the fast path (then they start only if it is not
// proven after all: renderChart).
func (l *scanner) needRenderFor(files []*loader.BufferedFile) {
	if !l.fastPath(files) {
		l.needRender()
	}
}

// renderFast renders the chart in this process when its templates are
// proven bounded (render.Bounded), and answers what the render child
// would: the loaded chart, the rendering with the other documents
// blanked, and the release name. ok is false when the chart is not
// proven, or anything goes wrong on the way (a parse bound, Helm failing
// to load, compose values or render): the chart then renders in the
// child, which finds the same and says so as without the fast path.
func (l *scanner) renderFast(ctx context.Context, files []*loader.BufferedFile, values map[string]any, release, namespace string) (chrt *chart.Chart, out *render.Rendering, name string, ok bool) {
	if !l.fastPath(files) {
		return nil, nil, "", false
	}
	// Measured before anything decodes them: CheckChartFiles and Helm's
	// loader decode them whole.
	if ok, _ := render.CheckLoaderFiles(files); !ok {
		return nil, nil, "", false
	}
	if b := render.CheckChartFiles(files, func(string) {}); b != nil {
		return nil, nil, "", false
	}
	// The user's values as the child gets them: through JSON (numbers
	// become float64 and print the same).
	user := map[string]any{}
	if len(values) > 0 {
		b, err := json.Marshal(values)
		if err != nil || json.Unmarshal(b, &user) != nil {
			return nil, nil, "", false
		}
	}
	chrt, vals, name, probs := l.loadChart(files, user, release, namespace, true)
	if chrt == nil || len(probs) > 0 {
		return nil, nil, "", false
	}
	if p := render.Bounded(chrt, vals, l.opts.Render); !p.OK {
		l.opts.Logger.Debug("chart renders in a child", "chart", chrt.Name(), "why", p.Why)
		return nil, nil, "", false
	}
	out, ok = l.sandbox.RenderProven(ctx, chrt, vals, files, name, namespace, l.opts.Render)
	return chrt, out, name, ok
}
