package render

import (
	"fmt"
	"slices"
	"strings"
	"text/template/parse"

	"helm.sh/helm/v3/pkg/chart/loader"
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
//     branches run and however often a loop runs).
//
// why says what rules it out. Anything else (printf, tpl, b64dec, title,
// lookup, a template that does not parse…) is not inert: the chart
// renders.
func Inert(templates []*loader.BufferedFile, markers []string) (ok bool, why string) {
	in := &inertWalk{markers: markers, trees: map[string]*parse.Tree{}}
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

// inertFuncs are the functions whose output is made of their inputs'
// text (quoted, indented, trimmed, chosen among them, dumped as YAML with
// ASCII escapes the caller rules out) or of a few fixed words (booleans,
// numbers, a hash's hex digits): none can build a marker from parts.
var inertFuncs = map[string]bool{}

func init() {
	// No function here changes case, so markers compare exactly (as the
	// loader matches kinds and keys); dict and list print their parts
	// apart ("map[k:v]", "[a b]").
	for _, fn := range strings.Fields(`quote squote default indent nindent toYaml trim trimSuffix trimPrefix trunc
		required include and or not eq ne lt le gt ge empty contains hasPrefix hasSuffix hasKey len
		semverCompare coalesce ternary kindIs typeIs sha256sum fail index dict list get
		max min splitList keys`) {
		inertFuncs[fn] = true
	}
}

// inertWalk checks the trees of a chart's templates (Inert).
type inertWalk struct {
	markers []string
	maxLen  int // of a marker
	trees   map[string]*parse.Tree
}

// piece is what may start or end a list's output: a literal's head or
// tail, or a copied value (print; a literal that is a part of a marker
// counts as one, so that two values around it are caught).
type piece struct {
	print bool
	text  string // head or tail, at most maxLen bytes
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
		for _, m := range in.markers {
			if strings.Contains(m, s) {
				return printed, nil
			}
		}
		head, tail := s[:min(len(s), in.maxLen)], s[max(0, len(s)-in.maxLen):]
		return outSpan{first: []piece{{text: head}}, last: []piece{{text: tail}}}, nil
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
			return outSpan{}, fmt.Errorf("calls template %q, which the chart does not define", n.Name)
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

func (in *inertWalk) pipe(p *parse.PipeNode) error {
	if p == nil {
		return fmt.Errorf("has an empty pipeline")
	}
	for _, c := range p.Cmds {
		if err := in.command(c); err != nil {
			return err
		}
	}
	return nil
}

func (in *inertWalk) command(c *parse.CommandNode) error {
	if len(c.Args) == 0 {
		return fmt.Errorf("has an empty command")
	}
	if id, ok := c.Args[0].(*parse.IdentifierNode); ok {
		if !inertFuncs[id.Ident] {
			return fmt.Errorf("calls %s, which may build text", id.Ident)
		}
		if id.Ident == "include" {
			name, ok := arg(c.Args, 1).(*parse.StringNode)
			if !ok {
				return fmt.Errorf("includes a template by a computed name")
			}
			if _, ok := in.trees[name.Text]; !ok {
				return fmt.Errorf("includes %q, which the chart does not define", name.Text)
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
		if (valuesMethods[id] && id != "YAML") || (i > 0 && idents[i-1] == "Files" && !filesMethods[id]) {
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
