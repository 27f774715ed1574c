package changes

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Variable is a clusterctl variable of a components file.
type Variable struct {
	Name string
	// Default is the value used when the variable is not given; "" when
	// it has none and must be given.
	Default string
}

// Variables lists the variables of a components file in the order they
// first appear, as clusterctl reads them (cmd/clusterctl/client/
// yamlprocessor/simple_processor.go, inspectVariables, over
// github.com/drone/envsubst/v2/parse): ${NAME}, ${ NAME } (the legacy
// spacing), and ${NAME<op>ARGS} for the envsubst functions (:=, :-, =, :?,
// :+, substrings, /, #, %), whose argument text is the default. A variable
// keeps what its first occurrence says; "$$" escapes a dollar; variables
// inside a default are not variables of the file. The cluster-api-operator
// installs the components with clusterctl's processor
// (internal/controller/phase_fetch.go: repository.NewComponents with
// yamlprocessor.NewSimpleProcessor) and the values of its provider's
// spec.configSecret (phase_initialize.go, secretReader; v0.28.0): one
// without a default that the Secret does not give fails the install.
func Variables(data []byte) []Variable {
	s := string(data)
	var out []Variable
	seen := map[string]bool{}
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '$')
		if j < 0 {
			break
		}
		i += j
		if strings.HasPrefix(s[i:], "$$") {
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			i++
			continue
		}
		v, end, ok := parseVar(s, i+2)
		if end < 0 {
			// A brace that never closes: clusterctl cannot parse the
			// file, so nothing after it is read.
			break
		}
		if !ok {
			i += 2
			continue
		}
		i = end
		if !seen[v.Name] {
			seen[v.Name] = true
			out = append(out, v)
		}
	}
	return out
}

// parseVar reads a variable whose text starts at s[i] (after "${"); end
// is past its closing brace, -1 when a function's brace never closes.
func parseVar(s string, i int) (v Variable, end int, ok bool) {
	legacy := func(k int) int {
		for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
		return k
	}
	k := legacy(i)
	spaced := k > i
	if k < len(s) && s[k] == '#' && !spaced {
		k++ // ${#NAME}: its length, no default
	}
	start := k
	for k < len(s) {
		r, n := utf8.DecodeRuneInString(s[k:])
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			break
		}
		k += n
	}
	if k == start {
		return v, 0, false
	}
	v.Name = s[start:k]
	if e := legacy(k); e < len(s) && s[e] == '}' {
		return v, e + 1, true
	}
	if spaced {
		return v, 0, false
	}
	// A function: its arguments run to the matching brace.
	close := matchBrace(s, k)
	if close < 0 {
		return v, -1, false
	}
	args := s[k:close]
	switch {
	case strings.HasPrefix(args, ",") || strings.HasPrefix(args, "^"):
		// Case conversion: no arguments.
	case len(args) >= 2 && args[0] == ':' && strings.ContainsRune("=-?+", rune(args[1])):
		v.Default = args[2:]
	case len(args) >= 2 && (args[0] == '/' || args[0] == '#' || args[0] == '%') && strings.ContainsRune("/#%", rune(args[1])):
		v.Default = args[2:]
	default:
		v.Default = args[1:]
	}
	return v, close + 1, true
}

// matchBrace returns the index of the "}" closing a "${" whose body
// starts at i, counting nested "${", else -1.
func matchBrace(s string, i int) int {
	depth := 0
	for k := i; k < len(s); k++ {
		switch {
		case s[k] == '$' && k+1 < len(s) && s[k+1] == '{':
			depth++
			k++
		case s[k] == '}':
			if depth == 0 {
				return k
			}
			depth--
		}
	}
	return -1
}

// compareVariables reports each variable the new release needs given that
// the old one did not: new, or one whose default is gone.
func compareVariables(before, after []byte) []Change {
	had := map[string]Variable{}
	for _, v := range Variables(before) {
		had[v.Name] = v
	}
	var out []Change
	for _, v := range Variables(after) {
		if v.Default != "" {
			continue
		}
		o, existed := had[v.Name]
		switch {
		case !existed:
			out = append(out, Change{Kind: VariableAdded, Object: "${" + v.Name + "}",
				Detail: "new variable without a default: give it in the provider's spec.configSecret, or the operator cannot install the components"})
		case o.Default != "":
			out = append(out, Change{Kind: VariableAdded, Object: "${" + v.Name + "}",
				Detail: fmt.Sprintf("its default (%s) is gone: give it in the provider's spec.configSecret, or the operator cannot install the components", o.Default)})
		}
	}
	return out
}
