package load

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/internal/yamldoc"
	"github.com/pinseal/pinseal/pkg/model"
)

// markers are byte strings without which a text holds no provider object
// and no components ConfigMap: a chart or manifest file whose text has none
// of them is not rendered or parsed.
var markers = [][]byte{[]byte("operator.cluster.x-k8s.io"), []byte("Provider"), []byte("components")}

func hasMarker(b []byte) bool {
	for _, m := range markers {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

// sourced is a rendered or plain object with where it came from.
type sourced struct {
	*manifest.Object
	File string // slash path relative to the package directory
	// lineMap maps a line of the parsed text to a line of File (nil:
	// identity, for plain manifests); 0 when unknown.
	lineMap func(int) int
}

// fileLine maps a line of the parsed text to a line of the object's file.
func (o sourced) fileLine(line int) int {
	if o.lineMap == nil {
		return line
	}
	return o.lineMap(line)
}

// placeRendered restates problems found in a template's rendered output
// for the template file: the message says the line was of the rendered
// output, the line is the template's (lm, from renderedLineMap), and a
// problem with no hint says how to see that output.
func placeRendered(probs []model.Problem, lm func(int) int, namespace, release, file string) {
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

// renderedLineMap maps lines of a template's rendered output to lines of its
// source: the same line when both read the same there, else the only source
// line that reads like the rendered one, else 0. The rendered text is split
// only when a line is asked for.
func renderedLineMap(src []byte, rendered string) func(int) int {
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

// keyedLineMap is lm, and for a rendered "key: value" line lm cannot place
// (its value was templated) the source line with that key at that
// indentation: the first below start (the line of the object's
// metadata.name, when known) and above the next document marker, else
// the only one in the file. A field of a provider or ConfigMap is then
// found at its template line.
func keyedLineMap(src []byte, rendered string, lm func(int) int, start int) func(int) int {
	var rl, sl []string
	return func(n int) int {
		if line := lm(n); line != 0 || n <= 0 || len(src) == 0 {
			return line
		}
		if rl == nil {
			rl = strings.Split(rendered, "\n")
			sl = strings.Split(string(src), "\n")
		}
		if n > len(rl) {
			return 0
		}
		key, _, ok := strings.Cut(rl[n-1], ": ")
		if !ok || strings.TrimSpace(key) == "" || strings.ContainsAny(key, "{}") {
			return 0
		}
		if start > 0 && start <= len(sl) {
			for i := start - 1; i < len(sl); i++ {
				if yamldoc.Marker([]byte(sl[i])) != "" {
					break
				}
				if strings.HasPrefix(sl[i], key+": ") {
					return i + 1
				}
			}
			return 0
		}
		found := 0
		for i, l := range sl {
			if strings.HasPrefix(l, key+": ") {
				if found != 0 {
					return 0
				}
				found = i + 1
			}
		}
		return found
	}
}

// maxHelmignore bounds a chart's .helmignore (real ones are a few hundred
// bytes).
const maxHelmignore = 1 << 20

// collectChart reads the files of the chart in dir the way Helm's
// loader.LoadDir does (.helmignore, its defaults, Helm's per-file size
// limit) but without following symlinks out of the tree: a symlink to a file
// inside the tree is read, one pointing outside is a Problem and skipped.
// fatal is set when Helm itself would refuse the chart.
//
// mem holds the exact bytes of the regular (not symlinked) files read, by
// path, so the vendored files need not be read twice.
func (l *scanner) collectChart(p *model.Package) (files []*loader.BufferedFile, mem map[string][]byte, probs []model.Problem, fatal bool) {
	mem = map[string][]byte{}
	rules := ignore.Empty()
	badIgnore := false
	if _, err := os.Lstat(filepath.Join(p.Dir, ignore.HelmIgnore)); err == nil {
		// Through the tree's root, a regular file only: not ignore.ParseFile,
		// which follows a link out of the tree and blocks on a FIFO.
		data, err := l.readCapped(filepath.Join(p.Dir, ignore.HelmIgnore), maxHelmignore)
		var r *ignore.Rules
		if err == nil {
			r, err = ignore.Parse(bytes.NewReader(data))
		}
		if err != nil {
			// Helm refuses the chart; its files are still collected (with
			// the default rules) so that a provider chart is not taken
			// for something else.
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: ignore.HelmIgnore},
				Message: fmt.Sprintf(".helmignore cannot be read: %v", unwrapPath(err)),
				Hint:    "make .helmignore a regular file of the chart"})
			fatal, badIgnore = true, true
		} else {
			rules = r
		}
	}
	rules.AddDefaults()
	bad := func(rel, msg, hint string) {
		probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel}, Message: msg, Hint: hint})
	}
	// The chart's own files are read through a root opened at the chart:
	// os.Root opens a path one component at a time, and most charts lie
	// several directories below the tree's root (a monorepo's hundreds of
	// charts cost twice the system time otherwise).
	read := l.readFile
	if sub := l.subRoot(p.Dir); sub != nil {
		defer sub.Close()
		read = func(fp string, size int64) ([]byte, error) {
			f, err := sub.Open(relSlash(p.Dir, fp))
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return readSized(f, size)
		}
	}
	_ = filepath.WalkDir(p.Dir, func(fp string, d fs.DirEntry, err error) error {
		n := relSlash(p.Dir, fp)
		if n == "." || (badIgnore && n == ignore.HelmIgnore) {
			return nil
		}
		if err != nil {
			bad(n, fmt.Sprintf("cannot read %s: %v", n, unwrapPath(err)), "make it readable")
			fatal = true
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			bad(n, fmt.Sprintf("cannot stat %s: %v", n, unwrapPath(err)), "")
			fatal = true
			return nil
		}
		if d.IsDir() {
			if skipDirs[d.Name()] || rules.Ignore(n, fi) {
				return fs.SkipDir
			}
			return nil
		}
		target := fp
		if fi.Mode()&fs.ModeSymlink != 0 {
			t, tfi, prob := l.followLink(p.Dir, fp, n)
			if prob != nil {
				probs = append(probs, *prob)
				return nil
			}
			if tfi.IsDir() {
				// Directory symlinks are not followed (Helm would).
				l.opts.Logger.Debug("not following directory symlink", "package", p.Path, "file", n)
				return nil
			}
			target, fi = t, tfi
		}
		if rules.Ignore(n, fi) {
			return nil
		}
		if !fi.Mode().IsRegular() {
			bad(n, fmt.Sprintf("%s is not a regular file (%s); Helm refuses to load the chart", n, fi.Mode().Type()), "remove it from the chart or add it to .helmignore")
			fatal = true
			return nil
		}
		if fi.Size() > loader.MaxDecompressedFileSize {
			bad(n, fmt.Sprintf("%s is %d bytes, more than the %d Helm loads; Helm refuses the chart", n, fi.Size(), loader.MaxDecompressedFileSize), "")
			fatal = true
			return nil
		}
		readAt := read
		if target != fp {
			readAt = l.readFile // a symlink's target: anywhere in the tree
		}
		data, err := readAt(target, fi.Size())
		if err != nil {
			bad(n, fmt.Sprintf("cannot read %s: %v", n, unwrapPath(err)), "make it readable")
			fatal = true
			return nil
		}
		if target == fp {
			mem[n] = data
		}
		files = append(files, &loader.BufferedFile{Name: n, Data: bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})})
		return nil
	})
	return files, mem, probs, fatal
}

// followLink resolves the symlink at fp (n relative to the package). It
// returns a Problem when the link dangles or points outside the tree.
func (l *scanner) followLink(pkgDir, fp, n string) (string, fs.FileInfo, *model.Problem) {
	t, err := filepath.EvalSymlinks(fp)
	if err != nil {
		return "", nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: n},
			Message: fmt.Sprintf("symlink %s cannot be resolved: %v; not followed", n, unwrapPath(err)),
			Hint:    "fix or remove the link"}
	}
	if !within(l.root, t) {
		link, _ := os.Readlink(fp)
		return "", nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: n},
			Message: fmt.Sprintf("symlink %s points outside the tree (%s); not followed", n, link),
			Hint:    "vendor the file into the package instead of linking to it"}
	}
	fi, err := os.Stat(t)
	if err != nil {
		return "", nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: n},
			Message: fmt.Sprintf("symlink %s: %v", n, unwrapPath(err))}
	}
	return t, fi, nil
}

// within reports whether path p is root or below it.
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// chartWorthRendering reports whether the chart may produce a provider or
// components ConfigMap: a template has a marker, or a template reads chart
// files (.Files.Get, .Files.Glob) and a file that is not a template has
// one, or a packed subchart (not read cheaply) is present.
func chartWorthRendering(files []*loader.BufferedFile) bool {
	readsFiles := false
	isTemplate := func(n string) bool { return strings.HasPrefix(n, "templates/") || strings.Contains(n, "/templates/") }
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".tgz") && strings.HasPrefix(f.Name, "charts/") {
			return true
		}
		if isTemplate(f.Name) {
			if hasMarker(f.Data) {
				return true
			}
			readsFiles = readsFiles || bytes.Contains(f.Data, []byte(".Files."))
		}
	}
	if !readsFiles {
		return false
	}
	for _, f := range files {
		if !isTemplate(f.Name) && path.Base(f.Name) != "Chart.yaml" && !strings.HasSuffix(f.Name, ".gz") && hasMarker(f.Data) {
			return true
		}
	}
	return false
}

// renderChart renders the chart with Helm's engine and its default values,
// as `helm template -n NAMESPACE NAME .` would, and parses every rendered
// manifest. The rendered text is dropped once parsed. Rendering is bounded
// in time, memory and output (Options.Render).
//
// values are the user-supplied values (policy `values:` files, merged as
// `helm template -f` merges them); nil means none. When rel is not nil it
// receives the loaded chart and the rendered manifest, for the size of the
// release Helm would store (release-size).
func (l *scanner) renderChart(ctx context.Context, files []*loader.BufferedFile, release, namespace string, values map[string]any, rel *releaseInput) ([]sourced, []model.Problem) {
	if values == nil {
		values = map[string]any{}
	}
	// The render child loads the chart first, under the render bounds,
	// and checks what loading it builds (parsebound.go); this process
	// loads it only when that is within the parse bounds. Render
	// (bounded: render.go) says where Helm failed, so that the chart is
	// not loaded here to learn it.
	var child *rendering
	if l.opts.Render.InProcess {
		if b := checkChartFiles(files, func(string) {}); b != nil {
			return nil, []model.Problem{*b.problem()}
		}
	} else {
		var prob *model.Problem
		child, prob = l.render(ctx, files, values, release, namespace)
		if prob != nil {
			return nil, []model.Problem{*prob}
		}
		if ctx.Err() != nil {
			return nil, nil // the load ends; the chart was not checked
		}
		if child.stage != "" && child.stage != stageRender {
			return nil, []model.Problem{helmProblem(child.stage, child.err)}
		}
	}
	chrt, err := loader.LoadFiles(files)
	if err != nil {
		return nil, []model.Problem{helmProblem(stageLoad, err)}
	}
	if l.opts.Render.InProcess {
		if b := measureChart(chrt, files); b != nil {
			return nil, []model.Problem{*b.problem()}
		}
	}
	if release == "" {
		release = chrt.Name()
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, values); err != nil {
		return nil, []model.Problem{helmProblem(stageDependencies, err)}
	}
	// The schemas are checked where the chart renders: in the render child
	// unless it renders in process (schema.go).
	vals, prob := renderValues(chrt, values, chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true},
		l.opts.Render.InProcess, files)
	if prob != nil {
		return nil, []model.Problem{*prob}
	}
	var rendered, parse map[string]string
	var docProbs map[string][]model.Problem
	if child == nil {
		rendered, err = engine.Render(chrt, vals)
	} else {
		rendered, parse, docProbs, err = child.rendered, child.parse, child.docProbs, child.err
	}
	if err != nil {
		file, line := renderErrorLocation(chrt.Name(), err.Error())
		return nil, []model.Problem{{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: line},
			Message: fmt.Sprintf("the chart does not render: %v", err),
			Hint:    fmt.Sprintf("run `helm template -n %s %s .` in the package directory and fix the template", namespace, release)}}
	}
	if rel != nil {
		rel.chart, rel.config, rel.name, rel.namespace = chrt, values, release, namespace
	}
	sources := templateSources(chrt)
	subdirs := subchartDirs(files)
	keys := slices.Sorted(maps.Keys(rendered))
	var out []sourced
	var probs []model.Problem
	prefix := chrt.Name() + "/"
	for _, k := range keys {
		text := rendered[k]
		delete(rendered, k)
		probs = append(probs, docProbs[k]...) // of documents the render child dropped
		if strings.HasSuffix(k, "NOTES.txt") || strings.TrimSpace(text) == "" {
			continue
		}
		if rel != nil {
			rel.addManifest(k, text) // as Helm rendered it
		}
		if t, ok := parse[k]; ok {
			text = t // what the render child did not drop
		}
		file := subchartPath(strings.TrimPrefix(k, prefix), subdirs)
		objs, ps := manifest.Parse([]byte(text), file)
		lm := renderedLineMap(sources[k], text)
		placeRendered(ps, lm, namespace, release, file)
		probs = append(probs, ps...)
		for _, o := range objs {
			if !manifest.IsProvider(o) && !manifest.IsComponentsConfigMap(o) {
				o.Root = nil
				continue
			}
			start := sourceLine(sources[k], o.Kind, o.Name)
			line := start
			if line == 0 {
				line = lm(o.Line)
			}
			o.Line = line
			out = append(out, sourced{Object: o, File: file, lineMap: keyedLineMap(sources[k], text, lm, start)})
		}
	}
	return out, probs
}

// Where Helm failed with a chart: the steps of renderChart.
const (
	stageLoad         = "load"
	stageDependencies = "dependencies"
	stageValues       = "values"
	stageRender       = "render"
)

// helmProblem is the problem of a chart Helm failed to load, resolve the
// dependencies of or compute the values of (stage), with Helm's error.
func helmProblem(stage string, err error) model.Problem {
	switch stage {
	case stageDependencies:
		return model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "Chart.yaml"},
			Message: fmt.Sprintf("Helm cannot resolve the chart's dependencies: %v", err), Hint: "run `helm dependency build`"}
	case stageValues:
		return model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "values.yaml"},
			Message: fmt.Sprintf("the chart's default values do not render: %v", err)}
	}
	where := "Chart.yaml"
	if strings.Contains(err.Error(), "cannot load values.yaml") {
		where = "values.yaml"
	}
	return model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: where},
		Message: fmt.Sprintf("Helm cannot load the chart: %v", err), Hint: "run `helm lint` in the package directory"}
}

var renderErrRE = regexp.MustCompile(`([^\s:()]+/templates/[^\s:()]+):([0-9]+)`)

// renderErrorLocation finds "chart/templates/x.yaml:12" in a Helm error.
func renderErrorLocation(chartName, msg string) (string, int) {
	m := renderErrRE.FindStringSubmatch(msg)
	if m == nil {
		return "", 0
	}
	line, _ := strconv.Atoi(m[2])
	return strings.TrimPrefix(m[1], chartName+"/"), line
}

// subchartDirs maps the path Helm gives a subchart's templates
// ("charts/<chart name>") to its directory ("charts/<dir>"), nested too.
func subchartDirs(files []*loader.BufferedFile) map[string]string {
	dirToHelm := map[string]string{"": ""}
	var dirs []string
	names := map[string]string{}
	for _, f := range files {
		if strings.HasPrefix(f.Name, "charts/") && path.Base(f.Name) == "Chart.yaml" {
			d := path.Dir(f.Name)
			// Helm's own type, read as Helm reads it (sigs.k8s.io/yaml;
			// docs/architecture.md, "YAML libraries", says why only here), bounded.
			name := chartName(f.Data)
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

// subchartPath turns a rendered template path into the file's path in the
// package, through subchart directories whose name differs from the chart's.
func subchartPath(file string, subdirs map[string]string) string {
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

// templateSources maps each rendered template name to its source text.
func templateSources(c *chart.Chart) map[string][]byte {
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

// keyLine tells whether ln is `key: val` (val optionally quoted, a
// comment allowed after it), indented when indented is set: what
// `^\s*key:\s*["']?val["']?\s*(#.*)?$` matches (`^\s+` when indented).
func keyLine(ln, key, val string, indented bool) bool {
	const space = " \t\n\f\r"
	t := strings.TrimLeft(ln, space)
	if indented && len(t) == len(ln) {
		return false
	}
	rest, ok := strings.CutPrefix(t, key)
	if !ok {
		return false
	}
	if rest, ok = strings.CutPrefix(rest, ":"); !ok {
		return false
	}
	quote := func(s string) (string, bool) {
		if s != "" && (s[0] == '"' || s[0] == '\'') {
			return s[1:], true
		}
		return s, false
	}
	// \s* may leave spaces to a value that starts with them.
	ws := len(rest) - len(strings.TrimLeft(rest, space))
	for k := 0; k <= ws; k++ {
		for _, q := range []bool{false, true} {
			r := rest[k:]
			if q {
				if r, ok = quote(r); !ok {
					continue
				}
			}
			if r, ok = strings.CutPrefix(r, val); ok {
				r, _ = quote(r)
				if r = strings.TrimLeft(r, space); r == "" || r[0] == '#' {
					return true
				}
			}
		}
	}
	return false
}

// sourceLine finds the line of an object in its template source: the line
// of `name: <name>` in a document that has `kind: <kind>`, else the line of
// `kind: <kind>` if that kind appears once in the file, else 0.
func sourceLine(src []byte, kind, name string) int {
	if len(src) == 0 || kind == "" {
		return 0
	}
	lines := strings.Split(string(src), "\n")
	docKind, docName := 0, 0
	kindLines := []int{}
	for i, ln := range lines {
		if yamldoc.Marker([]byte(ln)) != "" {
			if docKind > 0 && docName > 0 {
				return docName
			}
			docKind, docName = 0, 0
			continue
		}
		if keyLine(ln, "kind", kind, false) {
			docKind = i + 1
			kindLines = append(kindLines, i+1)
		}
		if name != "" && docName == 0 && keyLine(ln, "name", name, true) {
			docName = i + 1
		}
	}
	if docKind > 0 && docName > 0 {
		return docName
	}
	if len(kindLines) == 1 {
		return kindLines[0]
	}
	return 0
}
