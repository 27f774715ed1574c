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
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/internal/yamldoc"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/releasesize"
	"github.com/pinseal/pinseal/pkg/render"
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
// path, so the vendored files need not be read twice. skip is set when the
// templates alone show that the chart is not worth rendering
// (chartWorthRendering); its other files are then not read.
func (l *scanner) collectChart(p *model.Package) (files []*loader.BufferedFile, mem map[string][]byte, probs []model.Problem, fatal bool, settle settleVerdict) {
	c := &chartReader{l: l, p: p, mem: map[string][]byte{}, read: l.readFile, open: l.open}
	// The chart's own files are read through a root opened at the chart:
	// os.Root opens a path one component at a time, and most charts lie
	// several directories below the tree's root (a monorepo's hundreds of
	// charts cost twice the system time otherwise).
	var dirs *dirRoots
	if sub := l.subRoot(p.Dir); sub != nil {
		dirs = &dirRoots{root: sub}
		defer dirs.close()
		c.read = func(fp string, size int64) ([]byte, error) {
			f, err := dirs.open(relSlash(p.Dir, fp))
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return readSized(f, size)
		}
		c.open = func(fp string) (*os.File, error) { return dirs.open(relSlash(p.Dir, fp)) }
	}
	c.readIgnore()
	c.walk(dirs)
	skip, unsettled := c.readAll()
	settle = settleOpen
	switch {
	case c.held:
		settle = settleHeld
	case skip:
		settle = settleYes
	case unsettled:
		settle = settleNo
	}
	return c.files, c.mem, c.probs, c.fatal, settle
}

// settleVerdict is what reading a chart's templates settled: that the
// chart is not worth rendering (settleYes), that it is (settleNo), or
// neither (settleOpen: chartWorthRendering decides on all its files).
type settleVerdict int

const (
	settleOpen settleVerdict = iota
	settleYes
	settleNo
	// settleHeld: a directory link could not be followed; the chart is
	// kept as a package with that problem (chartReader.held).
	settleHeld
)

// chartReader is collectChart's walk of one chart.
type chartReader struct {
	l         *scanner
	p         *model.Package
	rules     *ignore.Rules
	badIgnore bool                                        // .helmignore cannot be read: not collected
	read      func(fp string, size int64) ([]byte, error) // a file of the chart
	open      func(fp string) (*os.File, error)           // a file of the chart, not read
	pending   []pendingFile                               // found by the walk, read by readAll
	files     []*loader.BufferedFile
	mem       map[string][]byte
	probs     []model.Problem
	fatal     bool
	// held: a directory link was not followed (a loop, past the bounds,
	// or one holdUnfollowed holds for): what the chart installs is not
	// known, so it is kept as a package with that problem, never skipped.
	held bool
	// unfollowed are the problems (indexes in probs) of directory links
	// not followed (holdUnfollowed).
	unfollowed []int
	// linkStack are the directories the directory links being followed
	// lead to (loopAt); linkEntries and linkBytes what was reached through
	// them (spendLinked).
	linkStack              []string
	linkEntries, linkBytes int64
	linkOver               bool
	chartReal              string // the chart's directory, links resolved (loopAt)
}

// readIgnore reads the chart's .helmignore rules, and Helm's defaults.
func (c *chartReader) readIgnore() {
	c.rules = ignore.Empty()
	defer func() { c.rules.AddDefaults() }() // on the rules read, else on the empty ones
	if _, err := os.Lstat(filepath.Join(c.p.Dir, ignore.HelmIgnore)); err != nil {
		return
	}
	// Through the tree's root, a regular file only: not ignore.ParseFile,
	// which follows a link out of the tree and blocks on a FIFO.
	data, err := c.readIgnoreFile(filepath.Join(c.p.Dir, ignore.HelmIgnore))
	var r *ignore.Rules
	if err == nil {
		r, err = ignore.Parse(bytes.NewReader(data))
	}
	if err != nil {
		// Helm refuses the chart; its files are still collected (with the
		// default rules) so that a provider chart is not taken for
		// something else.
		c.probs = append(c.probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: ignore.HelmIgnore},
			Message: fmt.Sprintf(".helmignore cannot be read: %v", unwrapPath(err)),
			Hint:    "make .helmignore a regular file of the chart"})
		c.fatal, c.badIgnore = true, true
		return
	}
	c.rules = r
}

// bad records a file Helm would refuse the chart for.
func (c *chartReader) bad(rel, msg, hint string) {
	c.probs = append(c.probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel}, Message: msg, Hint: hint})
	c.fatal = true
}

// visit is the WalkDir function: directories Helm ignores are skipped,
// files are read (file).
func (c *chartReader) visit(fp string, d fs.DirEntry, err error) error {
	n := relSlash(c.p.Dir, fp)
	if n == "." || (c.badIgnore && n == ignore.HelmIgnore) {
		return nil
	}
	if err != nil {
		c.bad(n, fmt.Sprintf("cannot read %s: %v", n, unwrapPath(err)), "make it readable")
		if d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	fi, err := d.Info()
	if err != nil {
		c.bad(n, fmt.Sprintf("cannot stat %s: %v", n, unwrapPath(err)), "")
		return nil
	}
	if d.IsDir() {
		if skipDirs[d.Name()] || c.rules.Ignore(n, fi) {
			return fs.SkipDir
		}
		return nil
	}
	c.file(fp, n, fi)
	return nil
}

// file reads the chart file at fp (n relative to the chart), following a
// symlink to a file or directory inside the tree, unless Helm ignores it.
func (c *chartReader) file(fp, n string, fi fs.FileInfo) { c.fileAt(fp, fp, n, fi) }

// fileAt is file for the entry at fp (the path through the links followed,
// which names it) that is at real (where a link followed led, else fp).
func (c *chartReader) fileAt(fp, real, n string, fi fs.FileInfo) {
	target := real
	if fi.Mode()&fs.ModeSymlink != 0 {
		// Resolved from real: only its last component is a link.
		t, tfi, prob := c.l.followLink(c.p.Dir, real, n)
		if prob != nil {
			c.linkProblem(real, prob)
			return
		}
		if tfi.IsDir() {
			c.linkedDir(fp, real, n, t, tfi)
			return
		}
		target, fi = t, tfi
	}
	if c.rules.Ignore(n, fi) {
		return
	}
	if !fi.Mode().IsRegular() {
		c.bad(n, fmt.Sprintf("%s is not a regular file (%s); Helm refuses to load the chart", n, fi.Mode().Type()), "remove it from the chart or add it to .helmignore")
		return
	}
	if fi.Size() > loader.MaxDecompressedFileSize {
		c.bad(n, fmt.Sprintf("%s is %d bytes, more than the %d Helm loads; Helm refuses the chart", n, fi.Size(), loader.MaxDecompressedFileSize), "")
		return
	}
	if len(c.linkStack) > 0 && !c.spendLinked(n, 1, fi.Size()) {
		return
	}
	c.pending = append(c.pending, pendingFile{n: n, target: target, size: fi.Size(), ownRoot: target == fp, probsAt: len(c.probs)})
}

// linkedDir reads the directory t (in the tree) that the symlink at fp (n
// in the chart) resolves to, as Helm's loader does (sympath.Walk follows
// directory links): its files are the chart's, named below n, read from
// where the links lead. A link to a directory the walk is already in (the
// chart, an ancestor of the link, a directory a link being followed leads
// to) is a loop that Helm's walk never ends: the chart is held.
func (c *chartReader) linkedDir(fp, real, n, t string, fi fs.FileInfo) {
	if skipDirs[path.Base(n)] || c.rules.Ignore(n, fi) {
		return
	}
	if c.loopAt(real, t) {
		link, _ := os.Readlink(real)
		c.bad(n, fmt.Sprintf("symlink %s (%s) leads to a directory that holds it or that a link is already followed into: a loop, which Helm's loader cannot read", n, link),
			"point the link at the subchart itself, not at a directory above it")
		c.held = true
		return
	}
	if !c.spendLinked(n, 1, 0) {
		return
	}
	c.linkStack = append(c.linkStack, t)
	defer func() { c.linkStack = c.linkStack[:len(c.linkStack)-1] }()
	c.walkLinked(fp, t, n)
}

// walkLinked reads the directory real reached through a directory link
// (fp: its path through the link; n: relative to the chart).
func (c *chartReader) walkLinked(fp, real, n string) {
	ents, err := c.l.readDirIn(real)
	if err != nil {
		c.bad(n, fmt.Sprintf("cannot read %s: %v", n, unwrapPath(err)), "make it readable")
		return
	}
	for _, e := range ents {
		if c.linkOver {
			return
		}
		efp, ereal, en := filepath.Join(fp, e.Name()), filepath.Join(real, e.Name()), n+"/"+e.Name()
		fi, err := e.Info()
		if err != nil {
			c.bad(en, fmt.Sprintf("cannot stat %s: %v", en, unwrapPath(err)), "")
			continue
		}
		if !fi.IsDir() {
			c.fileAt(efp, ereal, en, fi)
			continue
		}
		if skipDirs[e.Name()] || c.rules.Ignore(en, fi) || !c.spendLinked(en, 1, 0) {
			continue
		}
		c.walkLinked(efp, ereal, en)
	}
}

// loopAt reports whether following the directory link at real to t
// loops: t is the chart's directory or above it, above the link, or a
// directory a link being followed leads to or above it.
func (c *chartReader) loopAt(real, t string) bool {
	parent := filepath.Dir(real) // resolved already below a link followed
	if len(c.linkStack) == 0 {
		var err error
		if parent, err = filepath.EvalSymlinks(parent); err != nil {
			return true
		}
	}
	if within(t, parent) {
		return true
	}
	if c.chartReal == "" {
		var err error
		if c.chartReal, err = filepath.EvalSymlinks(c.p.Dir); err != nil {
			return true
		}
	}
	if within(t, c.chartReal) {
		return true
	}
	for _, s := range c.linkStack {
		if within(t, s) {
			return true
		}
	}
	return false
}

// spendLinked counts entries and bytes reached through directory links
// (each time a link is followed: two links to one directory read it
// twice) against the bounds on a chart's packed subcharts; false once
// past them: the chart is then held, with a problem at n.
func (c *chartReader) spendLinked(n string, entries, bytes int64) bool {
	c.linkEntries += entries
	c.linkBytes += bytes
	if c.linkEntries <= render.MaxArchiveEntries && c.linkBytes <= render.MaxArchiveBytes {
		return true
	}
	if !c.linkOver {
		c.linkOver = true
		c.bad(n, fmt.Sprintf("the files read through directory symlinks pass %d entries or %d MiB at %s (a directory is counted each time a link leads to it)", render.MaxArchiveEntries, render.MaxArchiveBytes>>20, n),
			"link each subchart once, or vendor it into the chart")
		c.held = true
	}
	return false
}

// linkProblem records prob, the reason the symlink at fp is not followed.
// A link to a file outside the tree is left out and the chart rendered
// without it (a template so linked is a problem of its own). A link to a
// directory outside the tree, or one that does not resolve (on another
// checkout it may lead to a directory), may hide what the chart installs:
// holdUnfollowed decides once the templates are read.
func (c *chartReader) linkProblem(fp string, prob *model.Problem) {
	if t, err := filepath.EvalSymlinks(fp); err == nil {
		if fi, err := os.Stat(t); err != nil || !fi.IsDir() {
			c.probs = append(c.probs, *prob)
			return
		}
	}
	c.unfollowed = append(c.unfollowed, len(c.probs))
	c.probs = append(c.probs, *prob)
}

// holdUnfollowed holds the chart when a directory link not followed
// (linkProblem) may hide what it installs: the link is a subchart or in
// one, or among templates, or a template may read the chart's files
// (files is what was read). Its problem then says so.
func (c *chartReader) holdUnfollowed(files []*loader.BufferedFile) {
	if len(c.unfollowed) == 0 {
		return
	}
	hides := slices.ContainsFunc(files, func(f *loader.BufferedFile) bool { return isTemplateFile(f.Name) && render.MayReadFiles(f.Data) })
	for _, i := range c.unfollowed {
		n := "/" + c.probs[i].Location.File
		hides = hides || strings.Contains(n, "/charts/") || strings.Contains(n, "/templates/")
	}
	if !hides {
		return
	}
	for _, i := range c.unfollowed {
		pr := &c.probs[i]
		pr.Message += "; Helm would read the directory as part of the chart, so what the chart installs is not known"
		pr.Hint = "vendor the directory (a subchart) into the tree, or fix the link to lead to one inside it"
	}
	c.fatal, c.held = true, true
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
// components ConfigMap: a packed subchart (not read cheaply) is present,
// or its files do not settle it (chartSettled).
func chartWorthRendering(files []*loader.BufferedFile, namespace string) bool {
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".tgz") && strings.HasPrefix(f.Name, "charts/") {
			return true
		}
	}
	return !chartSettled(files, namespace)
}

// chartSettled reports whether the chart's files prove, without
// rendering it, that no rendering with their values writes a marker:
// its templates only copy text (render.Inert), and no text they can copy
// (every other file read and its name: values.yaml and Chart.yaml of the
// chart and its subcharts, the files .Files reads) holds a marker, or a
// sequence a copy could decode or escape into one (copyHazard). The caller also checks the texts it adds (the
// release's names, the policy's values).
func chartSettled(files []*loader.BufferedFile, namespace string) bool {
	var templates []*loader.BufferedFile
	for _, f := range files {
		if isTemplateFile(f.Name) {
			templates = append(templates, f)
		} else if settleHazard([]byte(f.Name)) || settleHazard(f.Data) || copyHazard(f.Data, isDecodedYAML(f.Name)) {
			return false
		}
	}
	ok, _ := render.Inert(templates, settleMarkers, render.CopiedBy(files, namespace))
	return ok
}

// noValue is what text/template prints for a missing value. Helm deletes
// it from the rendered output, joining what was around it: to the settle
// proof it is one more marker.
const noValue = "<no value>"

// settleMarkers are the markers as strings, and noValue, for render.Inert.
var settleMarkers = func() []string {
	out := make([]string, 0, len(markers)+1)
	for _, m := range markers {
		out = append(out, string(m))
	}
	return append(out, noValue)
}()

// settleHazard reports whether b holds a marker or noValue.
func settleHazard(b []byte) bool {
	return hasMarker(b) || bytes.Contains(b, []byte(noValue))
}

// copyHazard reports whether b holds what a render may turn into letters
// it does not hold: a character that toYaml or quote escape into letters
// (control characters, non-printable runes, bytes that are not UTF-8),
// and, when b is YAML the render decodes (yaml), an escape (\\x, \\u,
// \\U, a line continuation…) or a binary tag.
func copyHazard(b []byte, yaml bool) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case yaml && c == '\\' && i+1 < len(b) && strings.IndexByte("xuU0abefvNLP_\r\n", b[i+1]) >= 0:
			return true
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
			return true
		case c >= 0x80:
			r, n := utf8.DecodeRune(b[i:])
			if !unicode.IsPrint(r) || r == 0xFEFF || (r == utf8.RuneError && n == 1) {
				return true
			}
			i += n - 1
		}
	}
	return yaml && bytes.Contains(b, []byte("binary"))
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
//
// lean says that the caller drops a chart that renders no object and no
// problem (it is then no provider package, and rel goes unused): such a
// chart, rendered in a child, comes back without its text (render.Chart's
// Lean) and is not loaded here.
func (l *scanner) renderChart(ctx context.Context, files []*loader.BufferedFile, release, namespace string, values map[string]any, rel *releasesize.Input, lean bool) ([]sourced, []model.Problem) {
	if values == nil {
		values = map[string]any{}
	}
	if ctx.Err() != nil {
		return nil, nil // the load ends; the chart was not checked
	}
	if chrt, out, name, ok := l.renderFast(ctx, files, values, release, namespace); ok {
		if rel != nil {
			rel.Chart, rel.Values, rel.Name, rel.Namespace = chrt, values, name, namespace
		}
		return parseRendered(chrt, files, out, name, namespace, rel)
	}
	l.needRender()
	child, probs, ok := l.renderBounded(ctx, files, values, release, namespace, lean)
	if !ok {
		return nil, probs
	}
	if child != nil && child.Empty {
		return nil, nil // what parseRendered finds in it
	}
	if child != nil && child.Err != nil {
		// The child loaded the chart and composed its values (as loadChart
		// would) before Helm failed: only the chart's name is wanted.
		if name := chartYAMLName(files); name != "" {
			if release == "" {
				release = name
			}
			return nil, []model.Problem{renderProblem(name, release, namespace, child.Err)}
		}
	}
	chrt, vals, release, probs := l.loadChart(files, values, release, namespace, l.opts.Render.InProcess)
	if chrt == nil {
		return nil, probs
	}
	out := child
	if out == nil {
		rendered, err := engine.Render(chrt, vals)
		out = &render.Rendering{Rendered: rendered, Err: err}
	}
	if err := out.Err; err != nil {
		return nil, []model.Problem{renderProblem(chrt.Name(), release, namespace, err)}
	}
	if rel != nil {
		rel.Chart, rel.Values, rel.Name, rel.Namespace = chrt, values, release, namespace
	}
	return parseRendered(chrt, files, out, release, namespace, rel)
}

// renderProblem is the problem of chart name failing to render (err,
// Helm's error), placed at the template Helm names.
func renderProblem(name, release, namespace string, err error) model.Problem {
	file, line := renderErrorLocation(name, err.Error())
	return model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: line},
		Message: fmt.Sprintf("the chart does not render: %v", err),
		Hint:    fmt.Sprintf("run `helm template -n %s %s .` in the package directory and fix the template", namespace, release)}
}

// chartYAMLName is the name in the chart's Chart.yaml as Helm reads it
// (render.ChartName), "" when unknown.
func chartYAMLName(files []*loader.BufferedFile) string {
	for _, f := range files {
		if f.Name == "Chart.yaml" {
			return render.ChartName(f.Data)
		}
	}
	return ""
}

// renderBounded renders the chart in the sandbox, unless it renders in
// process (then it only checks the chart's files against the parse
// bounds). The render child loads the chart first, under the render
// bounds, and checks what loading it builds; this process loads it only
// when that is within the parse bounds, and the child says where Helm
// failed, so that the chart is not loaded here to learn it. ok is false
// when the chart goes no further (probs say why; none when ctx ended).
func (l *scanner) renderBounded(ctx context.Context, files []*loader.BufferedFile, values map[string]any, release, namespace string, lean bool) (child *render.Rendering, probs []model.Problem, ok bool) {
	if l.opts.Render.InProcess {
		if b := render.CheckChartFiles(files, func(string) {}); b != nil {
			return nil, []model.Problem{*b.Problem()}, false
		}
		return nil, nil, true
	}
	var prob *model.Problem
	l.awayInChild(func() {
		child, prob = l.sandbox.Render(ctx, render.Chart{Files: files, Values: values, Release: release, Namespace: namespace, Limits: l.opts.Render, Lean: lean})
	})
	if prob != nil {
		return nil, []model.Problem{*prob}, false
	}
	if ctx.Err() != nil {
		return nil, nil, false // the load ends; the chart was not checked
	}
	if child.Stage != "" && child.Stage != render.StageRender {
		return nil, []model.Problem{helmProblem(child.Stage, child.Err)}, false
	}
	return child, nil, true
}

// loadChart loads the chart in this process and computes its values as
// Helm does (the schemas checked here only when it renders in process:
// inProcess, which also measures what loading built against the parse
// bounds);
// release is the release name ("" given: the chart's). chrt is nil when
// Helm fails (probs say why).
func (l *scanner) loadChart(files []*loader.BufferedFile, values map[string]any, release, namespace string, inProcess bool) (chrt *chart.Chart, vals chartutil.Values, rel string, probs []model.Problem) {
	chrt, err := loader.LoadFiles(files)
	if err != nil {
		return nil, nil, release, []model.Problem{helmProblem(render.StageLoad, err)}
	}
	if inProcess {
		if b := render.MeasureChart(chrt, files); b != nil {
			return nil, nil, release, []model.Problem{*b.Problem()}
		}
	}
	if release == "" {
		release = chrt.Name()
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, values); err != nil {
		return nil, nil, release, []model.Problem{helmProblem(render.StageDependencies, err)}
	}
	vals, prob := render.Values(chrt, values, chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true},
		inProcess, files)
	if prob != nil {
		return nil, nil, release, []model.Problem{*prob}
	}
	return chrt, vals, release, nil
}

// parseRendered parses every manifest of r (what the render child did
// not drop) into the providers and components ConfigMaps, at the lines of
// their template files, with the problems found; the rendered text is
// dropped once parsed. rel, when not nil, receives each manifest as Helm
// rendered it.
func parseRendered(chrt *chart.Chart, files []*loader.BufferedFile, r *render.Rendering, release, namespace string, rel *releasesize.Input) ([]sourced, []model.Problem) {
	rendered, parse, docProbs := r.Rendered, r.Parse, r.DocProbs
	sources := render.TemplateSources(chrt)
	subdirs := render.SubchartDirs(files)
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
			rel.AddManifest(k, text) // as Helm rendered it
		}
		if t, ok := parse[k]; ok {
			text = t // what the render child did not drop
		}
		file := render.SubchartPath(strings.TrimPrefix(k, prefix), subdirs)
		objs, ps := parsedOrParse(r, k, text, file)
		lm := render.RenderedLineMap(sources[k], text)
		render.PlaceRendered(ps, lm, namespace, release, file)
		probs = append(probs, ps...)
		for _, o := range objs {
			if !manifest.Kept(o) {
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

// parsedOrParse parses text, template k's output to parse, unless the
// rendering was parsed in process already (the fast path): then it gives
// what that parse kept, the same objects and problems.
func parsedOrParse(r *render.Rendering, k, text, file string) ([]*manifest.Object, []model.Problem) {
	if p, ok := r.Parsed[k]; ok {
		return p.Objects, p.Problems
	}
	return manifest.ParseString(text, file)
}

// helmProblem is the problem of a chart Helm failed to load, resolve the
// dependencies of or compute the values of (stage), with Helm's error.
func helmProblem(stage string, err error) model.Problem {
	switch stage {
	case render.StageDependencies:
		return model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "Chart.yaml"},
			Message: fmt.Sprintf("Helm cannot resolve the chart's dependencies: %v", err), Hint: "run `helm dependency build`"}
	case render.StageValues:
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
