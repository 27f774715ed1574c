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
func (l *scanner) fastPath(files []*loader.BufferedFile) (ok bool, why string) {
	lim := l.opts.Render
	switch {
	case lim.NoFastPath:
		return false, "the fast path is off"
	case !render.Available(lim):
		return false, "no render children"
	}
	return render.FastCandidate(files)
}

// needRenderFor starts the render children for a chart about to render,
// unless it may take the fast path (then they start only if it is not
// proven after all: renderChart).
func (l *scanner) needRenderFor(files []*loader.BufferedFile) {
	if ok, _ := l.fastPath(files); !ok {
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
// Which way each chart went is logged at debug level ("chart renders in a
// child", with why): benchmark trees are held to a real tree's count.
func (l *scanner) renderFast(ctx context.Context, files []*loader.BufferedFile, values map[string]any, release, namespace string) (chrt *chart.Chart, out *render.Rendering, name string, ok bool) {
	chrt, out, name, why := l.renderFastWhy(ctx, files, values, release, namespace)
	if why != "" {
		l.opts.Logger.Debug("chart renders in a child", "chart", chartName(chrt, release), "why", why)
		return nil, nil, "", false
	}
	return chrt, out, name, true
}

// renderFastWhy is renderFast, with why it did not render: "" when it did.
func (l *scanner) renderFastWhy(ctx context.Context, files []*loader.BufferedFile, values map[string]any, release, namespace string) (*chart.Chart, *render.Rendering, string, string) {
	if ok, why := l.fastPath(files); !ok {
		return nil, nil, "", why
	}
	// Measured before anything decodes them: CheckChartFiles and Helm's
	// loader decode them whole.
	if ok, _ := render.CheckLoaderFiles(files); !ok {
		return nil, nil, "", "a file Helm's loader decodes is over the fast path's bound"
	}
	if b := render.CheckChartFiles(files, func(string) {}); b != nil {
		return nil, nil, "", "a parse bound"
	}
	// The user's values as the child gets them: through JSON (numbers
	// become float64 and print the same).
	user := map[string]any{}
	if len(values) > 0 {
		b, err := json.Marshal(values)
		if err != nil || json.Unmarshal(b, &user) != nil {
			return nil, nil, "", "the values do not go through JSON"
		}
	}
	chrt, vals, name, probs := l.loadChart(files, user, release, namespace, true)
	if chrt == nil || len(probs) > 0 {
		return nil, nil, "", "Helm does not load it or compose its values"
	}
	if p := render.Bounded(chrt, vals, l.opts.Render); !p.OK {
		return chrt, nil, "", p.Why
	}
	out, ok := l.sandbox.RenderProven(ctx, chrt, vals, files, name, namespace, l.opts.Render)
	if !ok {
		return chrt, nil, "", "the proven render failed"
	}
	return chrt, out, name, ""
}

// chartName is the loaded chart's name, else the release's.
func chartName(chrt *chart.Chart, release string) string {
	if chrt != nil {
		return chrt.Name()
	}
	return release
}
