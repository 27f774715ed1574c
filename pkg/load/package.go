package load

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/releasesize"
)

// loadPackage loads one candidate directory; nil when it is not a
// provider package.
func (l *scanner) loadPackage(ctx context.Context, c candidate) *model.Package {
	p := newPackage(c)
	p.CommandDir = l.opts.CommandDir
	pl := &pkgLoad{strong: func() bool { return false }}
	defer pl.release()
	var probs []model.Problem
	var ok bool
	if c.chart {
		probs, ok = l.readChart(ctx, c, p, pl)
	} else {
		l.needRender() // plain manifests are parsed in a render child
		pl.objs, probs, ok = l.readPlain(ctx, p)
		if ok {
			l.loadPins(p, nil)
		}
	}
	if !ok || ctx.Err() != nil {
		return nil
	}
	p.Problems = append(p.Problems, probs...)
	p.Namespace = l.namespaceOf(p, pl.objs)
	cms := l.sortObjects(p, pl.objs, pl.mem)
	if len(p.Providers) == 0 && len(cms) == 0 && !(len(p.Problems) > 0 && pl.strong()) {
		if c.chart {
			reason := "renders no cluster-api-operator provider and no provider components ConfigMap"
			if pl.strong != nil && pl.strong() {
				// Templates that name providers but render none: switched
				// off by values (Turtles' enabled: flags), not "no package".
				reason = "renders nothing with its default values, though its templates name cluster-api-operator or Turtles providers (switched off by a value such as enabled: false?); give it values in the policy (values:) to check what it installs"
			}
			l.skip(c, reason)
		}
		return nil
	}
	if !l.inspectPackage(ctx, p, pl, cms) {
		return nil
	}
	p.Problems = dedupe(p.Problems)
	return p
}

// pkgLoad is what reading a package (its chart, or its manifests) hands the
// steps that follow.
type pkgLoad struct {
	objs []sourced
	mem  map[string][]byte // chart files already read
	// strong: the package's sources name the operator's API group or
	// labels. Asked only when a chart fails or renders no provider, so a
	// clean package never scans its megabytes of vendored YAML for it.
	strong    func() bool
	relIn     *releasesize.Input // what Helm would store as the release (charts)
	hashed    bool               // hashFiles ran (beside the render)
	hashProbs []model.Problem    // what it found, added in order
	finished  <-chan struct{}    // closed once hashing is done with mem
}

// release gives the chart's buffers back once hashing is done with them,
// after every use of the chart's bytes (also when the load panics).
func (pl *pkgLoad) release() {
	if pl.finished != nil {
		<-pl.finished
	}
	releaseBuffers(pl.mem)
}

// readChart reads the chart of c and renders it (hashing its files
// meanwhile); ok is false when it is not a provider package (skipped).
func (l *scanner) readChart(ctx context.Context, c candidate, p *model.Package, pl *pkgLoad) (probs []model.Problem, ok bool) {
	files, mem, cprobs, fatal, settle := l.collectChart(p)
	pl.mem = mem
	// A chart held for a directory link not followed may install
	// anything: it is kept, with that problem, as one that names providers.
	pl.strong = sync.OnceValue(func() bool { return settle == settleHeld || providerMarked(files) })
	// The policy's values and the namespace option are texts a render
	// copies too: a chart given them is not settled from its own files.
	if !fatal && !l.hasPolicyValues(c.rel) && !settleHazard([]byte(l.opts.Namespace)) &&
		(settle == settleYes || (settle == settleOpen && !chartWorthRendering(files, l.opts.Namespace))) {
		l.skip(c, "no template holds a provider object or components ConfigMap")
		return nil, false
	}
	if fatal && !pl.strong() {
		l.skip(c, fmt.Sprintf("Helm cannot load it (%s), and nothing in it refers to cluster-api-operator providers", firstLine(cprobs[0].Message)))
		return nil, false
	}
	l.needRenderFor(files)
	l.loadPins(p, mem)
	probs = append(probs, cprobs...)
	if fatal {
		return probs, true
	}
	ns := p.Pins.Namespace
	if ns == "" {
		ns = l.opts.Namespace
	}
	values, vprobs := l.valuesFor(c.rel)
	probs = append(probs, vprobs...)
	pl.relIn = &releasesize.Input{}
	// The files are hashed while the chart renders: a render is mostly
	// waiting for the child. (A chart worth rendering is nearly always a
	// provider package; one that is not has cost a hash.)
	wait, finished := l.hashAsync(ctx, p, mem)
	pl.finished = finished
	// With no problem so far, a chart that renders no object and no
	// problem is skipped (loadPackage), whatever its text: it may come
	// back without it.
	lean := len(probs) == 0 && len(p.Problems) == 0
	objs, rprobs := l.renderChart(ctx, files, p.Pins.Name, ns, values, pl.relIn, lean)
	pl.objs, pl.hashProbs, pl.hashed = objs, wait(), true
	probs = append(probs, rprobs...)
	if len(rprobs) > 0 && !pl.strong() {
		why := "does not render with its default values"
		if values != nil {
			why = "does not render with the values the policy gives it"
		}
		if len(vprobs) > 0 {
			why += " (" + vprobs[0].Message + ")"
		}
		l.skip(c, fmt.Sprintf("%s (%s), and nothing in it refers to cluster-api-operator providers; give it values in the policy (values:) to check it anyway", why, firstLine(rprobs[0].Message)))
		return nil, false
	}
	return probs, true
}

// namespaceOf is the package's namespace: its Makefile's, then its
// objects', then the option's.
func (l *scanner) namespaceOf(p *model.Package, objs []sourced) string {
	if p.Pins.Namespace != "" {
		return p.Pins.Namespace
	}
	for _, o := range objs {
		if o.Namespace != "" {
			return o.Namespace
		}
	}
	return l.opts.Namespace
}

// sortObjects adds the package's providers and returns its components
// ConfigMaps: those shaped as provider components or that a provider here
// selects.
func (l *scanner) sortObjects(p *model.Package, objs []sourced, mem map[string][]byte) []*pendingCM {
	var cms []*pendingCM
	for _, o := range objs {
		if !manifest.IsProvider(o.Object) {
			continue
		}
		if pr := l.provider(p, o); pr != nil {
			p.Providers = append(p.Providers, pr)
		}
	}
	for _, o := range objs {
		if manifest.IsClusterctlConfig(o.Object) {
			p.Clusterctl = append(p.Clusterctl, clusterctlOverrides(o)...)
			continue
		}
		if !manifest.IsComponentsConfigMap(o.Object) {
			continue
		}
		shaped := shapedAsComponents(o.Object)
		n := len(p.Problems)
		cm := l.configMap(p, o, mem)
		if !shaped && len(layout.Selecting(p, cm.ConfigMap)) == 0 {
			p.Problems = p.Problems[:n]
			continue
		}
		cms = append(cms, cm)
	}
	return cms
}

// inspectPackage measures the release, hashes the files, inflates and
// matches the blobs, decides the layout and scans the images; false when
// ctx ended.
func (l *scanner) inspectPackage(ctx context.Context, p *model.Package, pl *pkgLoad, cms []*pendingCM) bool {
	if pl.relIn != nil && pl.relIn.Chart != nil {
		p.Release = pl.relIn.Size()
	}
	pl.relIn = nil
	if pl.hashed {
		p.Problems = append(p.Problems, pl.hashProbs...)
	} else {
		l.hashFiles(ctx, p, pl.mem)
	}
	// Past rendering, every step is linear in its input and stops when
	// ctx ends (a request's deadline): a package of many blobs, ConfigMaps
	// or patched files does not hold its verification slot past it.
	l.upstreamDigests(ctx, p, pl.mem)
	for _, cm := range cms {
		if ctx.Err() != nil {
			return false
		}
		l.inspect(ctx, p, cm, pl.mem)
		p.ConfigMaps = append(p.ConfigMaps, cm.ConfigMap)
	}
	// Which file is which: decided once, by internal/layout, and kept on the
	// package for every later reader.
	p.Layout = layout.Of(p)
	l.pinnedMetadata(p, pl.mem)
	var inline []model.Image
	for _, cm := range cms {
		if ctx.Err() != nil {
			return false
		}
		l.components(ctx, p, cm, p.Layout.ConfigMap(cm.ConfigMap))
		inline = append(inline, l.inlineImages(ctx, p, cm)...)
		cm.raw = nil
	}
	l.images(ctx, p, pl.mem)
	p.Images = append(p.Images, inline...)
	l.applied(ctx, p, pl.mem)
	return ctx.Err() == nil
}

// hashAsync runs hashFiles in its own goroutine; the function it returns
// waits for it and returns the problems it found, which it takes out of
// p.Problems (the caller adds them where hashFiles would have, so their
// order does not depend on the overlap). A panic of hashFiles is raised
// again in the caller's goroutine, where safeLoad turns it into a
// problem. p must not change until the wait. finished is closed when the
// goroutine has ended, whether or not wait is called.
func (l *scanner) hashAsync(ctx context.Context, p *model.Package, mem map[string][]byte) (wait func() []model.Problem, finished <-chan struct{}) {
	n := len(p.Problems)
	done := make(chan any, 1)
	end := make(chan struct{})
	go func() {
		defer close(end)
		defer func() { done <- recover() }()
		l.hashFiles(ctx, p, mem)
	}()
	return func() []model.Problem {
		if r := <-done; r != nil {
			panic(r)
		}
		found := slices.Clone(p.Problems[n:])
		p.Problems = p.Problems[:n]
		return found
	}, end
}

// dedupe drops repeated problems (a bad link is seen by the chart reader
// and by the file hasher).
func dedupe(probs []model.Problem) []model.Problem {
	type key struct {
		check, provider string
		loc             model.Location
		msg, hint       string
		settings        string
	}
	seen := map[key]bool{}
	out := probs[:0]
	for _, p := range probs {
		k := key{p.Check, p.Provider, p.Location, p.Message, p.Hint, fmt.Sprint(p.Settings)}
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// loadPins reads the package's pin.yaml or Makefile pins. A pin file that
// does not parse is a Problem; the package then has an empty pin set.
// mem holds the chart's files read already (their exact bytes, read
// through the chart's root): those are not read again. Only buffers that
// are never pooled are lent (see buffers.go): the pins are built of
// copies, but a pooled buffer is not worth the doubt.
func (l *scanner) loadPins(p *model.Package, mem map[string][]byte) {
	var read func(string) ([]byte, bool)
	if mem != nil {
		read = func(name string) ([]byte, bool) {
			b, ok := mem[name]
			return b, ok && cap(b) < pooledMin
		}
	}
	set, err := infer.LoadDirRead(p.Dir, read)
	if set != nil {
		p.Pins = set
	}
	if err != nil {
		file := ""
		var fe *pin.FieldError
		line := 0
		if errors.As(err, &fe) {
			file, line = relFile(p.Dir, fe.File), fe.Line
		}
		if file == "" {
			file = pin.FileName
			if _, serr := os.Stat(filepath.Join(p.Dir, pin.FileName)); serr != nil {
				file = "Makefile"
			}
		}
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: line},
			Message: "the package's pins cannot be read: " + strings.ReplaceAll(err.Error(), p.Dir+string(filepath.Separator), ""),
			Hint:    "fix the pin file (see api/pin.md)"})
	}
}

// relFile turns a path an error named into one relative to the package.
func relFile(dir, f string) string {
	if f == "" {
		return ""
	}
	if filepath.IsAbs(f) {
		if within(dir, f) {
			return relSlash(dir, f)
		}
		return filepath.ToSlash(f)
	}
	return filepath.ToSlash(filepath.Base(f))
}

// readPlain parses the YAML files directly in a plain manifest directory.
// ok is false when the directory holds no provider and no components
// ConfigMap (and no broken file that looks like it meant to).
func (l *scanner) readPlain(ctx context.Context, p *model.Package) (objs []sourced, probs []model.Problem, ok bool) {
	ents, err := os.ReadDir(p.Dir)
	if err != nil {
		return nil, nil, false // the walk read it a moment ago; it is gone
	}
	suspicious := false
	for _, e := range ents {
		if !layout.IsYAMLName(e.Name()) {
			continue
		}
		fp := filepath.Join(p.Dir, e.Name())
		name := e.Name()
		if e.Type()&os.ModeSymlink != 0 {
			t, tfi, prob := l.followLink(p.Dir, fp, name)
			if prob != nil {
				probs = append(probs, *prob)
				continue
			}
			if !tfi.Mode().IsRegular() {
				continue
			}
			fp = t
		} else if !e.Type().IsRegular() {
			continue
		}
		data, err := l.readCapped(fp, l.opts.Limit)
		if err != nil {
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: name},
				Message: fmt.Sprintf("cannot read %s: %v", name, err), Hint: "make it readable"})
			suspicious = true
			continue
		}
		if !hasMarker(data) {
			continue
		}
		// Parsed in a bounded render child first: a file of millions of
		// tiny YAML nodes must not take the service's memory.
		var kept []byte
		var ps []model.Problem
		var prob *model.Problem
		l.awayInChild(func() { kept, ps, prob, err = l.sandbox.Parse(ctx, l.opts.Render, name, data) })
		if err != nil {
			return nil, nil, false // ctx ended: the load ends
		}
		if prob != nil {
			probs = append(probs, *prob)
			suspicious = true
			continue
		}
		fobjs, kps := manifest.Parse(kept, name)
		ps = append(ps, kps...)
		if len(ps) > 0 && hasProviderMarker(data) {
			suspicious = true
		}
		probs = append(probs, ps...)
		for _, o := range fobjs {
			if manifest.Kept(o) {
				objs = append(objs, sourced{Object: o, File: name})
			}
		}
	}
	return objs, probs, len(objs) > 0 || suspicious
}

// hasProviderMarker reports whether a file that failed to parse looks like
// it holds provider objects or their ConfigMaps: it names the operator's
// API group or the provider.cluster.x-k8s.io annotations and labels.
func hasProviderMarker(b []byte) bool {
	for _, m := range providerMarkers {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

// readCapped reads a whole file of the tree of at most limit bytes.
func (l *scanner) readCapped(fp string, limit int64) ([]byte, error) {
	f, err := l.open(fp)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	return readCappedFrom(f, limit)
}

// readCapped reads a whole file (given by the user, not of the tree) of at
// most limit bytes.
func readCapped(fp string, limit int64) ([]byte, error) {
	f, err := os.Open(fp)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	return readCappedFrom(f, limit)
}

// open opens fp, a path in the tree, through the tree's os.Root, if it is
// a regular file (layout.OpenRegular: a FIFO or device is never opened for
// reading, and the open does not block).
func (l *scanner) open(fp string) (*os.File, error) {
	if l.fsys == nil {
		return os.Open(fp)
	}
	rel, err := filepath.Rel(l.root, fp)
	if err != nil || !within(l.root, fp) {
		return nil, &fs.PathError{Op: "open", Path: fp, Err: errors.New("not in the tree")}
	}
	return layout.OpenRegular(l.fsys, filepath.ToSlash(rel))
}

// readDirIn lists the directory dir of the tree, through the tree's root,
// sorted by name; the open does not wait.
func (l *scanner) readDirIn(dir string) ([]fs.DirEntry, error) {
	if l.fsys == nil {
		return os.ReadDir(dir)
	}
	rel, err := filepath.Rel(l.root, dir)
	if err != nil || !within(l.root, dir) {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: errors.New("not in the tree")}
	}
	f, err := l.fsys.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return sortedEntries(f)
}

// sortedEntries reads the open directory f whole, sorted by name, and
// closes it.
func sortedEntries(f *os.File) ([]fs.DirEntry, error) {
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// subRoot opens dir (in the tree) as a root of its own; nil when the tree
// is not read through a root or dir cannot be opened so.
func (l *scanner) subRoot(dir string) *os.Root {
	if l.fsys == nil {
		return nil
	}
	rel, err := filepath.Rel(l.root, dir)
	if err != nil || !within(l.root, dir) {
		return nil
	}
	from, name := l.fsys, rel
	if parent := filepath.Dir(rel); parent != "." {
		if r := l.parents.get(l.fsys, parent); r != nil {
			from, name = r, filepath.Base(rel)
		}
	}
	sub, err := from.OpenRoot(name)
	if err != nil {
		return nil
	}
	return sub
}

// parentRoots keeps open the directories that hold packages (a tree's
// packages/system/, a monorepo's few such directories), so that a
// package's root is opened from its parent's in one step: os.Root opens a
// path one directory at a time. At most maxParentRoots stay open; past
// them a package's root is opened from the tree's.
type parentRoots struct {
	mu    sync.Mutex
	roots map[string]*os.Root // by path relative to the tree; nil: could not open
}

const maxParentRoots = 64

// get returns the root of dir (relative to the tree root fsys), opening
// it the first time; nil when it cannot be opened or there is no room.
func (pr *parentRoots) get(fsys *os.Root, dir string) *os.Root {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if r, ok := pr.roots[dir]; ok {
		return r
	}
	if len(pr.roots) >= maxParentRoots {
		return nil
	}
	if pr.roots == nil {
		pr.roots = map[string]*os.Root{}
	}
	r, err := fsys.OpenRoot(dir)
	if err != nil {
		r = nil
	}
	pr.roots[dir] = r
	return r
}

// close closes the roots kept.
func (pr *parentRoots) close() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	for _, r := range pr.roots {
		if r != nil {
			r.Close()
		}
	}
	pr.roots = nil
}

// readFile reads a whole file of the tree whose size (from a stat) is
// size.
func (l *scanner) readFile(fp string, size int64) ([]byte, error) {
	f, err := l.open(fp)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSized(f, size)
}

func readCappedFrom(f *os.File, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPath(err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than the %d-byte limit", limit)
	}
	return b, nil
}

// provider builds a model.Provider from a provider object.
func (l *scanner) provider(p *model.Package, o sourced) *model.Provider {
	pr := &model.Provider{Kind: o.Kind, Name: o.Name, Namespace: o.Namespace,
		Location: model.Location{File: o.File, Line: o.Line}}
	if pr.Namespace == "" {
		pr.Namespace = p.Namespace
	}
	bad := func(field, why string, line int) {
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Provider: pr.ID(),
			Location: model.Location{File: o.File, Line: o.fileLine(line)},
			Message:  fmt.Sprintf("%s: %s %s", pr.ID(), field, why)})
	}
	spec := manifest.Lookup(o.Root, "spec")
	if o.Kind == model.CAPIProviderKind && !l.turtlesProvider(p, o, pr, spec) {
		return nil
	}
	if v := manifest.Lookup(spec, "version"); v != nil {
		s, ok, why := manifest.StringScalar(v)
		if !ok {
			bad("spec.version", why, v.Line)
		}
		pr.Version = s
	}
	fc := manifest.Lookup(spec, "fetchConfig")
	pr.FetchURL, _ = manifest.Scalar(manifest.Lookup(fc, "url"))
	if n := manifest.Lookup(fc, "oci"); n != nil {
		pr.FetchOCI, _ = manifest.Scalar(n)
		pr.FetchOCILine = o.fileLine(n.Line)
	}
	if sel := manifest.Lookup(fc, "selector"); sel != nil {
		pr.Selector = &model.Selector{}
		pr.Selector.MatchLabels = manifest.StringMap(manifest.Lookup(sel, "matchLabels"), func(k, why string, line int) {
			bad("spec.fetchConfig.selector.matchLabels "+k, why, line)
		})
		if exprs := manifest.Lookup(sel, "matchExpressions"); exprs != nil && exprs.Kind == yaml.SequenceNode {
			for _, e := range exprs.Content {
				var r model.Requirement
				r.Key, _ = manifest.Scalar(manifest.Lookup(e, "key"))
				r.Operator, _ = manifest.Scalar(manifest.Lookup(e, "operator"))
				if vs := manifest.Lookup(e, "values"); vs != nil && vs.Kind == yaml.SequenceNode {
					for _, v := range vs.Content {
						s, _ := manifest.Scalar(v)
						r.Values = append(r.Values, s)
					}
				}
				pr.Selector.MatchExpressions = append(pr.Selector.MatchExpressions, r)
			}
		}
	}
	o.Root = nil
	return pr
}

// turtlesProvider makes pr, read from a Rancher Turtles CAPIProvider, the
// operator provider Turtles reconciles it as: the kind of spec.type and
// the name spec.name, else metadata.name (CAPIProvider.ProviderName in
// rancher/turtles api/v1alpha1/capiprovider_wrapper.go at b2e1223). A
// missing or unknown spec.type is a package-load problem, and the provider
// is not a provider of the model, so that nothing checks it as some kind.
func (l *scanner) turtlesProvider(p *model.Package, o sourced, pr *model.Provider, spec *yaml.Node) bool {
	pr.Object = model.CAPIProviderKind + "/" + o.Name
	if n, ok := manifest.Scalar(manifest.Lookup(spec, "name")); ok && n != "" {
		pr.Name = n
	}
	tn := manifest.Lookup(spec, "type")
	typ, _ := manifest.Scalar(tn)
	if kind := model.TurtlesTypes[typ]; kind != "" {
		pr.Kind = kind
		return true
	}
	line := o.Line
	why := "has no spec.type"
	if tn != nil {
		line, why = o.fileLine(tn.Line), fmt.Sprintf("has spec.type %q, which is no provider type Turtles knows", typ)
	}
	types := make([]string, 0, len(model.TurtlesTypes))
	for t := range model.TurtlesTypes {
		types = append(types, t)
	}
	slices.Sort(types)
	p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad, Provider: pr.Object,
		Location: model.Location{File: o.File, Line: line},
		Message:  fmt.Sprintf("%s %s: nothing can tell what it installs", pr.Object, why),
		Hint:     "set spec.type to one of " + strings.Join(types, ", ")})
	return false
}

// pendingCM is a ConfigMap whose components are not yet inspected.
type pendingCM struct {
	*model.ConfigMap
	raw    []byte // decoded components
	rawErr error
	// txtLine is the file line of a plain data.components value; txtExact:
	// line n of the value is line txtLine+n of the file (a literal block
	// scalar of a plain manifest).
	txtLine  int
	txtExact bool
}

// isEmpty reports whether n is a null scalar (`key:` with no value, `~`,
// `null`), what a template renders when the file it reads is missing.
func isEmpty(n *yaml.Node) bool {
	n = manifest.Resolve(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// configMap builds a model.ConfigMap and decodes its components (mem: the
// chart's files held, decodeHeld).
func (l *scanner) configMap(p *model.Package, o sourced, mem map[string][]byte) *pendingCM {
	cm := &model.ConfigMap{Name: o.Name, Namespace: o.Namespace, Location: model.Location{File: o.File, Line: o.Line}}
	if cm.Namespace == "" {
		cm.Namespace = p.Namespace
	}
	bad := func(field, why string, line int) {
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad,
			Location: model.Location{File: o.File, Line: o.fileLine(line)},
			Message:  fmt.Sprintf("ConfigMap %s: %s %s", cm.Name, field, why)})
	}
	meta := manifest.Lookup(o.Root, "metadata")
	cm.Labels = manifest.StringMap(manifest.Lookup(meta, "labels"), func(k, why string, line int) { bad("label "+k, why, line) })
	cm.Annotations = manifest.StringMap(manifest.Lookup(meta, "annotations"), func(k, why string, line int) { bad("annotation "+k, why, line) })
	pc := &pendingCM{ConfigMap: cm}

	bin := manifest.LookupPath(o.Root, "binaryData", "components")
	txt := manifest.LookupPath(o.Root, "data", "components")
	comp := &model.Components{}
	cm.Components = comp
	switch {
	case bin != nil:
		comp.InBinaryData = true
		if txt != nil {
			bad("components", "is in both data and binaryData; Kubernetes rejects the ConfigMap", txt.Line)
		}
		s, ok := manifest.Scalar(bin)
		msg := "ConfigMap %s: binaryData.components is not valid base64: %v"
		hint := "binaryData values must be base64 (Helm: {{ .Files.Get \"files/components.gz\" | b64enc }})"
		switch {
		case !ok && isEmpty(bin), ok && strings.TrimSpace(s) == "":
			// Helm's .Files.Get gives "" for a file that is missing or
			// excluded by .helmignore: the template renders an empty value.
			pc.rawErr = errors.New("binaryData.components is empty")
			msg = "ConfigMap %s: %v: the cluster would get no provider components"
			hint = "the blob the template reads is missing, empty or excluded by .helmignore: rebuild it (`builder build` or `gzip -9 -n -c files/<components>.yaml > files/components.gz`) and check the path in the template's .Files.Get"
		case !ok:
			pc.rawErr = errors.New("binaryData.components is not a base64 string")
			if n := manifest.Resolve(bin); n != nil && n.Kind != yaml.ScalarNode {
				pc.rawErr = fmt.Errorf("binaryData.components is a %s, not a base64 string", manifest.NodeKind(n))
			}
		default:
			pc.raw, pc.rawErr = decodeHeld(s, mem)
		}
		if pc.rawErr != nil {
			comp.DecodeErr = pc.rawErr
			p.Problems = append(p.Problems, model.Problem{Check: model.CheckBlobCorrupt,
				Location: model.Location{File: o.File, Line: o.fileLine(bin.Line)},
				Message:  fmt.Sprintf(msg, cm.Name, pc.rawErr),
				Hint:     hint})
		}
	case txt != nil:
		s, ok := manifest.Scalar(txt)
		if !ok && txt.Kind != yaml.ScalarNode {
			bad("data.components", "is not a string", txt.Line)
		}
		pc.raw = []byte(s)
		pc.txtLine = o.fileLine(txt.Line)
		pc.txtExact = o.lineMap == nil && txt.Style&yaml.LiteralStyle != 0
	}
	if md := manifest.LookupPath(o.Root, "data", "metadata"); md != nil {
		s, ok := manifest.Scalar(md)
		cm.MetadataRaw = []byte(s)
		cm.Metadata = metadata.Parse(cm.MetadataRaw)
		if !ok && md.Kind != yaml.ScalarNode {
			cm.Metadata = &model.Metadata{Err: fmt.Errorf("data.metadata is a %s, not a string", manifest.NodeKind(md))}
		}
	}
	cm.DataBytes = dataBytes(o.Root, int64(len(pc.raw)), bin != nil || txt != nil)
	if k := cmp.Or(bin, txt); k != nil {
		cm.ComponentsLine = o.fileLine(k.Line)
	}
	o.Root = nil
	return pc
}

// dataBytes is what the API server counts against a ConfigMap's size
// limit: the bytes of every data value and every decoded binaryData value
// (ValidateConfigMap in kubernetes pkg/apis/core/validation/validation.go,
// against corev1.MaxSecretSize). comp is the decoded components, which
// stand for their own key (held values are not in the node).
func dataBytes(root *yaml.Node, comp int64, hasComp bool) int64 {
	n := int64(0)
	if hasComp {
		n = comp
	}
	for _, field := range []string{"data", "binaryData"} {
		m := manifest.Resolve(manifest.Lookup(root, field))
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "components" {
				continue
			}
			s, _ := manifest.Scalar(m.Content[i+1])
			if field == "binaryData" {
				n += int64(base64.StdEncoding.DecodedLen(len(strings.TrimRight(s, "="))))
				continue
			}
			n += int64(len(s))
		}
	}
	return n
}
