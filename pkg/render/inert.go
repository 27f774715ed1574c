package render

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Inert tells from a chart's templates alone, without executing them,
// whether no rendering can write any of markers into its output unless a
// marker is already in a text the output copies: the values, Chart.yaml,
// the chart's other files and their names, the release's names (the
// caller checks those). It holds when:
//
//   - every template parses, and every action only copies: fields of the
//     template data (no method of the values; of .Files only those that
//     copy files or names), through functions whose output is made of
//     their inputs' text (quoted, indented, trimmed, chosen, dumped as
//     YAML) or of fixed words (a comparison's boolean, a hash's hex),
//     control actions, variables, and include or template of a literal
//     name the chart defines (whose body obeys the same rule); no
//     function changes case, so markers compare exactly;
//   - no literal (text, string, template name) holds a marker;
//   - no marker can straddle a literal and a copied value: a literal
//     that may follow an action does not start with the end of a marker,
//     one that may precede an action does not end with its start, two
//     literals that may meet do not make one, and no two actions may meet
//     with nothing, or only a part of a marker, between them (whichever
//     branches run and however often a loop runs); printf of a literal
//     format (%s, %v, %d) is checked as the pieces it prints.
//
// A literal inside a marker (the "-" or "." of the operator's API group)
// lets two actions meet only when the part of the marker before it can
// end an action's output. Given the same checks, an output ends with a
// marker's start only when one text the render copies holds that start
// (a join of two pieces into it would have been refused), so copied says
// whether one does (a file of the chart, its name, the release's names;
// render words such as "true" are added here): nil means any may. Starts
// of one or two bytes always count as held.
//
// An include or template of a name no template defines prints nothing:
// it fails the render when it runs.
//
// why says what rules it out. Anything else (tpl, b64dec, title, lookup,
// a computed format, a template that does not parse…) is not inert: the
// chart renders.
func Inert(templates []*loader.BufferedFile, markers []string, copied func(part string) bool) (ok bool, why string) {
	in := &inertWalk{markers: markers, trees: map[string]*parse.Tree{}, copied: copied}
	for _, m := range markers {
		in.maxLen = max(in.maxLen, len(m))
	}
	for _, f := range templates {
		if f == nil {
			continue
		}
		if in.holdsMarker(f.Name) {
			return false, fmt.Sprintf("the template name %s holds a marker", f.Name)
		}
		t := parse.New(f.Name)
		t.Mode = parse.SkipFuncCheck | parse.ParseComments
		set := map[string]*parse.Tree{}
		if _, err := t.Parse(string(f.Data), "", "", set); err != nil {
			return false, fmt.Sprintf("%s does not parse: %v", f.Name, err)
		}
		for name, tr := range set {
			in.trees[name] = tr
		}
	}
	if copied != nil {
		// Worked out when a literal inside a marker first asks.
		var held func(string) bool
		in.copied = func(s string) bool {
			if held == nil {
				held = in.heldStarts(copied)
			}
			return held(s)
		}
	}
	for name, tr := range in.trees {
		if tr.Root == nil {
			continue
		}
		// A define's output is a value to its callers, which check its
		// edges as any value's: the checks within it suffice.
		if _, err := in.list(tr.Root); err != nil {
			return false, fmt.Sprintf("%s: %v", name, err)
		}
	}
	return true, ""
}

// heldStarts answers which starts of a marker (m[:i], 0 < i < len(m)) an
// output may end with, given copied. A value is a copied text, or pieces
// put together (printf, a define, join) then maybe cut (trunc, trimSuffix,
// splitList…) inside a literal: so a start is held when a copied text or a
// literal holds it, when it is short (one or two bytes), or when a shorter
// held start is followed by a part of the marker that a literal starts
// with (a text of a template, which may follow an action) or holds (a
// string literal: a format, which a verb may precede).
func (in *inertWalk) heldStarts(copied func(string) bool) func(string) bool {
	var texts, literals []string
	for _, tr := range in.trees {
		texts, literals = literalsUnder(tr.Root, texts, literals)
	}
	// A string literal with an escape is a text that is not in the
	// template's source, where copied looks.
	inLiteral := func(s string) bool {
		for _, l := range literals {
			if strings.Contains(l, s) {
				return true
			}
		}
		return false
	}
	startsText := func(s string) bool {
		for _, t := range texts {
			if strings.HasPrefix(t, s) {
				return true
			}
		}
		return inLiteral(s)
	}
	held := map[string]bool{}
	for _, m := range in.markers {
		ok := make([]bool, len(m))
		// A text that holds a start holds the shorter ones: the first
		// start none holds ends the search.
		for i := 1; i < len(m) && (i < 3 || copied(m[:i]) || inLiteral(m[:i])); i++ {
			ok[i] = true
		}
		for i := 1; i < len(m); i++ {
			if !ok[i] {
				continue
			}
			// Likewise a literal that starts with (holds) a part.
			for j := i + 1; j < len(m) && startsText(m[i:j]); j++ {
				ok[j] = true
			}
		}
		for i := 1; i < len(m); i++ {
			if ok[i] {
				held[m[:i]] = true
			}
		}
	}
	return func(s string) bool { return held[s] }
}

// literalsUnder appends to texts the texts under n and to literals its
// string literals.
func literalsUnder(n parse.Node, texts, literals []string) ([]string, []string) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				texts, literals = literalsUnder(c, texts, literals)
			}
		}
	case *parse.TextNode:
		texts = append(texts, string(n.Text))
	case *parse.ActionNode:
		texts, literals = literalsUnder(n.Pipe, texts, literals)
	case *parse.IfNode:
		texts, literals = literalsUnder(&n.BranchNode, texts, literals)
	case *parse.RangeNode:
		texts, literals = literalsUnder(&n.BranchNode, texts, literals)
	case *parse.WithNode:
		texts, literals = literalsUnder(&n.BranchNode, texts, literals)
	case *parse.BranchNode:
		texts, literals = literalsUnder(n.Pipe, texts, literals)
		texts, literals = literalsUnder(n.List, texts, literals)
		texts, literals = literalsUnder(n.ElseList, texts, literals)
	case *parse.TemplateNode:
		texts, literals = literalsUnder(n.Pipe, texts, literals)
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				texts, literals = literalsUnder(c, texts, literals)
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			texts, literals = literalsUnder(a, texts, literals)
		}
	case *parse.ChainNode:
		texts, literals = literalsUnder(n.Node, texts, literals)
	case *parse.StringNode:
		literals = append(literals, n.Text)
	}
	return texts, literals
}

// CopiedBy answers, for Inert, whether a text that a render of the chart
// of files can copy holds s: a file, a file's name, one of texts (the
// release's names), or what Helm's engine and text/template print of their
// own (the capabilities, booleans, "<nil>", fmt's wrappers, hex digits…).
func CopiedBy(files []*loader.BufferedFile, texts ...string) func(string) bool {
	return func(s string) bool {
		if strings.Contains(engineWords(), s) {
			return true
		}
		for _, t := range texts {
			if strings.Contains(t, s) {
				return true
			}
		}
		for _, f := range files {
			if strings.Contains(f.Name, s) || bytes.Contains(f.Data, []byte(s)) {
				return true
			}
		}
		return false
	}
}

// engineWords are the texts a render prints that no file of the chart
// gives: Helm's default capabilities and release fields, and what
// text/template and fmt print for values (generously: more words only
// settle fewer charts).
var engineWords = sync.OnceValue(func() string {
	c := chartutil.DefaultCapabilities
	return strings.Join([]string{
		strings.Join(c.APIVersions, " "), c.KubeVersion.Version, c.KubeVersion.Major, c.KubeVersion.Minor,
		c.HelmVersion.Version, c.HelmVersion.GitCommit, c.HelmVersion.GitTreeState, c.HelmVersion.GoVersion,
		"Helm true false <nil> <no value> map[] [] {} &{} null ~ 0x0123456789abcdef +-.eInfNaN",
		"%!(PANIC=String method: runtime error: invalid memory address or nil pointer dereference) %!(BADINDEX) %!(EXTRA %!(MISSING) %!(NOVERB) %!(BADWIDTH) %!(BADPREC)",
		"float64 float32 int64 int32 int uint8 uint string bool interface {} []interface {} map[string]interface {} []string",
		// kindOf
		"invalid int8 int16 uint16 uint32 uint64 uintptr complex64 complex128 array chan func map ptr slice struct unsafe.Pointer",
	}, "\n")
})

// inertFuncs are the functions whose output is made of their inputs'
// text (quoted, indented, trimmed, chosen among them, dumped as YAML with
// ASCII escapes the caller rules out) or of a few fixed words (booleans,
// numbers, a hash's hex digits): none can build a marker from parts.
var inertFuncs = map[string]bool{}

func init() {
	// No function here changes case, so markers compare exactly (as the
	// loader matches kinds and keys); dict and list print their parts
	// apart ("map[k:v]", "[a b]"); join is checked as the values and
	// separators it prints (command); lookup finds nothing in a render
	// without a cluster (markProvider, and Helm's engine without one):
	// "map[]".
	for _, fn := range strings.Fields(`quote squote default indent nindent toYaml trim trimSuffix trimPrefix trunc
		required include and or not eq ne lt le gt ge empty contains hasPrefix hasSuffix hasKey len
		semverCompare coalesce ternary kindIs typeIs sha256sum fail index dict list get
		max min splitList keys printf has mustHas toString int int64 float64 atoi
		first last mustFirst mustLast rest initial append mustAppend prepend concat
		merge mergeOverwrite deepCopy set unset pick omit pluck values regexMatch trimAll
		add add1 sub mul div mod lookup join dig print until untilStep kindOf`) {
		inertFuncs[fn] = true
	}
}

// inertWalk checks the trees of a chart's templates (Inert).
type inertWalk struct {
	markers []string
	maxLen  int // of a marker
	trees   map[string]*parse.Tree
	copied  func(string) bool // nil: any text
}

// piece is what may start or end a list's output: a literal's head or
// tail, or a copied value (print; a literal that is a part of a marker
// counts as one, so that two values around it are caught).
type piece struct {
	print bool
	text  string // head or tail, at most maxLen bytes; a print's: the part of a marker it stands for
}

// outSpan sums a list's output for the boundary checks: the pieces it may
// start and end with, and whether it may print nothing.
type outSpan struct {
	first, last []piece
	empty       bool
}

// maxPieces bounds an outSpan's piece sets (a chart of many optional
// literals in a row is not worth the proof).
const maxPieces = 64

func (in *inertWalk) holdsMarker(s string) bool {
	for _, m := range in.markers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// join checks the boundary of a piece a and the piece b after it.
func (in *inertWalk) join(a, b piece) error {
	switch {
	case a.print && b.print:
		if part := a.text + b.text; part != "" {
			return fmt.Errorf("may print two values with only %q between them, a part of a marker", part)
		}
		return fmt.Errorf("may print two values with nothing but a part of a marker between them")
	case a.print:
		for _, m := range in.markers {
			if startsWithEndOf(b.text, m) {
				return fmt.Errorf("a text after an action starts with the end of %q", m)
			}
		}
	case b.print:
		for _, m := range in.markers {
			if startsWithEndOf(reverse(a.text), reverse(m)) {
				return fmt.Errorf("a text before an action ends with the start of %q", m)
			}
		}
	default:
		if in.holdsMarker(a.text + b.text) {
			return fmt.Errorf("two texts meet in a marker")
		}
	}
	return nil
}

// seq is x then y, checked where they meet.
func (in *inertWalk) seq(x, y outSpan) (outSpan, error) {
	for _, a := range x.last {
		for _, b := range y.first {
			if err := in.join(a, b); err != nil {
				return outSpan{}, err
			}
		}
	}
	out := outSpan{first: x.first, last: y.last, empty: x.empty && y.empty}
	if x.empty {
		out.first = union(out.first, y.first)
	}
	if y.empty {
		out.last = union(out.last, x.last)
	}
	if len(out.first) > maxPieces || len(out.last) > maxPieces {
		return outSpan{}, fmt.Errorf("has too many optional texts in a row")
	}
	return out, nil
}

// alt is x or y.
func alt(x, y outSpan) outSpan {
	return outSpan{first: union(x.first, y.first), last: union(x.last, y.last), empty: x.empty || y.empty}
}

func union(a, b []piece) []piece {
	out := append([]piece(nil), a...)
	for _, p := range b {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func (in *inertWalk) list(l *parse.ListNode) (outSpan, error) {
	s := outSpan{empty: true}
	if l == nil {
		return s, nil
	}
	for _, n := range l.Nodes {
		x, err := in.node(n)
		if err != nil {
			return outSpan{}, err
		}
		if s, err = in.seq(s, x); err != nil {
			return outSpan{}, err
		}
	}
	return s, nil
}

var printed = outSpan{first: []piece{{print: true}}, last: []piece{{print: true}}}

func (in *inertWalk) node(n parse.Node) (outSpan, error) {
	switch n := n.(type) {
	case *parse.TextNode:
		s := string(n.Text)
		if len(s) == 0 {
			return outSpan{empty: true}, nil
		}
		if in.holdsMarker(s) {
			return outSpan{}, fmt.Errorf("its text holds a marker")
		}
		return in.text(s), nil
	case *parse.CommentNode, *parse.BreakNode, *parse.ContinueNode:
		return outSpan{empty: true}, nil
	case *parse.ActionNode:
		if err := in.pipe(n.Pipe); err != nil {
			return outSpan{}, err
		}
		if len(n.Pipe.Decl) > 0 || endsInFail(n.Pipe) {
			return outSpan{empty: true}, nil
		}
		return printed, nil
	case *parse.IfNode:
		return in.branch(n.Pipe, n.List, n.ElseList, false)
	case *parse.WithNode:
		return in.branch(n.Pipe, n.List, n.ElseList, false)
	case *parse.RangeNode:
		return in.branch(n.Pipe, n.List, n.ElseList, true)
	case *parse.TemplateNode:
		if _, ok := in.trees[n.Name]; !ok {
			return outSpan{empty: true}, nil // fails the render when it runs
		}
		if n.Pipe != nil {
			if err := in.pipe(n.Pipe); err != nil {
				return outSpan{}, err
			}
		}
		return printed, nil
	}
	return outSpan{}, fmt.Errorf("uses %s, which may build text", nodeKind(n))
}

// endsInFail reports whether p ends in fail, which prints nothing (the
// render stops).
func endsInFail(p *parse.PipeNode) bool {
	if len(p.Cmds) == 0 || len(p.Cmds[len(p.Cmds)-1].Args) == 0 {
		return false
	}
	id, ok := p.Cmds[len(p.Cmds)-1].Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == "fail"
}

// branch sums a control action: one of its bodies runs, or none; a
// loop's body may follow itself.
func (in *inertWalk) branch(p *parse.PipeNode, then, els *parse.ListNode, loop bool) (outSpan, error) {
	if err := in.pipe(p); err != nil {
		return outSpan{}, err
	}
	t, err := in.list(then)
	if err != nil {
		return outSpan{}, err
	}
	if loop {
		if _, err := in.seq(t, t); err != nil {
			return outSpan{}, err
		}
	}
	e, err := in.list(els)
	if err != nil {
		return outSpan{}, err
	}
	if els == nil {
		e = outSpan{empty: true}
	}
	return alt(t, e), nil
}

// text is the span of a literal s that holds no marker: its head and
// tail, or a copied value's wildcard when it may join the values around it
// into a marker (mayJoinAcross).
func (in *inertWalk) text(s string) outSpan {
	if in.mayJoinAcross(s) {
		p := []piece{{print: true, text: s}}
		return outSpan{first: p, last: p}
	}
	head, tail := s[:min(len(s), in.maxLen)], s[max(0, len(s)-in.maxLen):]
	return outSpan{first: []piece{{text: head}}, last: []piece{{text: tail}}}
}

// mayJoinAcross reports whether a literal s lies inside a marker (neither
// at its start nor at its end) where the part before it may end a value
// (copied). Where s starts or ends a marker, the checks of its edges as a
// text suffice.
func (in *inertWalk) mayJoinAcross(s string) bool {
	for _, m := range in.markers {
		for from := 0; ; {
			k := strings.Index(m[from:], s)
			if k < 0 {
				break
			}
			at := from + k
			if at > 0 && at+len(s) < len(m) && (in.copied == nil || in.copied(m[:at])) {
				return true
			}
			from = at + 1
		}
	}
	return false
}

func (in *inertWalk) pipe(p *parse.PipeNode) error {
	if p == nil {
		return fmt.Errorf("has an empty pipeline")
	}
	for i, c := range p.Cmds {
		if err := in.command(c, i > 0); err != nil {
			return err
		}
	}
	return nil
}

// command checks one command of a pipeline; piped says that it gets the
// previous command's value as its last argument.
func (in *inertWalk) command(c *parse.CommandNode, piped bool) error {
	if len(c.Args) == 0 {
		return fmt.Errorf("has an empty command")
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		if !inertFuncs[id.Ident] {
			return fmt.Errorf("calls %s, which may build text", id.Ident)
		}
		switch id.Ident {
		case "include":
			// A name no template defines fails the render when it runs.
			if _, ok := arg(c.Args, 1).(*parse.StringNode); !ok {
				return fmt.Errorf("includes a template by a computed name")
			}
		case "printf":
			if err := in.printf(c.Args[1:], piped); err != nil {
				return err
			}
		case "print":
			// One value is printed as it is; more meet with nothing
			// between them (or a space, by fmt's rules).
			n := len(c.Args) - 1
			if piped {
				n++
			}
			if n != 1 {
				return fmt.Errorf("calls print with %d values", n)
			}
		case "join":
			// Values with a literal separator between them, as often as
			// the list is long.
			sep, ok := arg(c.Args, 1).(*parse.StringNode)
			if !ok {
				return fmt.Errorf("calls join with a computed separator")
			}
			if in.holdsMarker(sep.Text) {
				return fmt.Errorf("a join separator holds a marker")
			}
			if sep.Text != "" {
				x, err := in.seq(printed, in.text(sep.Text))
				if err == nil {
					_, err = in.seq(x, printed)
				}
				if err != nil {
					return fmt.Errorf("join: %w", err)
				}
			} else if _, err := in.seq(printed, printed); err != nil {
				return fmt.Errorf("join: %w", err)
			}
		}
		for _, a := range c.Args[1:] {
			if err := in.operand(a); err != nil {
				return err
			}
		}
		return nil
	}
	if len(c.Args) > 1 {
		// A method call: only those of .Files that copy files or names
		// (the caller checks them all), and .Capabilities.APIVersions.Has.
		chain := chainOf(c.Args[0])
		if !filesMethods[strings.TrimPrefix(chain, "Files.")] && chain != "Capabilities.APIVersions.Has" {
			return fmt.Errorf("calls a method that may build text")
		}
		for _, a := range c.Args[1:] {
			if err := in.operand(a); err != nil {
				return err
			}
		}
		return nil
	}
	return in.operand(c.Args[0])
}

// printf checks a printf call of args (the format first; piped: one more
// argument comes from the pipeline) as the sequence of the format's
// literals and the values its verbs print: a literal format of %s, %v,
// %d and %% only, one verb per argument.
func (in *inertWalk) printf(args []parse.Node, piped bool) error {
	format, ok := arg(args, 0).(*parse.StringNode)
	if !ok {
		return fmt.Errorf("calls printf with a computed format")
	}
	if in.holdsMarker(format.Text) {
		return fmt.Errorf("a printf format holds a marker")
	}
	out, lit, verbs := outSpan{empty: true}, "", 0
	flush := func() error {
		if lit == "" {
			return nil
		}
		var err error
		out, err = in.seq(out, in.text(lit))
		lit = ""
		return err
	}
	f := format.Text
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit += f[i : i+1]
			continue
		}
		if i+1 == len(f) || !strings.ContainsRune("svd%", rune(f[i+1])) {
			return fmt.Errorf("calls printf with a format other than %%s, %%v and %%d")
		}
		i++
		if f[i] == '%' {
			lit += "%"
			continue
		}
		if err := flush(); err != nil {
			return fmt.Errorf("printf: %w", err)
		}
		var err error
		if out, err = in.seq(out, printed); err != nil {
			return fmt.Errorf("printf: %w", err)
		}
		verbs++
	}
	if err := flush(); err != nil {
		return fmt.Errorf("printf: %w", err)
	}
	n := len(args) - 1
	if piped {
		n++
	}
	if verbs != n {
		return fmt.Errorf("calls printf with %d verbs for %d values", verbs, n)
	}
	return nil
}

// filesMethods are the methods of .Files whose output copies the chart's
// files or their names (AsSecrets encodes them).
var filesMethods = map[string]bool{"Get": true, "GetBytes": true, "Glob": true, "Lines": true, "AsConfig": true}

func arg(args []parse.Node, i int) parse.Node {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// chainOf is the field chain of a field or $-variable node, "" for
// anything else.
func chainOf(n parse.Node) string {
	switch f := n.(type) {
	case *parse.FieldNode:
		return strings.Join(f.Ident, ".")
	case *parse.VariableNode:
		if len(f.Ident) > 0 && f.Ident[0] == "$" {
			return strings.Join(f.Ident[1:], ".")
		}
	}
	return ""
}

func (in *inertWalk) operand(n parse.Node) error {
	switch n := n.(type) {
	case *parse.StringNode:
		if in.holdsMarker(n.Text) {
			return fmt.Errorf("a string literal holds a marker")
		}
		return nil
	case *parse.NumberNode, *parse.BoolNode, *parse.NilNode, *parse.DotNode:
		return nil
	case *parse.FieldNode:
		return fieldsInert(n.Ident)
	case *parse.VariableNode:
		return fieldsInert(n.Ident[1:])
	case *parse.ChainNode:
		for _, f := range n.Field {
			if err := fieldsInert([]string{f}); err != nil {
				return err
			}
		}
		return in.operand(n.Node)
	case *parse.PipeNode:
		return in.pipe(n)
	case *parse.IdentifierNode:
		if inertFuncs[n.Ident] {
			return nil
		}
		return fmt.Errorf("calls %s, which may build text", n.Ident)
	}
	return fmt.Errorf("uses %s, which may build text", nodeKind(n))
}

// fieldsInert refuses a field chain that may call a method building text
// (the values' YAML is a copy, but their other methods, and .Files's
// AsSecrets, encode or compute).
func fieldsInert(idents []string) error {
	for i, id := range idents {
		// AsSecrets encodes, however .Files was reached.
		if (valuesMethods[id] && id != "YAML") || id == "AsSecrets" || (i > 0 && idents[i-1] == "Files" && !filesMethods[id]) {
			return fmt.Errorf("reads .%s, which may build text", strings.Join(idents, "."))
		}
	}
	return nil
}

// startsWithEndOf reports whether s starts with a nonempty proper suffix
// of m.
func startsWithEndOf(s, m string) bool {
	for k := 1; k < len(m); k++ {
		if strings.HasPrefix(s, m[k:]) {
			return true
		}
	}
	return false
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
