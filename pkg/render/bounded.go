package render

// The fast path: charts whose templates are proven bounded render in the
// verifier's own process. A render child costs a process start, gob
// encoding and pipe copies per chart, and on a tree of a few charts its
// start is on the critical path; yet a real provider chart is a few lines
// of YAML around `.Files.Get "files/components.gz" | b64enc` and
// `.Files.Get "files/metadata.yaml" | nindent 4`, which cannot loop,
// recurse or blow up. Bounded proves that of a loaded chart, statically,
// from the templates' syntax trees, the sizes of the chart's files and the
// chart's computed values:
//
//   - no loop, no recursion: no range, define, template, block, include,
//     tpl, variables or function outside a short list whose output is a
//     known function of its input's size (b64enc, indent with a small
//     literal width, quote, trim…), so every action runs at most once and
//     the work is linear in the output bound;
//   - work: every value a function builds or reads, and every file read,
//     whether printed or not (a condition, `len`, `eq` and `contains`
//     run the pipeline under them and print a few bytes), counts in a
//     bound of what the render builds in all: a multiple of the output
//     bound, so a chain of quotes under `len` cannot build gigabytes;
//   - output: literal text plus, for each action, the size of what it
//     reads (a file's exact size, the release's exact names, a bound of
//     the printed values) through the functions' expansion factors is at
//     most the render output bound, a fixed fast-path cap and an eighth of
//     the render memory bound (a render holds a few copies of its output);
//   - parse: the YAML nodes the output can hold (at most about two per
//     ':', '-', ',', '[', '{', '?' or line break in it, counted in the
//     literal text and in every file that reaches the output unencoded)
//     stay under a fixed cap, so parsing the output in this process is
//     bounded too (a file of millions of tiny YAML nodes goes to the child).
//
// Anything not understood is not proven and renders in the child as
// before: the fast path never adds a finding or changes one.

import (
	"context"
	"fmt"
	"io"
	"path"
	"reflect"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/pinseal/pinseal/internal/yamlbound"
)

// Fast-path caps, below the render bounds.
const (
	// FastMaxTemplate bounds one template's source, FastMaxTemplates
	// their total, FastMaxTemplateCount their number.
	FastMaxTemplate      = 64 << 10
	FastMaxTemplates     = 256 << 10
	FastMaxTemplateCount = 64
	// FastMaxOutput bounds the proven output of a chart (real provider
	// charts render a compressed, base64-encoded components blob: a few
	// MiB at most).
	FastMaxOutput = 32 << 20
	// FastMaxNodes bounds the YAML nodes the proven output may hold.
	FastMaxNodes = 50000
	// fastMaxIndent bounds a literal indent or nindent width.
	fastMaxIndent = 256
	// fastMemFactor is how many copies of its output a render may hold at
	// once (the engine's buffer, the string without "<no value>", the
	// intermediate strings of a pipeline, the parsed documents).
	fastMemFactor = 8
	// fastWorkFactor bounds, as a multiple of the output bound, the bytes
	// the functions and file reads of a render may build or read in all
	// (their arguments and results, printed or not): half the memory
	// bound at most, and time linear in it.
	fastWorkFactor = 4
	// fastBytesPerSecond is the output a proven render may have for each
	// second of the render time bound: YAML text without indicators
	// parses at about 16 MiB a second on one core, and the output is
	// parsed twice.
	fastBytesPerSecond = 4 << 20
)

// FastCandidate tells from a chart's files alone, cheaply, whether it may
// take the fast path (Bounded decides once it is loaded): no subchart,
// packed or not, no values schema, and templates within the fast-path
// caps. why says what rules it out.
func FastCandidate(files []*loader.BufferedFile) (ok bool, why string) {
	count, total := 0, 0
	for _, f := range files {
		switch {
		case strings.HasPrefix(f.Name, "charts/"):
			return false, "it has subcharts (" + f.Name + ")"
		case strings.HasSuffix(f.Name, ".tgz"):
			return false, "it has a packed file (" + f.Name + ")"
		case path.Base(f.Name) == "values.schema.json":
			return false, "it has a values schema (" + f.Name + ")"
		case strings.HasPrefix(f.Name, "templates/"):
			count++
			total += len(f.Data)
			if len(f.Data) > FastMaxTemplate {
				return false, fmt.Sprintf("template %s is over %d bytes", f.Name, FastMaxTemplate)
			}
		}
	}
	if count > FastMaxTemplateCount {
		return false, fmt.Sprintf("it has over %d templates", FastMaxTemplateCount)
	}
	if total > FastMaxTemplates {
		return false, fmt.Sprintf("its templates are over %d bytes in all", FastMaxTemplates)
	}
	return true, ""
}

// fastMaxLoaderFile bounds each file Helm's loader decodes itself
// (Chart.yaml, values.yaml, lock files) on the fast path: real ones are
// a few KiB.
const fastMaxLoaderFile = 256 << 10

// CheckLoaderFiles measures, before anything decodes them, the files
// Helm's loader decodes (Chart.yaml, values.yaml, lock files) as decoding
// would expand them (yamlbound: parsed once into nodes that keep aliases
// as pointers), against the parse bounds in all: a chart may load in this
// process (CheckChartFiles, then Helm's loader, both decode fully) only
// when they pass. A 1 KB values.yaml of aliases decodes to gigabytes.
func CheckLoaderFiles(files []*loader.BufferedFile) (ok bool, why string) {
	b := &yamlbound.Budget{Limits: yamlbound.Limits{MaxNodes: MaxChartValueNodes, MaxScalarBytes: MaxChartValueBytes}}
	for _, f := range files {
		if !chartLoaderFiles[f.Name] {
			continue
		}
		if len(f.Data) > fastMaxLoaderFile {
			return false, fmt.Sprintf("%s is over %d bytes", f.Name, fastMaxLoaderFile)
		}
		if err := b.Measure(f.Data); err != nil {
			return false, fmt.Sprintf("%s: %v", f.Name, err)
		}
	}
	return true, ""
}

// Proof is what Bounded found: OK when the chart may render in process,
// else Why not; Output and Nodes bound the rendered bytes (before Helm
// drops "<no value>") and the YAML nodes of the output, Work the bytes
// its functions and file reads build or read, printed or not.
type Proof struct {
	OK                  bool
	Why                 string
	Output, Nodes, Work int64
}

// Bounded proves (or not) that rendering chrt with vals (as Values
// computed them, for release and namespace) in this process is bounded in
// time, memory and output within lim (see the top of this file). It reads
// the templates' syntax only; it executes nothing.
func Bounded(chrt *chart.Chart, vals chartutil.Values, lim Limits) Proof {
	lim = lim.WithDefaults()
	if len(chrt.Dependencies()) > 0 || len(chrt.Schema) > 0 || chrt.Metadata == nil || len(chrt.Metadata.Dependencies) > 0 {
		return Proof{Why: "it has subcharts, dependencies or a values schema"}
	}
	if len(chrt.Templates) > FastMaxTemplateCount {
		return Proof{Why: fmt.Sprintf("it has over %d templates", FastMaxTemplateCount)}
	}
	a := &analysis{chrt: chrt, vals: vals}
	total := 0
	for _, t := range chrt.Templates {
		if t == nil {
			continue
		}
		total += len(t.Data)
		if len(t.Data) > FastMaxTemplate || total > FastMaxTemplates {
			return Proof{Why: "its templates are over the fast-path size"}
		}
		if err := a.template(t.Name, string(t.Data)); err != nil {
			return Proof{Why: fmt.Sprintf("%s: %v", t.Name, err), Output: a.out, Nodes: a.nodes, Work: a.work}
		}
	}
	limit := fastLimit(lim)
	p := Proof{Output: a.out, Nodes: a.nodes, Work: a.work}
	switch {
	case a.out > limit:
		p.Why = fmt.Sprintf("its output may reach %d bytes, over the fast path's %d", a.out, limit)
	case a.work > fastWorkFactor*limit:
		p.Why = fmt.Sprintf("its functions and file reads may build %d bytes, over the fast path's %d", a.work, fastWorkFactor*limit)
	case a.nodes > FastMaxNodes:
		p.Why = fmt.Sprintf("its output may hold %d YAML nodes, over the fast path's %d", a.nodes, FastMaxNodes)
	default:
		p.OK = true
	}
	return p
}

// fastLimit is the output bound of a proven chart under lim (defaults
// applied): within the render output bound, the fast-path cap, an eighth
// of the render memory bound, and what this process renders and parses
// (twice: keepRendered, then the loader) well within the render time
// bound, which a child would be held to.
func fastLimit(lim Limits) int64 {
	return min(lim.MaxOutput, FastMaxOutput, lim.MaxMemory/fastMemFactor, int64(lim.Timeout.Seconds()*fastBytesPerSecond))
}

// withinProof reports whether what Helm rendered is within the bounds
// any proof allows (output and YAML nodes), checked again before the
// output is parsed in this process, whatever the proof said.
func withinProof(rendered map[string]string, lim Limits) bool {
	total, _ := outputSize(rendered)
	if total > fastLimit(lim.WithDefaults()) {
		return false
	}
	var nodes int64
	for _, text := range rendered {
		ind, _ := indicators(text)
		nodes += nodesOf(ind)
	}
	return nodes <= FastMaxNodes
}

// analysis sums the bounds of a chart's templates.
type analysis struct {
	chrt   *chart.Chart
	vals   chartutil.Values
	out    int64             // bytes the templates may write
	work   int64             // bytes their functions and file reads may build or read
	nodes  int64             // YAML nodes their output may hold
	values *aval             // bound of the printed values, once computed
	known  map[string]aval   // counts of known texts (known)
	files  map[string][]byte // the chart's files by name, once indexed
}

// aval is the abstract value of a pipeline: a bound of its size when
// printed (or taken as a string), and of the YAML indicators and line
// breaks in it.
type aval struct {
	size     int64
	ind, nl  int64
	isValues bool // a part of .Values: fields of it are values too
	isRoot   bool // the template's data (dot at the top)
}

// maxBound caps every bound: far over any limit, and low enough that the
// sums and products of bounds cannot overflow (a chain of 40 quotes would
// otherwise wrap 4^40 round to a small number).
const maxBound = 1 << 40

// clamped caps v's bounds at maxBound.
func (v *aval) clamped() *aval {
	v.size, v.ind, v.nl = min(v.size, maxBound), min(v.ind, maxBound), min(v.nl, maxBound)
	return v
}

// known is the abstract value of a known text (a file, a name of the
// release or the chart): its YAML indicators are counted once per key
// however often the templates read it, so that the proof's time stays
// linear in the chart (thousands of reads of a large file are refused
// for their output, not after scanning it thousands of times).
func known[T string | []byte](a *analysis, key string, text T) *aval {
	c, ok := a.known[key]
	if !ok {
		c.ind, c.nl = indicators(text)
		if a.known == nil {
			a.known = map[string]aval{}
		}
		a.known[key] = c
	}
	return &aval{size: int64(len(text)), ind: c.ind, nl: c.nl}
}

// indicators counts the bytes of b that may start a YAML node (':', '-',
// ',', '[', '{', '?', line break), and the line breaks.
func indicators[T string | []byte](b T) (ind, nl int64) {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			nl++
			ind++
		case ':', '-', ',', '[', '{', '?':
			ind++
		}
	}
	return ind, nl
}

// nodesOf bounds the YAML nodes text with ind indicators can hold.
func nodesOf(ind int64) int64 { return 2*ind + 2 }

// noValue is what text/template prints for a missing value (Helm drops it
// after the render).
const noValue = int64(len("<no value>"))

func (a *analysis) template(name, text string) error {
	t := parse.New(name)
	t.Mode = parse.SkipFuncCheck
	set := map[string]*parse.Tree{}
	if _, err := t.Parse(text, "", "", set); err != nil {
		return fmt.Errorf("does not parse: %w", err) // the child says where Helm fails
	}
	if len(set) > 1 {
		return fmt.Errorf("defines templates")
	}
	a.nodes += 2 // a template's output is at least one document
	if t.Root == nil {
		return nil
	}
	return a.list(t.Root, &aval{isRoot: true})
}

func (a *analysis) list(l *parse.ListNode, dot *aval) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if err := a.node(n, dot); err != nil {
			return err
		}
	}
	return nil
}

func (a *analysis) node(n parse.Node, dot *aval) error {
	switch n := n.(type) {
	case *parse.TextNode:
		ind, _ := indicators(n.Text)
		a.out += int64(len(n.Text))
		a.nodes += nodesOf(ind)
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := a.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		if v.isRoot {
			return fmt.Errorf("prints the whole template data")
		}
		a.out += max(v.size, noValue)
		a.nodes += nodesOf(v.ind)
	case *parse.IfNode:
		if _, err := a.pipe(n.Pipe, dot); err != nil {
			return err
		}
		return a.branches(n.List, n.ElseList, dot, dot)
	case *parse.WithNode:
		v, err := a.pipe(n.Pipe, dot)
		if err != nil {
			return err
		}
		return a.branches(n.List, n.ElseList, v, dot)
	default:
		return fmt.Errorf("uses %s, which the fast path does not bound", nodeKind(n))
	}
	return nil
}

// branches adds both branches of an if or with (only one runs: the sum
// bounds either).
func (a *analysis) branches(then, els *parse.ListNode, thenDot, elseDot *aval) error {
	if err := a.list(then, thenDot); err != nil {
		return err
	}
	return a.list(els, elseDot)
}

func nodeKind(n parse.Node) string {
	switch n.(type) {
	case *parse.RangeNode:
		return "range"
	case *parse.TemplateNode:
		return "template or block"
	case *parse.BreakNode, *parse.ContinueNode:
		return "break or continue"
	case *parse.ChainNode:
		return "a field of a parenthesized pipeline"
	case *parse.VariableNode:
		return "variables"
	}
	return fmt.Sprintf("a %T", n)
}

// pipe bounds a pipeline: each command gets the previous one's value as
// its last argument.
func (a *analysis) pipe(p *parse.PipeNode, dot *aval) (*aval, error) {
	if p == nil {
		return nil, fmt.Errorf("has an empty pipeline")
	}
	if len(p.Decl) > 0 || p.IsAssign {
		return nil, fmt.Errorf("declares variables")
	}
	var prev *aval
	for _, c := range p.Cmds {
		v, err := a.command(c, dot, prev)
		if err != nil {
			return nil, err
		}
		prev = v
	}
	if prev == nil {
		return nil, fmt.Errorf("has an empty pipeline")
	}
	return prev, nil
}

// command bounds one command of a pipeline; piped is the previous
// command's value (nil for the first).
func (a *analysis) command(c *parse.CommandNode, dot, piped *aval) (*aval, error) {
	if len(c.Args) == 0 {
		return nil, fmt.Errorf("has an empty command")
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		args := make([]*aval, 0, len(c.Args))
		for _, n := range c.Args[1:] {
			v, err := a.operand(n, dot)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		if piped != nil {
			args = append(args, piped)
		}
		if !fastFuncs[id.Ident] {
			return nil, fmt.Errorf("calls %s, which the fast path does not bound", id.Ident)
		}
		for _, v := range args {
			if v.isRoot {
				// Its size is not bounded: only fields of it are.
				return nil, fmt.Errorf("passes the whole template data to %s", id.Ident)
			}
		}
		v, err := a.call(id.Ident, c.Args[1:], args)
		if err != nil {
			return nil, err
		}
		v.clamped()
		// The function reads its arguments (eq compares them, and its
		// error prints them) and builds its result, printed or not.
		for _, arg := range args {
			a.spend(arg.size)
		}
		a.spend(v.size)
		return v, nil
	}
	if piped != nil {
		return nil, fmt.Errorf("pipes into something other than a function")
	}
	if len(c.Args) == 2 {
		if fv, ok := a.filesGet(c.Args[0], c.Args[1], dot); ok {
			a.spend(fv.size) // Files.Get copies the file into a string
			return fv, nil
		}
	}
	if len(c.Args) > 1 {
		return nil, fmt.Errorf("calls a method the fast path does not bound")
	}
	return a.operand(c.Args[0], dot)
}

// spend adds n bytes built or read to the work bound, saturating at
// maxBound.
func (a *analysis) spend(n int64) { a.work = min(a.work+min(n, maxBound), maxBound) }

// filesGet bounds `.Files.Get "name"` (or `$.Files.Get`): the file's
// exact content, as Helm's Files.Get answers it ("" when missing).
func (a *analysis) filesGet(fn, arg parse.Node, dot *aval) (*aval, bool) {
	name, ok := arg.(*parse.StringNode)
	if !ok {
		return nil, false
	}
	var idents []string
	switch f := fn.(type) {
	case *parse.FieldNode:
		if !dot.isRoot {
			return nil, false
		}
		idents = f.Ident
	case *parse.VariableNode:
		if len(f.Ident) == 0 || f.Ident[0] != "$" {
			return nil, false
		}
		idents = f.Ident[1:]
	default:
		return nil, false
	}
	if len(idents) != 2 || idents[0] != "Files" || idents[1] != "Get" {
		return nil, false
	}
	if a.files == nil {
		// As Helm's Files: the last file of a name.
		a.files = map[string][]byte{}
		for _, f := range a.chrt.Files {
			if f != nil {
				a.files[f.Name] = f.Data
			}
		}
	}
	return known(a, "file "+name.Text, a.files[name.Text]), true // "" when missing
}

// operand bounds an argument of a command.
func (a *analysis) operand(n parse.Node, dot *aval) (*aval, error) {
	switch n := n.(type) {
	case *parse.StringNode:
		ind, nl := indicators(n.Text) // each literal is read once
		return &aval{size: int64(len(n.Text)), ind: ind, nl: nl}, nil
	case *parse.NumberNode, *parse.BoolNode, *parse.NilNode:
		return &aval{size: int64(len(n.String())) + 32, ind: 2}, nil
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return a.field(n.Ident, dot)
	case *parse.VariableNode:
		if len(n.Ident) == 0 || n.Ident[0] != "$" {
			return nil, fmt.Errorf("uses variables")
		}
		if len(n.Ident) == 1 {
			return &aval{isRoot: true}, nil
		}
		return a.field(n.Ident[1:], &aval{isRoot: true})
	case *parse.PipeNode:
		return a.pipe(n, dot)
	}
	return nil, fmt.Errorf("uses %s, which the fast path does not bound", nodeKind(n))
}

// releaseFields are the .Release fields a template may print: short
// words and numbers besides Name and Namespace.
var releaseFields = map[string]bool{"IsInstall": true, "IsUpgrade": true, "Revision": true, "Service": true}

// field bounds a chain of fields on dot.
func (a *analysis) field(idents []string, dot *aval) (*aval, error) {
	if dot.isValues {
		return a.valuesField(idents)
	}
	if !dot.isRoot || len(idents) == 0 {
		return nil, fmt.Errorf("reads a field of a value the fast path does not bound")
	}
	switch idents[0] {
	case "Values":
		return a.valuesField(idents[1:])
	case "Release":
		rel, _ := a.vals["Release"].(map[string]any)
		if len(idents) == 2 && (idents[1] == "Name" || idents[1] == "Namespace") {
			if s, ok := rel[idents[1]].(string); ok {
				return known(a, "release "+idents[1], s), nil
			}
		}
		if len(idents) == 2 && releaseFields[idents[1]] {
			return &aval{size: 32, ind: 2}, nil
		}
	case "Chart":
		if md := a.chrt.Metadata; md != nil && len(idents) == 2 {
			if s, ok := metadataField(md, idents[1]); ok {
				return known(a, "chart "+idents[1], s), nil
			}
		}
	}
	return nil, fmt.Errorf("reads .%s, which the fast path does not bound", strings.Join(idents, "."))
}

// metadataField is a string field of Chart.yaml as .Chart gives it.
func metadataField(md *chart.Metadata, name string) (string, bool) {
	switch name {
	case "Name":
		return md.Name, true
	case "Version":
		return md.Version, true
	case "AppVersion":
		return md.AppVersion, true
	case "Description":
		return md.Description, true
	case "KubeVersion":
		return md.KubeVersion, true
	case "Type":
		return md.Type, true
	}
	return "", false
}

// valuesMethods are the methods of chartutil.Values: text/template calls
// a method before it looks a key up, and .Values.YAML prints the values
// as YAML, whose indentation grows with their depth.
var valuesMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range []reflect.Type{reflect.TypeFor[chartutil.Values](), reflect.TypeFor[*chartutil.Values]()} {
		for i := range t.NumMethod() {
			m[t.Method(i).Name] = true
		}
	}
	return m
}()

// valuesField bounds a chain of keys into the values.
func (a *analysis) valuesField(idents []string) (*aval, error) {
	for _, id := range idents {
		if valuesMethods[id] {
			return nil, fmt.Errorf("calls the method %s of the values", id)
		}
	}
	return a.valuesBound()
}

// valuesBound bounds any part of the chart's values when printed: all
// of them printed (fmt's %v, which text/template and strval use).
func (a *analysis) valuesBound() (*aval, error) {
	if a.values == nil {
		var v aval
		if err := printBound(a.vals["Values"], &v, 0); err != nil {
			return nil, err
		}
		v.isValues = true
		a.values = &v
	}
	c := *a.values
	return &c, nil
}

// printBound adds to v the bound of x printed with %v: "map[k:v k:v]",
// "[a b]", scalars (a number or bool at most 32 bytes).
func printBound(x any, v *aval, depth int) error {
	if depth > 1000 {
		return fmt.Errorf("its values nest too deep")
	}
	switch t := x.(type) {
	case map[string]any:
		v.size += 5
		v.ind += 2
		for k, e := range t {
			ind, nl := indicators(k)
			v.size += int64(len(k)) + 2
			v.ind += ind + 1
			v.nl += nl
			if err := printBound(e, v, depth+1); err != nil {
				return err
			}
		}
	case chartutil.Values:
		return printBound(map[string]any(t), v, depth)
	case []any:
		v.size += 2
		v.ind += 2
		for _, e := range t {
			v.size++
			if err := printBound(e, v, depth+1); err != nil {
				return err
			}
		}
	case string:
		ind, nl := indicators(t)
		v.size += int64(len(t))
		v.ind += ind
		v.nl += nl
	case nil, bool, float64, int64, int, int32, uint64:
		v.size += 32
		v.ind += 2
	default:
		return fmt.Errorf("its values hold a %T", x)
	}
	return nil
}

// RenderProven renders chrt, loaded and its values computed (vals) in
// this process, with Helm's engine, and drops the documents that are
// neither providers nor components ConfigMaps as the render child does
// (keepRendered: one implementation for both), so that the loader parses
// exactly what it parses of the child's answer. Only for a chart Bounded
// proved within lim. ok is false when Helm fails or the output passes
// the output or YAML-node bounds of any proof after all (withinProof,
// before anything parses it): the caller then renders the chart in the
// child, which says where it fails, as without the fast path. It takes
// one of the Sandbox's render slots, as a child's render does, so that
// the proven renders at once (and the memory they hold) stay as few as
// the children would be; ok is false when ctx ends first.
func (s *Sandbox) RenderProven(ctx context.Context, chrt *chart.Chart, vals chartutil.Values, files []*loader.BufferedFile, release, namespace string, lim Limits) (out *Rendering, ok bool) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, false
	}
	sources := TemplateSources(chrt)
	rendered, err := engine.Render(chrt, vals)
	if err != nil {
		return nil, false
	}
	if !withinProof(rendered, lim) {
		return nil, false
	}
	res := keepRendered(0, namespace, chrt.Name(), sources, SubchartDirs(files), rendered, release, io.Discard)
	return res.rendering()
}
