package load

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/render"
)

// pendingFile is a chart file the walk found and has not read yet. A
// chart's templates are read first; its other files (vendored CRDs,
// dashboards, megabytes of YAML) only when its templates may need them
// (chartNeedsRest). A monorepo's charts that are not provider packages are
// so decided on their templates alone.
type pendingFile struct {
	n, target string // relative to the chart; the path read
	size      int64
	ownRoot   bool // read through the chart's root (not a symlink's target)
	probsAt   int  // len(probs) when found: where a read error goes
	read      bool
	data      []byte
	err       error
}

func isTemplateFile(n string) bool {
	return strings.HasPrefix(n, "templates/") || strings.Contains(n, "/templates/")
}

// chartNeedsRest reports whether the files read so far (the templates,
// values.yaml and Chart.yaml files) leave chartWorthRendering's answer
// open: a template may read chart files (render.MayReadFiles), a packed
// subchart is present, or they do not settle the chart (chartSettled).
//
// unsettled is set when they do not settle it: the whole chart does not
// either (its other files only add texts a render can copy), unless a
// file read so far starts with a byte order mark (the loader trims it).
func chartNeedsRest(files []*loader.BufferedFile, pending []pendingFile, namespace string) (need, unsettled bool) {
	for _, f := range pending {
		if strings.HasSuffix(f.n, ".tgz") && strings.HasPrefix(f.n, "charts/") {
			return true, false
		}
	}
	for _, f := range files {
		if isTemplateFile(f.Name) && render.MayReadFiles(f.Data) {
			return true, false
		}
	}
	if chartSettled(files, namespace) {
		return false, false
	}
	for _, f := range files {
		if bytes.HasPrefix(f.Data, bom) {
			return true, false
		}
	}
	return true, true
}

// bom is the UTF-8 byte order mark.
var bom = []byte{0xEF, 0xBB, 0xBF}

// isCopiedFirst tells the files read with the templates: those whose
// text a render copies whatever the templates say (values.yaml, of the
// chart and its subcharts, and Chart.yaml), and the pin files the
// release's name and namespace come from (Makefile, pin.yaml).
func isCopiedFirst(n string) bool {
	return isDecodedYAML(n) || n == "Makefile"
}

// isDecodedYAML tells the chart files whose YAML is decoded before a
// render copies it (escapes and tags may then make letters).
func isDecodedYAML(n string) bool {
	b := path.Base(n)
	return b == "values.yaml" || b == "Chart.yaml" || n == pin.FileName
}

// readPending reads the pending files for which want is true.
func (c *chartReader) readPending(want func(n string) bool) {
	for i := range c.pending {
		f := &c.pending[i]
		if f.read || !want(f.n) {
			continue
		}
		readAt := c.read
		if !f.ownRoot {
			readAt = c.l.readFile // a symlink's target: anywhere in the tree
		}
		f.data, f.err = readAt(f.target, f.size)
		f.read = true
		if f.err != nil {
			c.fatal = true
		}
	}
}

// unreadLoads reports whether every pending file not read yet can be
// read: one that cannot would make Helm refuse the chart, and its message
// the skip reason, so the chart is then read in full (and the read gives
// the message).
func (c *chartReader) unreadLoads() bool {
	for _, f := range c.pending {
		if !f.read && !c.canRead(f.target, f.ownRoot) {
			return false
		}
	}
	return true
}

// readAll reads the chart's templates, then its other files unless the
// templates settle that the chart is not worth rendering; the files and
// problems come in the walk's order, as if each had been read when found.
// skip: the templates settled it (the rest was not read); unsettled:
// they proved it cannot be settled (chartNeedsRest).
func (c *chartReader) readAll() (skip, unsettled bool) {
	c.readPending(func(n string) bool { return isTemplateFile(n) || isCopiedFirst(n) })
	templates := c.files
	for _, f := range c.pending {
		if f.read && f.err == nil {
			templates = append(templates, &loader.BufferedFile{Name: f.n, Data: f.data})
		}
	}
	c.holdUnfollowed(templates)
	if !c.fatal && !c.l.hasPolicyValues(c.p.Path) && !settleHazard([]byte(c.l.opts.Namespace)) {
		var need bool
		need, unsettled = chartNeedsRest(templates, c.pending, c.l.opts.Namespace)
		skip = !need && c.unreadLoads()
	}
	if !skip {
		c.readPending(func(string) bool { return true })
	}
	var probs []model.Problem
	k := 0
	for _, f := range c.pending {
		if !f.read {
			continue
		}
		if f.err != nil {
			probs = append(probs, c.probs[k:f.probsAt]...)
			k = f.probsAt
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: f.n},
				Message: fmt.Sprintf("cannot read %s: %v", f.n, unwrapPath(f.err)), Hint: "make it readable"})
			continue
		}
		if f.ownRoot {
			c.mem[f.n] = f.data
		}
		c.files = append(c.files, &loader.BufferedFile{Name: f.n, Data: bytes.TrimPrefix(f.data, bom)})
	}
	c.probs = append(probs, c.probs[k:]...)
	return skip, unsettled
}

// readIgnoreFile reads the chart's .helmignore at fp (at most
// maxHelmignore bytes) through the chart's root (one open, where the
// tree's root opens each directory on the way), else, when that fails (a
// link to a file elsewhere in the tree, or no root), as any file of the
// tree.
func (c *chartReader) readIgnoreFile(fp string) ([]byte, error) {
	if f, err := c.open(fp); err == nil {
		defer f.Close()
		return readCappedFrom(f, maxHelmignore)
	}
	return c.l.readCapped(fp, maxHelmignore)
}

// dirRoots opens a chart's files through a root per directory, each opened
// once (from its parent's root, as the walk goes): os.Root resolves a
// path one component at a time, and a chart's files lie in a few
// directories (templates/, charts/NAME/templates/), so a file costs one
// openat instead of one per component. At most maxKeptRoots directories
// stay open; the others are opened from the chart's root when needed and
// closed at once, so a chart of many directories holds few descriptors.
type dirRoots struct {
	root *os.Root
	dirs map[string]*os.Root // by slash path with a trailing slash
}

// maxKeptRoots bounds the directory roots a chart's load keeps open.
const maxKeptRoots = 64

// open opens the regular file name (slash path relative to the chart) as
// layout.OpenRegular does: without waiting, and only if regular.
func (d *dirRoots) open(name string) (*os.File, error) {
	dir, base := path.Split(name)
	if dir == "" {
		return layout.OpenRegular(d.root, base)
	}
	r, ok := d.dirs[dir]
	if !ok {
		if len(d.dirs) >= maxKeptRoots {
			return layout.OpenRegular(d.root, name)
		}
		var err error
		if r, err = d.root.OpenRoot(strings.TrimSuffix(dir, "/")); err != nil {
			return nil, err
		}
		d.keep(dir, r)
	}
	return layout.OpenRegular(r, base)
}

// keep records r as the root of dir (slash path, trailing slash).
func (d *dirRoots) keep(dir string, r *os.Root) {
	if d.dirs == nil {
		d.dirs = map[string]*os.Root{}
	}
	d.dirs[dir] = r
}

func (d *dirRoots) close() {
	for _, r := range d.dirs {
		r.Close()
	}
	d.root.Close()
}
