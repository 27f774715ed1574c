// Package load finds the provider packages under a directory and builds
// their in-memory model.
//
// It finds every provider package under a directory and builds
// the in-memory model the checks run over: Helm charts rendered with Helm's
// own engine (default values), plain manifest directories, the ConfigMaps
// and cluster-api-operator providers they hold, their vendored files and
// gzip blobs (inspected streaming, bounded by a size limit), and their pins.
//
// Loading never panics on hostile input: what it cannot make sense of
// (a chart that does not render, YAML that does not parse, duplicate keys,
// invalid base64, a symlink out of the tree, an unreadable file) becomes a
// model.Problem of the package, and the scan goes on.
package load

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/render"
)

// DefaultNamespace is the namespace of packages that name none anywhere and
// get no Options.Namespace.
const DefaultNamespace = "default"

// Options tune a load.
type Options struct {
	// Namespace is the namespace of packages that name none (neither a
	// Makefile NAMESPACE= nor metadata.namespace in their objects).
	// Empty means DefaultNamespace.
	Namespace string
	// CommandDir is the tree root as a slash path relative to where the
	// commands in hints are run (builder push DIR: DIR); empty when it is
	// that directory. Packages carry it (model.Package.CommandDir).
	CommandDir string
	// Limit bounds the inflated size of every blob (blob.DefaultLimit when
	// <= 0): a gzip bomb stops there and says so.
	Limit int64
	// Workers is how many packages load at once on this process's CPU
	// (runtime.NumCPU() when <= 0); as many more may be in flight while
	// packages wait for their render child.
	Workers int
	// Logger receives debug and warning logs (slog.Default() when nil).
	Logger *slog.Logger
	// Render bounds the rendering of each chart (time, memory, output);
	// the zero value renders in a bounded child process with the defaults
	// (see render.MaybeRunChild).
	Render render.Limits
	// Sandbox renders the charts (and parses the plain manifests) in
	// bounded child processes. Whoever runs the loads owns it: one
	// Sandbox for many loads keeps its children warm between them, and
	// its Close reaps them. nil: the load starts its own and closes it
	// before it returns.
	Sandbox *render.Sandbox
	// Exclude are path.Match patterns of slash paths relative to the root:
	// a directory that matches is not entered (it and everything under it
	// is listed as skipped).
	Exclude []string
	// Values give charts the values they need to render (policy values:).
	Values []ValuesFiles
	// CRDs, when set, judges each CustomResourceDefinition document of a
	// package's releases while the package loads (components-apply's
	// verdict, check.NewCRDJudge; verify.Run sets it), and the model keeps
	// the verdict, not the document. nil: the CRDs are listed unjudged.
	CRDs CRDJudge
	// Cache keeps loaded packages across loads (see Cache); nil loads
	// every package.
	Cache Cache
}

// CRDJudge judges the CustomResourceDefinition documents of the releases
// as their packages load. A document is named by the SHA-256 of its bytes
// (manifest.Doc.Bytes); an object's Line is relative to its document's
// first line. Called from several goroutines.
type CRDJudge interface {
	// Recall is the object, its verdict set, that the document whose
	// bytes have SHA-256 sum parsed to when it was judged before.
	Recall(sum [32]byte) (model.AppliedObject, bool)
	// Judge judges the CRD o, of the document with SHA-256 sum, from its
	// JSON (nil when the document does not decode as JSON; not kept after
	// Judge returns: the loader reuses it), and remembers the verdict.
	Judge(sum [32]byte, o model.AppliedObject, crd []byte) *model.CRDVerdict
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Limit <= 0 {
		o.Limit = blob.DefaultLimit
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// skipDirs are directories the walk never enters.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// candidate is a directory that may hold a provider package.
type candidate struct {
	dir   string // absolute
	rel   string // slash path relative to the root
	chart bool
	// subcharts: the chart has a charts/ directory, so it renders in a
	// render child, not in this process (render.FastCandidate).
	subcharts bool
}

// Tree loads every provider package under root. It returns an error only
// when root itself cannot be read or ctx ends; everything wrong inside the
// tree is a Problem of the package (or of the tree, Tree.Problems).
//
// Packages load concurrently (Options.Workers at a time); each package's
// rendered output and blob bytes are dropped once it is loaded, so memory
// grows with the number of workers, not with the tree.
func Tree(ctx context.Context, root string, opts Options) (*model.Tree, error) {
	opts = opts.withDefaults()
	real, fsys, err := openDir(root, "tree", "the root of a tree of packages")
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	sk := &skips{}
	cands, scripts, probs := walk(ctx, real, opts.Exclude, sk)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, done := newScanner(real, fsys, opts, sk)
	defer done()
	results, err := l.loadAll(ctx, cands)
	if err != nil {
		return nil, err
	}
	if opts.Cache != nil {
		opts.Logger.Debug("package cache", "recalled", l.stats.recalled.Load(), "loaded", l.stats.loaded.Load(),
			"kept", l.stats.kept.Load(), "not keyed", l.stats.unkeyed.Load())
	}
	t := assemble(real, probs, results, sk)
	resolveClusterctl(t)
	t.Fetches = scanFetches(fsys, t, scripts)
	return t, nil
}

// openDir resolves dir (symlinks pointing into it are then judged against
// its real path) and opens it as an os.Root. what ("tree", "package") and
// give (what to give instead, if anything) word the errors.
func openDir(dir, what, give string) (string, *os.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("load %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", nil, fmt.Errorf("load %s %s: %w (give an existing directory)", what, dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", nil, fmt.Errorf("load %s %s: %w", what, dir, err)
	}
	if !st.IsDir() {
		if give != "" {
			return "", nil, fmt.Errorf("load %s %s: not a directory (give %s)", what, dir, give)
		}
		return "", nil, fmt.Errorf("load %s %s: not a directory", what, dir)
	}
	fsys, err := os.OpenRoot(real)
	if err != nil {
		return "", nil, fmt.Errorf("load %s %s: %w", what, dir, err)
	}
	return real, fsys, nil
}

// newScanner sets up the loads of one tree (or package) under real, with
// the sandbox of opts, or one of its own that done closes.
func newScanner(real string, fsys *os.Root, opts Options, sk *skips) (l *scanner, done func()) {
	l = &scanner{root: real, fsys: fsys, opts: opts, skips: sk, sandbox: opts.Sandbox}
	done = l.parents.close
	if l.sandbox == nil {
		l.sandbox = render.New(opts.Logger)
		done = func() { l.sandbox.Close(); l.parents.close() }
	}
	return l, done
}

// loadAll loads the candidates, opts.Workers at a time on this process's
// CPU, in childFirst order; a candidate that is not a provider package is
// nil. It starts the render children once the first package that needs
// one is found, so a tree without provider charts starts none.
func (l *scanner) loadAll(ctx context.Context, cands []candidate) ([]*model.Package, error) {
	results := make([]*model.Package, len(cands))
	jobs := make(chan int)
	var wg sync.WaitGroup
	// opts.Workers turns at this process's CPU. A package waiting for its
	// render child gives its turn up meanwhile (awayInChild), so that
	// this process loads another while the children render: up to twice
	// as many packages are in flight (and in memory) while renders are
	// outstanding. The workers beyond opts.Workers start only then
	// (l.spare), so a tree without renders has no more than before, nor
	// their stacks.
	l.turns = make(chan struct{}, l.opts.Workers)
	worker := func() {
		defer wg.Done()
		for {
			l.turns <- struct{}{}
			i, ok := <-jobs
			if !ok {
				<-l.turns
				return
			}
			results[i] = l.cachedLoad(ctx, cands[i])
			<-l.turns
		}
	}
	workers := min(l.opts.Workers, max(len(cands), 1))
	var spares atomic.Int64
	l.spare = func() {
		// Called by a running worker: wg is above zero.
		if spares.Add(1) <= int64(workers) {
			wg.Add(1)
			go worker()
		}
	}
	// One child first: more start only when renders queue up for it
	// (render.Sandbox's patience), as each start costs tens of
	// milliseconds of CPU.
	l.warmRender = sync.OnceFunc(func() { l.sandbox.Warm(1, l.opts.Render) })
	for range workers {
		wg.Add(1)
		go worker()
	}
	order := childFirst(cands)
feed:
	for _, i := range order {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return results, ctx.Err()
}

// assemble builds the tree of the loaded packages: sorted by path, the
// first with a CoreProvider its core.
func assemble(real string, probs []model.Problem, results []*model.Package, sk *skips) *model.Tree {
	t := &model.Tree{Root: real, Problems: probs}
	for _, p := range results {
		if p != nil {
			t.Packages = append(t.Packages, p)
		}
	}
	sort.Slice(t.Packages, func(i, j int) bool { return t.Packages[i].Path < t.Packages[j].Path })
	t.Skipped = sk.sorted()
	for _, p := range t.Packages {
		if t.Core != nil {
			break
		}
		for _, pr := range p.Providers {
			if pr.Kind == "CoreProvider" {
				t.Core = p
				break
			}
		}
	}
	return t
}

// walk finds candidate package directories and the scripts and Makefiles
// outside charts (scanFetches reads them): every directory with a
// Chart.yaml (its whole subtree, subcharts included, is that one chart) and
// every other directory holding YAML files. Symlinks are not followed.
//
// A directory matching an exclude pattern is not entered; it is listed in
// sk with the pattern.
func walk(ctx context.Context, root string, exclude []string, sk *skips) ([]candidate, []string, []model.Problem) {
	var cands []candidate
	var scripts []string
	var probs []model.Problem
	plain := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		rel := relSlash(root, p)
		if err != nil {
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel},
				Message: fmt.Sprintf("cannot read %s: %v; packages under it were not checked", rel, unwrapPath(err)),
				Hint:    "make it readable"})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			if p != root {
				if g := excluded(exclude, rel); g != "" {
					sk.add(rel, fmt.Sprintf("excluded (%s)", g))
					return fs.SkipDir
				}
			}
			if fi, err := os.Lstat(filepath.Join(p, "Chart.yaml")); err == nil && !fi.IsDir() {
				sub, err := os.Lstat(filepath.Join(p, "charts"))
				cands = append(cands, candidate{dir: p, rel: rel, chart: true, subcharts: err == nil && sub.IsDir()})
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			// Not followed. One leading to a directory outside the tree may
			// hide packages: say so.
			if t, err := filepath.EvalSymlinks(p); err == nil && !within(root, t) {
				if fi, err := os.Stat(t); err == nil && fi.IsDir() {
					link, _ := os.Readlink(p)
					probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: rel},
						Message: fmt.Sprintf("symlink %s points outside the tree (%s); not followed, packages there were not checked", rel, link),
						Hint:    "check that tree on its own, or move the packages into this tree"})
				}
			}
			return nil
		}
		if d.Type().IsRegular() && isScript(d.Name()) {
			scripts = append(scripts, rel)
		}
		if d.Type().IsRegular() && layout.IsYAMLName(d.Name()) {
			dir := filepath.Dir(p)
			if !plain[dir] {
				plain[dir] = true
				cands = append(cands, candidate{dir: dir, rel: relSlash(root, dir)})
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Message: fmt.Sprintf("walking the tree: %v", err)})
	}
	return cands, scripts, probs
}

// relSlash is p relative to root as a slash path ("." for root).
func relSlash(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// unwrapPath drops the *PathError wrapper (its path is said already).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// scanner holds what every package load shares.
type scanner struct {
	root string
	// fsys is root opened as an os.Root: every file the loader reads is
	// opened through it, so that no path (a symlink followLink approved, a
	// directory swapped for a link after the walk saw it) can lead the
	// read out of the tree. nil: plain os.Open (tests).
	fsys  *os.Root
	opts  Options
	skips *skips // charts that are not provider packages; nil: not recorded
	// sandbox renders the charts and parses the plain manifests.
	sandbox *render.Sandbox
	// parents are the directories holding packages, kept open (subRoot).
	parents parentRoots
	// warmRender starts the render children (Warm) once the first package
	// that needs one is found, so a tree without provider charts starts
	// none; nil: children start on demand.
	warmRender func()
	// turns are the turns at this process's CPU of the packages loading
	// (loadAll); nil: one package loads, and keeps its turn. spare starts
	// a worker to take a turn given up, if there are fewer than loadAll
	// allows.
	turns chan struct{}
	spare func()
	stats cacheStats // what Options.Cache did
	// keyConstVal is the part of every cache key the candidates share
	// (keyConst), worked out once.
	keyConstOnce sync.Once
	keyConstVal  string
}

// needRender tells the scanner that a package about to load renders (or
// parses) in a render child: the children start now, if Tree set that up.
func (l *scanner) needRender() {
	if l.warmRender != nil {
		l.warmRender()
	}
}

// awayInChild runs fn, which waits for a render child, with the calling
// package's turn at this process's CPU given up meanwhile: another
// package loads while the child renders.
func (l *scanner) awayInChild(fn func()) {
	if l.turns == nil {
		fn()
		return
	}
	if l.spare != nil {
		l.spare()
	}
	<-l.turns
	defer func() { l.turns <- struct{}{} }()
	fn()
}

// skip records a chart that is not checked, and why.
func (l *scanner) skip(c candidate, reason string) {
	if l.skips != nil && c.chart {
		l.skips.add(c.rel, reason)
	}
}

// safeLoad loads one candidate; a panic becomes a package-load Problem of
// that package rather than ending the scan (ok is then false).
func (l *scanner) safeLoad(ctx context.Context, c candidate) (p *model.Package, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ok = false
			l.opts.Logger.Error("loader panic", "package", c.rel, "panic", r, "stack", string(debug.Stack()))
			p = newPackage(c)
			p.CommandDir = l.opts.CommandDir
			p.Problems = append(p.Problems, model.Problem{Check: model.CheckPackageLoad,
				Message: fmt.Sprintf("internal error while loading the package: %v", r),
				Hint:    "report this as a pinseal bug with the package attached"})
		}
	}()
	if ctx.Err() != nil {
		return nil, false
	}
	return l.loadPackage(ctx, c), true
}

func newPackage(c candidate) *model.Package {
	return &model.Package{Path: c.rel, Dir: c.dir, Chart: c.chart, Pins: &pin.Set{}, Files: map[string]*model.File{}, Layout: &model.Layout{}}
}

// Package loads the one package in dir, a Helm chart (dir holds Chart.yaml)
// or a plain manifest directory, as Tree loads each package: rendered,
// hashed and matched. Its Path is ".". It returns nil and no error when dir
// holds no provider package. The builder reads its Layout to learn which
// file is each provider's components, metadata and blob.
func Package(ctx context.Context, dir string, opts Options) (*model.Package, error) {
	opts = opts.withDefaults()
	real, fsys, err := openDir(dir, "package", "")
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	c := candidate{dir: real, rel: "."}
	if fi, err := os.Lstat(filepath.Join(real, "Chart.yaml")); err == nil && !fi.IsDir() {
		c.chart = true
	}
	l, done := newScanner(real, fsys, opts, nil)
	defer done()
	p := l.cachedLoad(ctx, c)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// childFirst is the order to load cands in: the charts with subcharts
// first, which render in a render child (render.FastCandidate), then the
// others, each in walk order. The children are the busiest part of a
// monorepo's run and one chart's render can take a second (Sprig's genCA
// makes RSA keys), so their work starts at once and the loads left at the
// end are the short ones this process does on its own, which its workers
// share out: the run does not end waiting for one render. The order of the
// loads is not the order of the report.
func childFirst(cands []candidate) []int {
	order := make([]int, 0, len(cands))
	for i, c := range cands {
		if c.subcharts {
			order = append(order, i)
		}
	}
	for i, c := range cands {
		if !c.subcharts {
			order = append(order, i)
		}
	}
	return order
}
