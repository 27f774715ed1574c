package render

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/pinseal/pinseal/pkg/model"
)

// What the render child and the loader share about a chart: where Helm
// failed, the path of a template's file in the package, and the lines of a
// template's source behind its rendered output.

// PlaceRendered restates problems found in a template's rendered output
// for the template file: the message says the line was of the rendered
// output, the line is the template's (lm, from RenderedLineMap), and a
// problem with no hint says how to see that output.
func PlaceRendered(probs []model.Problem, lm func(int) int, namespace, release, file string) {
	for i := range probs {
		p := &probs[i]
		p.Message = strings.Replace(p.Message, fmt.Sprintf("at line %d", p.Line),
			fmt.Sprintf("at line %d of the rendered output", p.Line), 1)
		p.Line = lm(p.Line)
		if p.Hint == "" {
			p.Hint = fmt.Sprintf("run `helm template -n %s %s .` and look at %s", namespace, release, file)
		}
	}
}

// RenderedLineMap maps lines of a template's rendered output to lines of its
// source: the same line when both read the same there, else the only source
// line that reads like the rendered one, else 0. The rendered text is split
// only when a line is asked for.
func RenderedLineMap(src []byte, rendered string) func(int) int {
	var rl, sl []string
	return func(n int) int {
		if n <= 0 || len(src) == 0 {
			return 0
		}
		if rl == nil {
			rl = strings.Split(rendered, "\n")
			sl = strings.Split(string(src), "\n")
		}
		if n > len(rl) {
			return 0
		}
		want := rl[n-1]
		if strings.TrimSpace(want) == "" {
			return 0
		}
		if n <= len(sl) && sl[n-1] == want {
			return n
		}
		found := 0
		for i, l := range sl {
			if l == want {
				if found != 0 {
					return 0
				}
				found = i + 1
			}
		}
		return found
	}
}

// Where Helm failed with a chart: the steps of loading and rendering it.
const (
	StageLoad         = "load"
	StageDependencies = "dependencies"
	StageValues       = "values"
	StageRender       = "render"
)

// SubchartDirs maps the path Helm gives a subchart's templates
// ("charts/<chart name>") to its directory ("charts/<dir>"), nested too.
func SubchartDirs(files []*loader.BufferedFile) map[string]string {
	dirToHelm := map[string]string{"": ""}
	var dirs []string
	names := map[string]string{}
	for _, f := range files {
		if strings.HasPrefix(f.Name, "charts/") && path.Base(f.Name) == "Chart.yaml" {
			d := path.Dir(f.Name)
			// Helm's own type, read as Helm reads it (sigs.k8s.io/yaml;
			// docs/architecture.md, "YAML libraries", says why only here), bounded.
			name := ChartName(f.Data)
			if name == "" {
				continue
			}
			dirs = append(dirs, d)
			names[d] = name
		}
	}
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") < strings.Count(dirs[j], "/") })
	out := map[string]string{}
	for _, d := range dirs {
		// d is <parent dir>/charts/<dir>.
		parent := strings.TrimSuffix(path.Dir(path.Dir(d)), ".")
		ph, ok := dirToHelm[parent]
		if !ok {
			continue
		}
		h := path.Join(ph, "charts", names[d])
		dirToHelm[d] = h
		out[h] = d
	}
	return out
}

// SubchartPath turns a rendered template path into the file's path in the
// package, through subchart directories whose name differs from the chart's.
func SubchartPath(file string, subdirs map[string]string) string {
	best := ""
	for h := range subdirs {
		if strings.HasPrefix(file, h+"/") && len(h) > len(best) {
			best = h
		}
	}
	if best == "" {
		return file
	}
	return subdirs[best] + strings.TrimPrefix(file, best)
}

// TemplateSources maps each rendered template name to its source text.
func TemplateSources(c *chart.Chart) map[string][]byte {
	out := map[string][]byte{}
	var rec func(c *chart.Chart)
	rec = func(c *chart.Chart) {
		for _, t := range c.Templates {
			if t != nil {
				out[path.Join(c.ChartFullPath(), t.Name)] = t.Data
			}
		}
		for _, d := range c.Dependencies() {
			rec(d)
		}
	}
	rec(c)
	return out
}
