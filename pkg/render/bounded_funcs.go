package render

import (
	"fmt"
	"strings"
	"text/template/parse"
)

// The functions a template may call on the fast path, with the bound of
// their output from the bounds of their arguments (Sprig v3 and Go's
// text/template builtins, as Helm v3 gives them). Each runs in time
// linear in its input and output; any other function (printf, repeat,
// until, tpl, include, lookup, toYaml…) keeps the chart in the render
// child.

// fastFuncs are the functions call bounds.
var fastFuncs = map[string]bool{}

func init() {
	for _, fn := range strings.Fields(`b64enc b64dec indent nindent quote squote trim trimSuffix trimPrefix
		trimAll trunc toString lower upper replace default required and or coalesce ternary
		eq ne lt le gt ge not empty contains hasPrefix hasSuffix len`) {
		fastFuncs[fn] = true
	}
}

// boolVal is a function's true or false.
var boolVal = aval{size: 5}

// call bounds the function fn applied to args (their bounds; the piped
// value last); lits are the argument nodes as written (without the piped
// one), for the literal widths and strings some functions need.
func (a *analysis) call(fn string, lits []parse.Node, args []*aval) (*aval, error) {
	last := func() *aval {
		if len(args) == 0 {
			return &aval{}
		}
		return args[len(args)-1]
	}
	switch fn {
	case "b64enc":
		// Four bytes for three; no YAML indicator in the alphabet.
		if len(args) != 1 {
			return nil, errArgs(fn)
		}
		return &aval{size: (last().size+2)/3*4 + 4}, nil
	case "b64dec":
		if len(args) != 1 {
			return nil, errArgs(fn)
		}
		n := max(last().size, 128) // or the decoder's error text
		return &aval{size: n, ind: n, nl: n}, nil
	case "indent", "nindent":
		return indentBound(fn, lits, args)
	case "quote", "squote":
		return quoteBound(fn, args), nil
	case "trimAll", "contains":
		// Go's strings.Trim looks each rune up in the cutset, and
		// strings.Index may fall back to a rolling hash for a long
		// needle: linear only for a short literal one.
		if len(args) != 2 || !shortLiteral(lits) {
			return nil, fmt.Errorf("calls %s with a first argument that is not a literal of at most %d bytes", fn, fastMaxNeedle)
		}
		if fn == "contains" {
			v := boolVal
			return &v, nil
		}
		v := *last()
		v.isValues = false
		return &v, nil
	case "trim", "trimSuffix", "trimPrefix", "trunc", "toString":
		// A part of the input (trunc's width is an argument before it).
		if len(args) < 1 || len(args) > 2 {
			return nil, errArgs(fn)
		}
		v := *last()
		v.isValues, v.isRoot = false, false
		return &v, nil
	case "lower", "upper":
		// An invalid UTF-8 byte becomes U+FFFD: three bytes for one.
		if len(args) != 1 {
			return nil, errArgs(fn)
		}
		n := 3 * last().size
		return &aval{size: n, ind: n, nl: n}, nil
	case "replace":
		return replaceBound(lits, args)
	case "default", "required", "and", "or", "coalesce", "ternary":
		// One of the arguments (required's message only in an error).
		if len(args) == 0 {
			return nil, errArgs(fn)
		}
		return largest(args), nil
	case "eq", "ne", "lt", "le", "gt", "ge", "not", "empty", "hasPrefix", "hasSuffix", "len":
		v := boolVal
		v.size = 32 // len's number
		return &v, nil
	}
	return nil, fmt.Errorf("calls %s, which the fast path does not bound", fn)
}

// quoteBound bounds quote (%q: at most four bytes for one, \x00, and no
// line break left) and squote ('%v'), quotes and spaces between included.
func quoteBound(fn string, args []*aval) *aval {
	var out aval
	for _, v := range args {
		if fn == "quote" {
			out.size += 4*v.size + 3
			out.ind += v.ind
			continue
		}
		out.size += v.size + 3
		out.ind += v.ind
		out.nl += v.nl
	}
	return &out
}

func errArgs(fn string) error {
	return fmt.Errorf("calls %s with an unexpected number of arguments", fn)
}

// largest is a bound of any one of vs.
func largest(vs []*aval) *aval {
	var out aval
	for _, v := range vs {
		out.size = max(out.size, v.size)
		out.ind = max(out.ind, v.ind)
		out.nl = max(out.nl, v.nl)
	}
	return &out
}

// indentBound bounds `indent N s` and `nindent N s` with N a small
// literal: N spaces before every line, and a line break first for
// nindent.
func indentBound(fn string, lits []parse.Node, args []*aval) (*aval, error) {
	if len(args) != 2 || len(lits) < 1 {
		return nil, errArgs(fn)
	}
	n, ok := lits[0].(*parse.NumberNode)
	if !ok || !n.IsInt || n.Int64 < 0 || n.Int64 > fastMaxIndent {
		return nil, fmt.Errorf("calls %s with a width that is not a literal of at most %d", fn, fastMaxIndent)
	}
	v := args[1]
	out := &aval{size: v.size + n.Int64*(v.nl+1), ind: v.ind, nl: v.nl}
	if fn == "nindent" {
		out.size++
		out.ind++
		out.nl++
	}
	return out, nil
}

// replaceBound bounds `replace OLD NEW s` with OLD and NEW literals, OLD
// not empty: at most len(s)/len(OLD) replacements.
func replaceBound(lits []parse.Node, args []*aval) (*aval, error) {
	if len(args) != 3 || len(lits) < 2 {
		return nil, errArgs("replace")
	}
	old, ok1 := lits[0].(*parse.StringNode)
	repl, ok2 := lits[1].(*parse.StringNode)
	if !ok1 || !ok2 || old.Text == "" || len(old.Text) > fastMaxNeedle {
		return nil, fmt.Errorf("calls replace with arguments that are not literals (or one to replace that is empty or over %d bytes)", fastMaxNeedle)
	}
	v := args[2]
	times := v.size / int64(len(old.Text))
	rind, rnl := indicators(repl.Text)
	return &aval{size: v.size + times*int64(len(repl.Text)), ind: v.ind + times*rind, nl: v.nl + times*rnl}, nil
}

// fastMaxNeedle bounds a literal searched for (contains, replace) or
// trimmed (trimAll): strings.Index compares at most that many bytes at
// each position (no rolling hash), strings.Trim looks each rune up in at
// most that many.
const fastMaxNeedle = 64

// shortLiteral reports whether the first argument as written is a string
// literal of at most fastMaxNeedle bytes.
func shortLiteral(lits []parse.Node) bool {
	if len(lits) == 0 {
		return false
	}
	s, ok := lits[0].(*parse.StringNode)
	return ok && len(s.Text) <= fastMaxNeedle
}
