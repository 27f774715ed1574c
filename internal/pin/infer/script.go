package infer

import (
	"io/fs"
	"regexp"
	"strings"
	"sync"

	"github.com/pinseal/pinseal/pkg/pin"
)

// MaxScriptSize bounds the bytes of one script or Makefile the tree scan
// reads; a larger file is not read.
const MaxScriptSize = maxMakefileSize

// Fetch is a download of a provider's components release that a shell
// script or a Makefile recipe runs with no SHA-256 beside it.
type Fetch struct {
	pin.Var        // Value: the URL; Name: the variable the command read it from, if one; File, Line: the command's
	Command string // "curl", "wget", "gh release download", "kubectl operator preload"
}

var (
	shAssignRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(?:(?:export|readonly|local|declare(?:\s+-\w+)*)\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
	})
	shVarWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)`) })
)

// maxShellVars bounds the variables a script's reader keeps.
const maxShellVars = 4096

// ScriptFetches returns the components-release downloads of the shell
// script data (named name, a slash path kept in each Fetch) that carry no
// SHA-256: curl, wget, `gh release download` and `kubectl operator
// preload -u`. A URL held in a variable is resolved through the script's
// own assignments as they stand with an empty environment
// (`X="${X:-default}"` gives default), so a download the caller can
// redirect is named by the URL it fetches by default. The script pins its
// downloads when it holds at least as many distinct SHA-256 digests (64
// hex digits, as `echo "<hex>  file" | sha256sum -c` checks them) as it
// fetches distinct URLs, the rule a Makefile recipe's rule follows.
func ScriptFetches(name string, data []byte) []Fetch {
	if len(data) > MaxScriptSize {
		return nil
	}
	vars := map[string]string{}
	lines, nums := logicalLines(data)
	var found []Fetch
	var digests int
	seenHex := map[string]bool{}
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		for _, h := range hexDigests(t) {
			if !seenHex[h] {
				seenHex[h] = true
				digests++
			}
		}
		if m := shAssignRE().FindStringSubmatch(line); m != nil && !strings.ContainsAny(m[2], ";|&") {
			if len(vars) < maxShellVars {
				v := ""
				if segs := shellSegments(m[2]); len(segs) > 0 && len(segs[0].words) > 0 {
					v = segs[0].words[0]
				}
				vars[m[1]] = expandShell(v, vars, 0)
			}
			continue
		}
		for _, seg := range shellSegments(line) {
			words := make([]string, len(seg.words))
			for k, w := range seg.words {
				words[k] = expandShell(w, vars, 0)
			}
			cmd := fetchCommand(seg.words)
			if cmd == "" {
				continue
			}
			for _, d := range findDownloads(quoteWords(words)) {
				if !isHTTPURL(d.URL) && !strings.HasPrefix(d.URL, "$") || !isComponentsRelease(d.URL) {
					continue
				}
				f := Fetch{Var: pin.Var{Value: d.URL, Known: d.known(), File: name, Line: nums[i]}, Command: cmd}
				for _, w := range seg.words {
					if m := shVarWordRE().FindStringSubmatch(w); m != nil && expandShell(w, vars, 0) == d.URL {
						f.Name = m[1]
					}
				}
				found = append(found, f)
			}
		}
	}
	distinct := map[string]bool{}
	for _, f := range found {
		distinct[f.Value] = true
	}
	if len(found) == 0 || digests >= len(distinct) {
		return nil
	}
	return found
}

// MakefileFetches returns the components-release downloads of the
// Makefile name in fsys (a directory that is no provider package: a
// repository's root Makefile) with no SHA-256 beside them: URL variables
// with no digest variable of their stem and recipe downloads whose rule
// carries fewer digests than URLs, as a package Makefile's pins are read
// (LoadDir).
func MakefileFetches(fsys fs.FS, name string, data []byte) []Fetch {
	if len(data) > MaxScriptSize {
		return nil
	}
	mk := readMakefile(fsys, name, data)
	_, _, unpinned := mk.pins()
	var out []Fetch
	for _, u := range unpinned {
		if !isComponentsRelease(u.Value) {
			continue
		}
		cmd := ""
		if u.Name == "" {
			for _, r := range mk.recipes {
				if r.file == u.File && r.line == u.Line {
					text, _ := mk.expand(r.text)
					for _, seg := range shellSegments(text) {
						if c := fetchCommand(seg.words); c != "" {
							cmd = c
							break
						}
					}
				}
			}
		}
		out = append(out, Fetch{Var: u, Command: cmd})
	}
	return out
}

// fetchCommand names the download command a segment runs, "" for none.
func fetchCommand(words []string) string {
	for i, w := range words {
		base, rest := w[strings.LastIndexByte(w, '/')+1:], words[i+1:]
		switch {
		case base == "curl" || base == "wget":
			return base
		case base == "gh" && len(rest) >= 2 && rest[0] == "release" && rest[1] == "download":
			return "gh release download"
		case base == "kubectl" && len(rest) >= 2 && rest[0] == "operator" && rest[1] == "preload",
			base == "kubectl-operator" && len(rest) >= 1 && rest[0] == "preload":
			return "kubectl operator preload"
		}
	}
	return ""
}

// quoteWords joins words back into one shell segment, each single-quoted
// so that findDownloads reads them as they are.
func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		if w == ">" || w == ">>" {
			q[i] = w
			continue
		}
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// expandShell substitutes the script's variables in s: $X, ${X}, and
// ${X:-d}, ${X-d}, ${X:=d}, ${X=d} (d when X has no value). A reference
// to a variable the script does not set, with no default, stays as it is.
func expandShell(s string, vars map[string]string, depth int) string {
	if depth > 8 || !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := groupEnd(s, i)
		ref := s[i:end]
		i = end
		name, def, hasDef := "", "", false
		switch {
		case strings.HasPrefix(ref, "${") && strings.HasSuffix(ref, "}"):
			body := ref[2 : len(ref)-1]
			k := 0
			for k < len(body) && (body[k] == '_' || 'A' <= body[k] && body[k] <= 'Z' || 'a' <= body[k] && body[k] <= 'z' || '0' <= body[k] && body[k] <= '9') {
				k++
			}
			name = body[:k]
			for _, op := range []string{":-", ":=", "-", "="} {
				if strings.HasPrefix(body[k:], op) {
					def, hasDef = body[k+len(op):], true
					break
				}
			}
			if !hasDef && k != len(body) {
				b.WriteString(ref) // ${X#…}, ${X/…}: left as it is
				continue
			}
		case len(ref) > 1 && ref[1] != '(':
			name = ref[1:]
		default:
			b.WriteString(ref)
			continue
		}
		switch v, ok := vars[name]; {
		case ok && v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(expandShell(def, vars, depth+1))
		case ok:
		default:
			b.WriteString(ref)
		}
	}
	return b.String()
}
