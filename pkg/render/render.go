// Package render renders untrusted Helm charts in bounded child processes.
//
// A chart's templates are programs written by whoever
// wrote the chart: `{{ repeat 1000000000000 "a" }}` asks for 1 TB and kills
// the process that renders it (a Go allocation failure is fatal, not a
// panic), and nested `range until 100000` loops run for ever. Go can neither
// stop a running goroutine nor cap its heap, so charts are rendered in
// child processes: the program re-executes itself (MaybeRunChild at
// the top of main detects the child mode), the child caps its own address
// space (RLIMIT_AS), Go heap and CPU time, renders charts with Helm's engine
// one at a time as the parent sends them and writes each one's rendered
// manifests on stdout. The parent kills the child's process group at a
// chart's time limit, when ctx ends or when the output passes its bound, and
// turns each failure into a package-load problem naming the template and the
// limit. A child that rendered a chart within bounds is kept for the next
// one (render_pool.go), so the bound costs a process start only now and
// then, not per chart.
package render

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/internal/profile"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// Default render bounds (the zero values of Limits).
const (
	DefaultTimeout   = 10 * time.Second
	DefaultMaxMemory = 512 << 20
	DefaultMaxOutput = 64 << 20
)

// Limits bound the rendering of one chart. The zero value means the
// defaults, rendered in a bounded child process.
type Limits struct {
	// Timeout bounds the wall time of rendering one chart
	// (DefaultRenderTimeout when <= 0).
	Timeout time.Duration
	// MaxMemory bounds the memory one render may take, in bytes: the
	// address space the render process may add to what it holds at start
	// (RLIMIT_AS) and its Go heap target (DefaultRenderMaxMemory when <= 0).
	MaxMemory int64
	// MaxOutput bounds the rendered manifests of one chart, in bytes
	// (DefaultRenderMaxOutput when <= 0).
	MaxOutput int64
	// InProcess renders in the calling process with no bound on time or
	// memory (the bounds above are ignored and ctx cannot stop a render).
	// Only for trusted trees, or programs that cannot re-execute
	// themselves; see MaybeRunChild.
	InProcess bool
	// NoFastPath renders every chart in a child, even one whose
	// templates are proven bounded (Bounded), which otherwise renders in
	// process; for tests of the child path.
	NoFastPath bool
}

func (r Limits) WithDefaults() Limits {
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	if r.MaxMemory <= 0 {
		r.MaxMemory = DefaultMaxMemory
	}
	if r.MaxOutput <= 0 {
		r.MaxOutput = DefaultMaxOutput
	}
	return r
}

// String says the bounds as the findings and docs do.
func (r Limits) String() string {
	r = r.WithDefaults()
	return fmt.Sprintf("time %s, memory %s, output %s", r.Timeout, byteSize(r.MaxMemory), byteSize(r.MaxOutput))
}

// childEnv marks the child process; its value is "v2:<max memory bytes>".
const childEnv = "PINSEAL_RENDER_CHILD"

// hookWired is set when this program called MaybeRunChild, i.e. its
// executable can render in a child. It is the one package-level state: it
// says what the program's main does, which holds for the whole process.
var hookWired atomic.Bool

// MaybeRunChild must be called first thing in main (and in TestMain of
// tests that load charts) of every program that renders charts in a
// Sandbox. In the render child it renders the charts on stdin and exits;
// otherwise it only records that the program can run as a render child,
// and returns. A program that does not call it gets a package-load problem
// for every chart unless it renders in process (Limits.InProcess).
func MaybeRunChild() {
	v, ok := os.LookupEnv(childEnv)
	if !ok {
		hookWired.Store(true)
		return
	}
	stop := profile.FromEnv()
	rc := runChild(v, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(rc)
}

// Sandbox renders untrusted charts and parses untrusted manifests in
// bounded child processes (the program re-executed: see MaybeRunChild).
// It keeps the children that finished within bounds for the next chart, so
// a run pays a child's start-up only now and then. New starts it; whoever
// runs the loads closes it (Close), which ends and reaps its children.
// A Sandbox is safe for concurrent use.
type Sandbox struct {
	log *slog.Logger
	// slots bounds the charts rendering at once (and so the children busy
	// at once).
	slots chan struct{}
	pool  childPool
	// unsure counts the answers that depended on the machine rather
	// than on the chart: a time or memory bound passed, a child that
	// failed (Unsure).
	unsure atomic.Uint64
}

// Unsure counts the answers so far that depended on the machine rather
// than on the input alone (a time or memory bound passed, a render child
// that failed): a load that saw this count move may not give the same
// result again, so it is not worth keeping.
func (s *Sandbox) Unsure() uint64 { return s.unsure.Load() }

// noteUnsure counts err, the failure of a child's answer, unless the
// input alone decided it (the output bound).
func (s *Sandbox) noteUnsure(err error) {
	var le *limitError
	if err != nil && !(errors.As(err, &le) && le.What == "output") {
		s.unsure.Add(1)
	}
}

// New returns a Sandbox that logs the bounds charts pass to log (nil: the
// default logger). It starts no child until one is needed (or Warm).
func New(log *slog.Logger) *Sandbox {
	if log == nil {
		log = slog.Default()
	}
	s := &Sandbox{log: log, slots: make(chan struct{}, max(2, runtime.NumCPU()))}
	s.pool.ready = sync.NewCond(&s.pool.mu)
	return s
}

// Available reports whether charts can render in child processes: the
// limits do not ask for rendering in process and the program calls
// MaybeRunChild.
func Available(lim Limits) bool { return !lim.InProcess && hookWired.Load() }

// renderRequest is what the parent sends the child (gob, on stdin).
type renderRequest struct {
	Seq       uint64 // numbers the child's marks, so stale ones are told apart
	Files     []renderFile
	Release   string
	Namespace string
	Values    []byte        // user-supplied values (policy values files) as JSON; nil: none
	Timeout   time.Duration // the child's own backstop
	MaxOutput int64
	// Lean asks the child to answer only Empty when the chart renders,
	// keeps no document and the documents it drops parse without a
	// problem (Chart.Lean).
	Lean bool
	// Parse asks the child to parse Files as plain YAML manifests (no
	// chart, nothing rendered): it answers, by file, the spans to blank
	// (documents that are neither providers nor components ConfigMaps) and
	// their problems, as for a template's output.
	Parse bool
}

type renderFile struct {
	Name string
	Data []byte
	// Size is len(Data) on the wire, where Data travels raw after the
	// request (sendRequest), not through gob.
	Size int
}

// renderResponse is what the child answers (gob, on stdout).
type renderResponse struct {
	// Rendered holds each template's output as Helm rendered it (what the
	// release stores); Dropped the byte spans of each template's output
	// holding the documents that are neither a provider nor a components
	// ConfigMap, which the parent blanks out before it parses (their
	// lines kept as empty lines, so line numbers hold); Problems holds
	// what parsing the dropped documents found, by template.
	Rendered map[string]string
	Dropped  map[string][]span
	Problems map[string][]model.Problem
	// kept holds, by template, the documents keepRendered kept, as
	// parsed: only when it ran in process (gob does not send it).
	kept map[string]Parsed
	Err  string // Helm's error, if any
	// Stage is where Helm failed when Err is set: stageLoad,
	// stageDependencies, stageValues or stageRender.
	Stage string
	// Bound is set when the chart passed a parse bound (parsebound.go):
	// the parent does not load it.
	Bound *Bound
	// Values is set when the values do not compose or do not validate
	// against the chart's schemas (the chart was not rendered).
	Values *model.Problem
	// Empty is set, for a Lean request, when the chart rendered, kept
	// no document and its dropped documents had no problem: Rendered,
	// Dropped and Problems are then not sent.
	Empty bool
	// Output is set when the rendered manifests passed the output bound:
	// their total size, and the largest template.
	Output   int64
	Template string
}

// progressPrefix starts the stderr line the child writes as it begins each
// template: "<prefix><seq> <quoted template name>".
const progressPrefix = "pinseal-render-template: "

// markGroup starts the apiVersion of the lookup calls that mark each
// template's start in the child; no Kubernetes API has it. The child adds a
// random version, so that a chart cannot forge marks.
const markGroup = "pinseal.render/"

// span is a byte range [From, To) of a template's output.
type span struct{ From, To int }

// rendering is what the render child answered for a chart: the rendered
// output, or where Helm failed (stage, err).
type Rendering struct {
	// Rendered is Helm's output; Parse is what the loader parses (the
	// output with the documents that are neither providers nor
	// components ConfigMaps blanked, by template, when it differs);
	// DocProbs holds, by template, what the child found wrong in those
	// documents (lines and messages as the loader gives its own).
	Rendered, Parse map[string]string
	DocProbs        map[string][]model.Problem
	// Parsed holds, by template, what parsing Parse gives, when the
	// rendering was parsed in process (the fast path): the loader need
	// not parse it again. Nil from a render child.
	Parsed map[string]Parsed
	Stage  string // where Helm failed: StageLoad … StageRender; "" when it did not
	Err    error
	// Empty is set when the chart was rendered for a Lean request and
	// rendered no provider and no components ConfigMap, and nothing
	// wrong in the documents it did render: the loader would find no
	// object and no problem in it, so the text was not sent (Rendered and
	// Parse are nil).
	Empty bool
}

// Chart is one chart to render: its files as Helm's loader reads them, the
// user-supplied values (policy values files; nil: none), the release name
// ("": the chart's name) and namespace, and the bounds.
type Chart struct {
	Files     []*loader.BufferedFile
	Values    map[string]any
	Release   string
	Namespace string
	Limits    Limits
	// Lean asks for the rendered text only when the loader would find an
	// object or a problem in it: a chart that renders no provider and no
	// components ConfigMap, and whose other documents parse, is answered
	// Rendering.Empty. For a caller that needs the text of such a chart
	// for nothing else (the release's size matters only for a provider
	// package): most charts of a monorepo render to megabytes the loader
	// drops, which then cross no pipe and are not parsed twice.
	Lean bool
}

// Render has chart c loaded and rendered in a render child, bounded by
// c.Limits, and answers what it rendered or where Helm failed. A bound
// passed (a render or parse bound, or a child that cannot run) is prob.
// When ctx ends, the answer's Err is ctx's error.
//
// The child loads the chart first and checks what loading it builds
// against the parse bounds (parsebound.go); it also parses the rendered
// YAML (a chart can render tens of MiB of tiny YAML nodes, which take GiBs
// to parse) and marks the documents that are neither providers nor
// components ConfigMaps, which are blanked here.
func (s *Sandbox) Render(ctx context.Context, c Chart) (*Rendering, *model.Problem) {
	files, user, release, namespace := c.Files, c.Values, c.Release, c.Namespace
	lim := c.Limits.WithDefaults()
	if !hookWired.Load() {
		return nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "Chart.yaml"},
			Message: "the chart was not rendered: this program cannot render charts in a bounded child process (it does not call render.MaybeRunChild at the start of main)",
			Hint:    "call render.MaybeRunChild() first thing in main (and TestMain), or set load.Options.Render.InProcess for trusted trees"}
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return &Rendering{Stage: StageRender, Err: ctx.Err()}, nil
	}
	req := renderRequest{Release: release, Namespace: namespace, Timeout: lim.Timeout, MaxOutput: lim.MaxOutput, Lean: c.Lean}
	if len(user) > 0 {
		// JSON, as Helm itself turns values files into values.
		b, err := json.Marshal(user)
		if err != nil {
			return &Rendering{Stage: StageValues, Err: fmt.Errorf("values for the chart: %w", err)}, nil
		}
		req.Values = b
	}
	omit := unreadFiles(files) // sent empty: no template reads them
	for _, f := range files {
		data := f.Data
		if omit[f.Name] {
			data = nil
		}
		req.Files = append(req.Files, renderFile{Name: f.Name, Data: data})
	}
	res, err := s.inChild(ctx, req, lim)
	s.noteUnsure(err)
	if err != nil {
		if ctx.Err() != nil {
			return &Rendering{Stage: StageRender, Err: ctx.Err()}, nil
		}
		var le *limitError
		if errors.As(err, &le) {
			return nil, s.limitProblem(le, files, lim, release, namespace)
		}
		return nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "Chart.yaml"},
			Message: fmt.Sprintf("the chart could not be rendered: %v", err),
			Hint:    "this is a failure of the render process, not of the chart; see the service's log"}
	}
	if res.Bound != nil {
		return nil, res.Bound.Problem()
	}
	if res.Values != nil {
		return nil, res.Values
	}
	if res.Err != "" {
		stage := res.Stage
		if stage == "" {
			stage = StageLoad // never loaded here on an answer that does not say
		}
		return &Rendering{Stage: stage, Err: errors.New(res.Err)}, nil
	}
	if res.Empty {
		return &Rendering{Empty: true}, nil
	}
	out, ok := res.rendering()
	if !ok {
		return nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "Chart.yaml"},
			Message: "the chart could not be rendered: the render process answered with bad document spans",
			Hint:    "this is a failure of the render process, not of the chart; see the service's log"}
	}
	return out, nil
}

// rendering is what the loader parses of a rendered chart's answer: the
// dropped documents blanked. ok is false when the spans are bad.
func (res *renderResponse) rendering() (*Rendering, bool) {
	out := &Rendering{Rendered: res.Rendered, Parse: map[string]string{}, DocProbs: res.Problems, Parsed: res.kept}
	for k, drop := range res.Dropped {
		text, ok := blankSpans(res.Rendered[k], drop)
		if !ok {
			return nil, false
		}
		out.Parse[k] = text
	}
	return out, true
}

// limitError is a render bound passed.
type limitError struct {
	What     string // "time", "memory", "output"
	Template string // rendered template name ("chart/templates/x.yaml"), "" when unknown
	Detail   string
}

func (e *limitError) Error() string {
	return fmt.Sprintf("render %s limit passed in %q: %s", e.What, e.Template, e.Detail)
}

// limitProblem turns a bound passed into the package-load problem naming
// the template (as a file of the package) and the limit.
func (s *Sandbox) limitProblem(le *limitError, files []*loader.BufferedFile, lim Limits, release, namespace string) *model.Problem {
	name := ""
	for _, f := range files {
		if f.Name == "Chart.yaml" {
			name = ChartName(f.Data)
		}
	}
	if release == "" {
		release = name
	}
	file, tmpl, doing := "", "the chart", "rendering the chart"
	if f, ok := strings.CutPrefix(le.Template, parseMark); ok {
		// Passed while the child read the chart's files, before rendering.
		file, tmpl, doing = f, f, "parsing "+f
	} else if le.Template != "" {
		file = SubchartPath(strings.TrimPrefix(le.Template, name+"/"), SubchartDirs(files))
		tmpl = "template " + file
		doing = "rendering " + tmpl
	}
	var msg, limit string
	var setting report.Setting
	switch le.What {
	case "time":
		msg = fmt.Sprintf("%s took longer than the render time limit of %s; rendering stopped", doing, lim.Timeout)
		limit, setting = "render time limit", report.SettingRenderTimeout
	case "memory":
		msg = fmt.Sprintf("%s went over the render memory limit of %s; rendering stopped", doing, byteSize(lim.MaxMemory))
		limit, setting = "render memory limit", report.SettingRenderMaxMemory
	default:
		msg = fmt.Sprintf("the rendered output of the chart went over the render output limit of %s (%s, the largest from %s); rendering stopped", byteSize(lim.MaxOutput), le.Detail, tmpl)
		limit, setting = "render output limit", report.SettingRenderMaxOutput
	}
	s.log.Warn("chart render over its bound", "chart", name, "template", le.Template, "limit", le.What, "detail", le.Detail)
	return &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: file}, Message: msg,
		Hint:     fmt.Sprintf("fix the template (run `helm template -n %s %s .` in the package directory); if the chart really needs more, raise the %s", namespace, release, limit),
		Settings: []report.Setting{setting}}
}

// selfExe is the executable the render child runs.
func selfExe() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil // the running binary even if replaced on disk
	}
	return os.Executable()
}

// progressWriter reads the child's stderr: the last template started,
// whether the Go runtime said it ran out of memory, and the first bytes of
// the rest (the runtime's fatal error comes first, then its stacks).
type progressWriter struct {
	mu      sync.Mutex
	seq     string // marks of this request count
	partial []byte
	last    string
	head    []byte
	noMem   bool
}

// reset starts a request: marks count only with its seq.
func (w *progressWriter) reset(seq uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq, w.last, w.head, w.noMem = strconv.FormatUint(seq, 10), "", nil, false
}

const stderrHead = 1 << 10

// oomSigns are what the Go runtime says when the kernel refuses it memory
// (or a thread, or a stack) under RLIMIT_AS.
var oomSigns = []string{"out of memory", "cannot allocate memory", "failed to create new OS thread", "stack overflow", "pthread_create failed"}

func (w *progressWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.partial) < stderrHead {
				w.partial = append(w.partial, p[:min(len(p), stderrHead-len(w.partial))]...)
			}
			break
		}
		line := append(w.partial, p[:i]...)
		w.partial = nil
		p = p[i+1:]
		w.line(string(line))
	}
	return n, nil
}

func (w *progressWriter) line(l string) {
	if m, ok := strings.CutPrefix(l, progressPrefix); ok {
		seq, q, _ := strings.Cut(m, " ")
		if name, err := strconv.Unquote(q); err == nil && seq == w.seq {
			w.last = name
		}
		return
	}
	for _, s := range oomSigns {
		if strings.Contains(l, s) {
			w.noMem = true
		}
	}
	if len(w.head) < stderrHead {
		w.head = append(w.head, l[:min(len(l), stderrHead-len(w.head))]...)
		w.head = append(w.head, '\n')
	}
}

func (w *progressWriter) template() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// diag is the first of what the child wrote besides its marks.
func (w *progressWriter) diag() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.line(string(w.partial))
		w.partial = nil
	}
	return strings.TrimSpace(string(w.head))
}

// oom reports whether the child died of the memory limit.
func (w *progressWriter) oom() bool {
	w.diag()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.noMem
}

// renderForChild loads and renders the chart as the loader does in
// process, with a mark at the start of every template so that the parent
// knows which one was running when it had to stop the render. Rendered
// manifests over req.MaxOutput bytes in all are not sent, only their size.
func renderForChild(req renderRequest, progress io.Writer) *renderResponse {
	if req.Parse {
		return parseForChild(req, progress)
	}
	files := make([]*loader.BufferedFile, len(req.Files))
	for i, f := range req.Files {
		files[i] = &loader.BufferedFile{Name: f.Name, Data: f.Data}
	}
	chrt, res := loadForChild(req, files, progress)
	if res != nil {
		return res
	}
	release := req.Release
	if release == "" {
		release = chrt.Name()
	}
	vals, res := valuesForChild(req, chrt, release, files)
	if res != nil {
		return res
	}
	sources := TemplateSources(chrt) // before the marks
	rendered, res := renderMarked(req, chrt, vals, progress)
	if res != nil {
		return res
	}
	if total, biggest := outputSize(rendered); total > req.MaxOutput {
		return &renderResponse{Output: total, Template: biggest}
	}
	res = keepRendered(req.Seq, req.Namespace, chrt.Name(), sources, SubchartDirs(files), rendered, release, progress)
	if req.Lean && res.empty() {
		return &renderResponse{Empty: true}
	}
	return res
}

// empty reports whether the loader would find nothing in res: no
// document kept, no problem in those dropped or kept.
func (res *renderResponse) empty() bool {
	if len(res.Problems) > 0 {
		return false
	}
	for _, k := range res.kept {
		if len(k.Objects) > 0 || len(k.Problems) > 0 {
			return false
		}
	}
	return true
}

// loadForChild loads the chart of files within the parse bounds, with a
// progress mark before each file it checks; res is the answer when it
// cannot.
func loadForChild(req renderRequest, files []*loader.BufferedFile, progress io.Writer) (*chart.Chart, *renderResponse) {
	mark := func(file string) {
		fmt.Fprintf(progress, "%s%d %s\n", progressPrefix, req.Seq, strconv.Quote(parseMark+file))
	}
	if b := CheckChartFiles(files, mark); b != nil {
		return nil, &renderResponse{Bound: b}
	}
	mark("Chart.yaml")
	chrt, err := loader.LoadFiles(files)
	if chrt != nil {
		// What the parent would build loading it, the part of a failed
		// load included: the parent does not load a chart Helm fails on.
		if b := MeasureChart(chrt, files); b != nil {
			return nil, &renderResponse{Bound: b}
		}
	}
	if err != nil {
		return nil, &renderResponse{Err: err.Error(), Stage: StageLoad}
	}
	return chrt, nil
}

// valuesForChild composes the chart's values with the user's (req.Values)
// and validates them against the chart's schemas; res is the answer when
// they do not compose or validate.
func valuesForChild(req renderRequest, chrt *chart.Chart, release string, files []*loader.BufferedFile) (chartutil.Values, *renderResponse) {
	user := map[string]any{}
	if len(req.Values) > 0 {
		if err := json.Unmarshal(req.Values, &user); err != nil {
			return nil, &renderResponse{Err: fmt.Sprintf("render child: values: %v", err)}
		}
	}
	if err := chartutil.ProcessDependenciesWithMerge(chrt, user); err != nil {
		return nil, &renderResponse{Err: err.Error(), Stage: StageDependencies}
	}
	vals, prob := Values(chrt, user, chartutil.ReleaseOptions{Name: release, Namespace: req.Namespace, Revision: 1, IsInstall: true}, true, files)
	if prob != nil {
		return nil, &renderResponse{Values: prob}
	}
	return vals, nil
}

// renderMarked renders the chart with a mark at the start of every
// template (markTemplates) under a random API version a chart cannot
// forge; res is the answer when Helm fails.
func renderMarked(req renderRequest, chrt *chart.Chart, vals chartutil.Values, progress io.Writer) (map[string]string, *renderResponse) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return nil, &renderResponse{Err: fmt.Sprintf("render child: %v", err)}
	}
	api := markGroup + hex.EncodeToString(nonce)
	marked := markTemplates(chrt, api)
	rendered, err := engine.RenderWithClientProvider(chrt, vals, markProvider{api: api, seq: req.Seq, w: progress})
	if err != nil {
		return nil, &renderResponse{Err: unmarkError(err.Error(), marked, api), Stage: StageRender}
	}
	return rendered, nil
}

// outputSize is the size of the rendered manifests in all, and the largest
// template.
func outputSize(rendered map[string]string) (total int64, biggest string) {
	size := 0
	for k, v := range rendered {
		total += int64(len(v))
		if len(v) > size {
			biggest, size = k, len(v)
		}
	}
	return total, biggest
}

// keepRendered parses each template's output (keepObjects) and answers the
// output with the spans of the documents the parent need not parse and
// those documents' problems, placed at the lines of the template's source
// (sources, taken before the marks) as the loader places its own.
func keepRendered(seq uint64, namespace, name string, sources map[string][]byte, subdirs map[string]string, rendered map[string]string, release string, progress io.Writer) *renderResponse {
	res := &renderResponse{Rendered: rendered, Dropped: map[string][]span{}, Problems: map[string][]model.Problem{}, kept: map[string]Parsed{}}
	prefix := name + "/"
	for k, text := range rendered {
		if strings.HasSuffix(k, "NOTES.txt") || strings.TrimSpace(text) == "" {
			rendered[k] = "" // skipped by the parent too
			continue
		}
		file := SubchartPath(strings.TrimPrefix(k, prefix), subdirs)
		// Parsing a template's output may pass the memory bound too: name it.
		fmt.Fprintf(progress, "%s%d %s\n", progressPrefix, seq, strconv.Quote(k))
		drop, probs, kept := keepObjects(text, file)
		res.kept[k] = kept
		if len(drop) > 0 {
			res.Dropped[k] = drop
		}
		// As the loader does with the problems it finds itself.
		PlaceRendered(probs, RenderedLineMap(sources[k], text), namespace, release, file)
		if len(probs) > 0 {
			res.Problems[k] = probs
		}
	}
	return res
}

// maxKeptNodes bounds the YAML nodes of a provider or components ConfigMap
// the render child passes on: real ones have a few hundred (the components
// are one scalar), and the parent parses what it gets again.
const maxKeptNodes = 100000

// Parsed is what manifest.ParseString gives on a template's output with
// the documents keepObjects drops blanked: the objects kept and their
// problems (at the lines of the output, not yet placed).
type Parsed struct {
	Objects  []*manifest.Object
	Problems []model.Problem
}

// keepObjects parses a template's output as the loader does
// (manifest.ParseStringDocs: a components ConfigMap's blob is not copied)
// and returns the spans of the documents that are not a provider or
// components ConfigMap (to be blanked, blankSpans), with the problems
// those documents have, and the documents kept as parsed: the same as
// parsing the blanked text (the kept documents keep their bytes and
// lines; a blanked one is blank, which SplitDocs skips).
func keepObjects(text, file string) (drop []span, probs []model.Problem, kept Parsed) {
	for _, d := range manifest.ParseStringDocs(text, file) {
		o, ps := d.Object, d.Problems
		if o != nil && manifest.Kept(o) {
			if n := countNodes(o.Root, maxKeptNodes+1); n <= maxKeptNodes {
				kept.Objects = append(kept.Objects, o)
				kept.Problems = append(kept.Problems, ps...)
				continue
			}
			ps = []model.Problem{{Check: model.CheckPackageLoad, Location: model.Location{File: file, Line: o.Line},
				Message: fmt.Sprintf("%s %s at line %d has more than %d YAML nodes; not loaded", o.Kind, o.Name, o.Line, maxKeptNodes),
				Hint:    "a provider or components ConfigMap holds the components as one value; remove what makes it this big"}}
		}
		probs = append(probs, ps...)
		for _, sp := range []manifest.Span{d.Head, d.Text} {
			if sp.To > sp.From {
				drop = append(drop, span{sp.From, sp.To})
			}
		}
	}
	return drop, probs, kept
}

// parseForChild parses plain YAML manifests in the child, as keepObjects
// parses a template's output: a file of millions of tiny YAML nodes takes
// the child's memory, not the service's. A progress mark before each file
// names it when a bound stops the parse.
func parseForChild(req renderRequest, progress io.Writer) *renderResponse {
	res := &renderResponse{Dropped: map[string][]span{}, Problems: map[string][]model.Problem{}}
	for _, f := range req.Files {
		fmt.Fprintf(progress, "%s%d %s\n", progressPrefix, req.Seq, strconv.Quote(f.Name))
		drop, probs, _ := keepObjects(string(f.Data), f.Name)
		if len(drop) > 0 {
			res.Dropped[f.Name] = drop
		}
		if len(probs) > 0 {
			res.Problems[f.Name] = probs
		}
	}
	return res
}

// Parse has a plain manifest file parsed in a bounded render child and
// returns what the loader parses itself: data with the documents that are
// neither providers nor components ConfigMaps blanked (line numbers hold),
// and the problems of those documents. A bound passed is prob. Without
// render children (lim.InProcess, or a program that does not call
// MaybeRunChild) data is returned as it is, for the loader to parse in
// process.
func (s *Sandbox) Parse(ctx context.Context, lim Limits, name string, data []byte) (kept []byte, docProbs []model.Problem, prob *model.Problem, err error) {
	if !Available(lim) {
		return data, nil, nil, nil
	}
	lim = lim.WithDefaults()
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, nil, nil, ctx.Err()
	}
	req := renderRequest{Parse: true, Timeout: lim.Timeout, MaxOutput: lim.MaxOutput, Files: []renderFile{{Name: name, Data: data}}}
	res, err := s.inChild(ctx, req, lim)
	s.noteUnsure(err)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, nil, ctx.Err()
		}
		var le *limitError
		if errors.As(err, &le) {
			return nil, nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: name},
				Message:  fmt.Sprintf("parsing %s went over the render %s limit of %s (%s)", name, le.What, limitValue(le.What, lim), le.Detail),
				Hint:     "split the file, or, if the file is trusted, raise the render memory and time limits",
				Settings: []report.Setting{report.SettingRenderMaxMemory, report.SettingRenderTimeout}}, nil
		}
		return nil, nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: name},
			Message: fmt.Sprintf("%s could not be parsed: %v", name, err),
			Hint:    "this is a failure of the render process, not of the file; see the log"}, nil
	}
	text, ok := blankSpans(string(data), res.Dropped[name])
	if !ok {
		return nil, nil, &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: name},
			Message: fmt.Sprintf("%s could not be parsed: the render process answered with bad document spans", name),
			Hint:    "this is a failure of the render process, not of the file; see the log"}, nil
	}
	return []byte(text), res.Problems[name], nil, nil
}

// limitValue is the bound of kind what ("time", "memory", "output").
func limitValue(what string, lim Limits) string {
	switch what {
	case "time":
		return lim.Timeout.String()
	case "memory":
		return byteSize(lim.MaxMemory)
	default:
		return byteSize(lim.MaxOutput)
	}
}

// blankSpans replaces the spans of text by as many empty lines as they
// hold; ok is false when the spans are not in order within text.
func blankSpans(text string, drop []span) (string, bool) {
	var b strings.Builder
	pos := 0
	for _, sp := range drop {
		if sp.From < pos || sp.To < sp.From || sp.To > len(text) {
			return "", false
		}
		b.WriteString(text[pos:sp.From])
		b.WriteString(strings.Repeat("\n", strings.Count(text[sp.From:sp.To], "\n")))
		pos = sp.To
	}
	b.WriteString(text[pos:])
	return b.String(), true
}

// countNodes counts the nodes under n (aliases not followed), stopping at
// limit.
func countNodes(n *yaml.Node, limit int) int {
	count := 0
	var rec func(n *yaml.Node)
	rec = func(n *yaml.Node) {
		if n == nil || count >= limit {
			return
		}
		count++
		for _, c := range n.Content {
			rec(c)
		}
	}
	rec(n)
	return count
}

// markTemplates prefixes every template Helm renders (not partials) with a
// lookup of api naming it; Helm's engine calls the client provider for it
// as the template starts. The mark writes nothing and adds no line. It
// returns the marked template names.
func markTemplates(c *chart.Chart, api string) []string {
	var names []string
	var rec func(c *chart.Chart)
	rec = func(c *chart.Chart) {
		for _, t := range c.Templates {
			if t == nil || strings.HasPrefix(path.Base(t.Name), "_") {
				continue
			}
			name := path.Join(c.ChartFullPath(), t.Name)
			t.Data = append([]byte(markFor(api, name)), t.Data...)
			names = append(names, name)
		}
		for _, d := range c.Dependencies() {
			rec(d)
		}
	}
	rec(c)
	return names
}

func markFor(api, name string) string {
	return `{{if lookup "` + api + `" ` + strconv.Quote(name) + ` "" "x"}}{{end}}`
}

// unmarkError takes the mark's width off column numbers of a template's
// first line in a Helm error.
func unmarkError(msg string, names []string, api string) string {
	for _, n := range names {
		if !strings.Contains(msg, n+":1:") {
			continue
		}
		re := regexp.MustCompile(regexp.QuoteMeta(n) + `:1:([0-9]+)`)
		w := len(markFor(api, n))
		msg = re.ReplaceAllStringFunc(msg, func(s string) string {
			col, _ := strconv.Atoi(s[len(n)+3:])
			return fmt.Sprintf("%s:1:%d", n, max(col-w, 1))
		})
	}
	return msg
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// firstLine is the first line of a message, shortened.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
