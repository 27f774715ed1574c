package infer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/pinseal/pinseal/pkg/pin"
)

// Limits that keep a hostile Makefile from making the reader slow.
const (
	maxMakefileSize = 4 << 20 // bytes per file read
	maxIncludes     = 32      // files read per package
	maxExpansion    = 1 << 16 // bytes one value may expand to
	expandBudget    = 1 << 20 // bytes of work one expansion may do
	totalBudget     = 1 << 26 // bytes of expansion work for a whole package
	maxExpandDepth  = 64      // nested references
)

// mkVar is one Make variable as the reader last saw it defined.
type mkVar struct {
	name   string
	value  string // raw text for recursive variables, expanded text for simple ones
	simple bool   // defined with := / ::= / :::= (value already expanded)
	known  bool   // false: computed ($(shell …), !=), conditional, or built on unknowns
	file   string
	line   int
}

// mkRecipe is one logical recipe line (continuations joined).
type mkRecipe struct {
	text string
	file string
	line int
	rule int // index of the rule it belongs to
}

// makefile is what the reader learns from a package Makefile and the
// in-package files it includes.
type makefile struct {
	fsys     fs.FS
	vars     map[string]*mkVar
	order    []string // variable names in order of first definition
	recipes  []mkRecipe
	rules    int
	read     int // files read
	included map[string]bool
	work     int // expansion work left (totalBudget at the start)
}

// readMakefile reads the Makefile named name in fsys (a package directory)
// and the in-package files it includes. Files outside the package, missing
// includes and unreadable includes are ignored.
func readMakefile(fsys fs.FS, name string, data []byte) *makefile {
	m := &makefile{fsys: fsys, vars: map[string]*mkVar{}, included: map[string]bool{name: true}, work: totalBudget}
	// CURDIR is the package directory when make runs there (make -C pkg).
	m.vars["CURDIR"] = &mkVar{name: "CURDIR", value: ".", simple: true, known: true}
	m.parse(name, data)
	return m
}

var (
	assignRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([^\s:#=$(){}!?+]+)\s*(:::=|::=|:=|\?=|\+=|!=|=)\s*(.*)$`)
	})
	prefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(export|override|private)\s+`) })
	defineRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^define\s+([^\s:#=$(){}!?+]+)\s*(:::=|::=|:=|\?=|\+=|!=|=)?\s*$`)
	})
)

// logicalLines joins backslash-continued lines. It returns each logical line
// with the 1-based number of its first physical line; recipe lines keep a
// leading tab.
func logicalLines(data []byte) (lines []string, nums []int) {
	phys := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i := 0; i < len(phys); i++ {
		start := i
		line := phys[i]
		for endsWithContinuation(line) && i+1 < len(phys) {
			i++
			next := phys[i]
			if strings.HasPrefix(line, "\t") {
				// Recipe: make passes backslash-newline to the shell, which
				// joins the words; drop one leading tab of the next line.
				line = line[:len(line)-1] + " " + strings.TrimPrefix(next, "\t")
			} else {
				line = strings.TrimRight(line[:len(line)-1], " \t") + " " + strings.TrimLeft(next, " \t")
			}
		}
		if endsWithContinuation(line) {
			line = line[:len(line)-1]
		}
		lines = append(lines, line)
		nums = append(nums, start+1)
	}
	return lines, nums
}

func endsWithContinuation(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// stripComment removes a make comment (an unescaped #) from a non-recipe line.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			continue
		}
		if s[i] == '#' {
			return s[:i]
		}
	}
	return s
}

func (m *makefile) parse(file string, data []byte) {
	m.read++
	lines, nums := logicalLines(data)
	cond := 0 // depth of ifeq/ifdef blocks
	inRule := false
	for i := 0; i < len(lines); i++ {
		raw, num := lines[i], nums[i]
		if strings.HasPrefix(raw, "\t") && inRule {
			m.recipe(raw[1:], file, num)
			continue
		}
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		word, rest := line, ""
		if k := strings.IndexAny(line, " \t"); k >= 0 {
			word, rest = line[:k], strings.TrimSpace(line[k+1:])
		}
		if last, ok := m.directive(word, rest, lines, nums, i, file, &cond); ok {
			i = last
			inRule = false
			continue
		}
		if a := assignRE().FindStringSubmatch(stripModifiers(line)); a != nil {
			m.assign(a[1], a[2], strings.TrimSpace(a[3]), file, num, cond > 0)
			inRule = false
			continue
		}
		inRule = strings.Contains(line, ":")
		if inRule {
			m.rule(raw, file, num)
		}
	}
}

// recipe records a recipe line of the current rule (its tab gone; its @,
// - and + prefixes dropped); a comment line is none.
func (m *makefile) recipe(text, file string, num int) {
	text = strings.TrimLeft(text, " \t@-+")
	if strings.HasPrefix(strings.TrimSpace(text), "#") {
		return
	}
	m.recipes = append(m.recipes, mkRecipe{text: text, file: file, line: num, rule: m.rules})
}

// rule records a rule, "targets: prerequisites [; recipe]", with its
// inline recipe.
func (m *makefile) rule(raw, file string, num int) {
	m.rules++
	if k := strings.Index(raw, ";"); k >= 0 && strings.Index(raw, ":") < k {
		m.recipes = append(m.recipes, mkRecipe{text: strings.TrimSpace(raw[k+1:]), file: file, line: num, rule: m.rules})
	}
}

// directive reads a line starting with word when it is a directive:
// conditionals (counted in cond), include, unexport, vpath and define
// blocks. It returns the index of the last line it read, and false when
// the line is no directive (export X = y is an assignment).
func (m *makefile) directive(word, rest string, lines []string, nums []int, i int, file string, cond *int) (int, bool) {
	switch word {
	case "ifeq", "ifneq", "ifdef", "ifndef":
		*cond++
	case "else", "unexport", "vpath":
	case "endif":
		if *cond > 0 {
			*cond--
		}
	case "include", "-include", "sinclude":
		m.include(rest)
	case "define", "export", "override", "private":
		if word != "define" && !strings.HasPrefix(rest, "define ") {
			return i, false
		}
		return m.define(lines, nums, i, file, *cond > 0), true
	default:
		return i, false
	}
	return i, true
}

// stripModifiers drops the export, override and private words an
// assignment may start with.
func stripModifiers(line string) string {
	for {
		loc := prefixRE().FindStringIndex(line)
		if loc == nil {
			return line
		}
		line = line[loc[1]:]
	}
}

// define reads a define … endef block starting at lines[i] and returns the
// index of its endef line.
func (m *makefile) define(lines []string, nums []int, i int, file string, conditional bool) int {
	head := strings.TrimSpace(stripComment(lines[i]))
	for {
		loc := prefixRE().FindStringIndex(head)
		if loc == nil {
			break
		}
		head = head[loc[1]:]
	}
	d := defineRE().FindStringSubmatch(head)
	var body []string
	nest := 0
	j := i + 1
	for ; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if strings.HasPrefix(t, "define ") || t == "define" {
			nest++
		}
		if t == "endef" || strings.HasPrefix(t, "endef ") {
			if nest == 0 {
				break
			}
			nest--
		}
		body = append(body, lines[j])
	}
	if d != nil {
		op := d[2]
		if op == "" {
			op = "="
		}
		m.assign(d[1], op, strings.Join(body, "\n"), file, nums[i], conditional)
	}
	return j
}

func (m *makefile) assign(name, op, value, file string, line int, conditional bool) {
	v := m.vars[name]
	if v == nil {
		m.order = append(m.order, name)
	}
	switch op {
	case "?=":
		if v != nil {
			return
		}
		v = &mkVar{name: name, value: value, known: !conditional}
	case "+=":
		if v == nil {
			v = &mkVar{name: name, value: value, known: !conditional}
			break
		}
		nv := *v
		if v.simple {
			add, ok := m.expand(value)
			nv.value = joinSpace(v.value, add)
			nv.known = v.known && ok && !conditional
		} else {
			nv.value = joinSpace(v.value, value)
			nv.known = v.known && !conditional
		}
		v = &nv
	case "!=":
		v = &mkVar{name: name, value: value, known: false}
	case ":=", "::=":
		exp, ok := m.expand(value)
		v = &mkVar{name: name, value: exp, simple: true, known: ok && !conditional}
		if !ok {
			v.value = value // keep what was written, for the report
		}
	default: // "=", ":::="
		v = &mkVar{name: name, value: value, known: !conditional}
	}
	v.name, v.file, v.line = name, file, line
	m.vars[name] = v
}

func joinSpace(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + " " + b
}

// include reads the in-package files an include line names.
func (m *makefile) include(arg string) {
	files, ok := m.expand(arg)
	if !ok {
		return
	}
	for _, f := range strings.Fields(files) {
		if path.IsAbs(f) {
			continue
		}
		p := path.Clean(f)
		if pin.CheckPath(p) != nil || m.included[p] || m.read >= maxIncludes {
			continue // outside the package, or already read
		}
		m.included[p] = true
		data, err := readLimited(m.fsys, p, maxMakefileSize)
		if err != nil {
			continue
		}
		m.parse(p, data)
	}
}

// expander expands Make references against the variables' current values.
type expander struct {
	m        *makefile
	budget   int
	visiting map[string]bool
	memo     map[string]expansion // the variables do not change during one expansion
}

// expander starts an expansion with what is left of the package's budget.
func (m *makefile) expander() *expander {
	return &expander{m: m, budget: min(expandBudget, m.work), visiting: map[string]bool{}, memo: map[string]expansion{}}
}

// done charges the work of an expansion to the package's budget.
func (e *expander) done() {
	e.m.work -= min(expandBudget, e.m.work) - max(e.budget, 0)
}

type expansion struct {
	value string
	known bool
}

// expand expands $(VAR), ${VAR} and $V in s. Unresolvable references
// (undefined or computed variables, functions such as $(shell …)) stay in
// the result as written and make known false.
func (m *makefile) expand(s string) (string, bool) {
	e := m.expander()
	defer e.done()
	return e.expand(s, 0)
}

func (e *expander) expand(s string, depth int) (string, bool) {
	if depth > maxExpandDepth || e.budget <= 0 {
		return s, false
	}
	if !strings.Contains(s, "$") {
		e.budget -= len(s)
		return s, true
	}
	var b strings.Builder
	known := true
	for i := 0; i < len(s); i++ {
		if b.Len() > maxExpansion || e.budget <= 0 {
			return b.String(), false
		}
		c := s[i]
		if c != '$' {
			b.WriteByte(c)
			e.budget--
			continue
		}
		if i+1 >= len(s) {
			b.WriteByte('$')
			break
		}
		if s[i+1] == '$' {
			// $$ is a literal $ (for the shell): not a value make knows.
			b.WriteString("$")
			i++
			continue
		}
		end := groupEnd(s, i)
		ref := s[i:end]
		e.budget -= len(ref) // every reference costs, resolved or not
		var name string
		switch s[i+1] {
		case '(', '{':
			if ref[len(ref)-1] != map[byte]byte{'(': ')', '{': '}'}[s[i+1]] {
				b.WriteString(ref) // unterminated
				known = false
				i = end - 1
				continue
			}
			name = ref[2 : len(ref)-1]
		default:
			name = s[i+1 : end]
		}
		val, ok := e.lookup(name, depth)
		if !ok {
			b.WriteString(ref)
			known = false
		} else {
			b.WriteString(val)
			e.budget -= len(val)
		}
		i = end - 1
	}
	return b.String(), known
}

// lookup returns the value of the reference $(name): a variable name, or
// a function call / substitution reference (never known).
func (e *expander) lookup(name string, depth int) (string, bool) {
	if strings.ContainsAny(name, " \t,:=") || name == "" {
		return "", false // a function ($(shell …)) or substitution reference
	}
	if strings.Contains(name, "$") {
		n, ok := e.expand(name, depth+1) // computed name: $(X_$(ARCH))
		if !ok {
			return "", false
		}
		name = n
	}
	v := e.m.vars[name]
	if v == nil || !v.known || e.visiting[name] {
		return "", false
	}
	if v.simple {
		return v.value, true
	}
	if r, ok := e.memo[name]; ok {
		return r.value, r.known
	}
	e.visiting[name] = true
	val, known := e.expand(v.value, depth+1)
	delete(e.visiting, name)
	if e.budget > 0 {
		e.memo[name] = expansion{val, known} // not a result cut short by the budget
	}
	return val, known
}

// refs returns the names of the variables s refers to, directly or through
// other variables.
func (m *makefile) refs(s string) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(string, int)
	walk = func(s string, depth int) {
		if depth > maxExpandDepth || len(out) > 256 {
			return
		}
		for i := 0; i < len(s); i++ {
			if s[i] != '$' || i+1 >= len(s) {
				continue
			}
			if s[i+1] == '$' {
				i++
				continue
			}
			end := groupEnd(s, i)
			name := s[i+1 : end]
			if len(name) >= 2 && (name[0] == '(' || name[0] == '{') {
				name = name[1 : len(name)-1]
			}
			i = end - 1
			if seen[name] {
				continue
			}
			seen[name] = true
			if v := m.vars[name]; v != nil {
				out = append(out, name)
				if !v.simple {
					walk(v.value, depth+1)
				}
			}
		}
	}
	walk(s, 0)
	return out
}

// value returns the final expansion of variable name: its expanded value
// when known, else the text as written.
func (m *makefile) value(name string) (string, bool) {
	v := m.vars[name]
	if v == nil {
		return "", false
	}
	if !v.known {
		return v.value, false
	}
	if v.simple {
		return v.value, true
	}
	e := m.expander()
	defer e.done()
	e.visiting[name] = true
	s, ok := e.expand(v.value, 0)
	if !ok {
		return v.value, false
	}
	return s, true
}

// isVersionName reports whether a variable holds an upstream version:
// its name ends in VERSION (CAPMOX_VERSION, CABPT_UPSTREAM_VERSION).
func isVersionName(name string) bool {
	return strings.HasSuffix(strings.ToUpper(name), "VERSION")
}

// shaStem returns the part of a SHA-256 variable's name before its
// SHA/DIGEST word (CABPT_COMPONENTS_SHA256 -> CABPT_COMPONENTS), "" if the
// name is not one.
func shaStem(name string) (string, bool) {
	u := strings.ToUpper(name)
	i := strings.Index(u, "SHA")
	if j := strings.Index(u, "DIGEST"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return "", false
	}
	return urlStem(strings.TrimRight(u[:i], "_")), true
}

// urlStem returns a URL variable's name without its URL word
// (CAPMOX_URL -> CAPMOX).
func urlStem(name string) string {
	u := strings.ToUpper(name)
	for _, suf := range []string{"_URL", "_URI", "URL"} {
		if strings.HasSuffix(u, suf) && len(u) > len(suf) {
			return u[:len(u)-len(suf)]
		}
	}
	return u
}

var releaseTagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`/(v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)/`) })

// pinURLVar is a Makefile variable whose value is one HTTP(S) URL.
type pinURLVar struct {
	name, value string
	known       bool
	v           *mkVar
}

// recipeDownload is a download found in one recipe's text.
type recipeDownload struct {
	download
	r mkRecipe
}

// pinState is what pins builds up: the providers by version and which
// URLs and digests are already accounted for.
type pinState struct {
	m         *makefile
	f         *pin.File
	byVersion map[string]int
	pinnedURL map[string]bool
	usedHex   map[string]bool
	reported  map[string]bool
	unpinned  []pin.Var
}

// pins turns what the reader learned into a Set's pin fields.
func (m *makefile) pins() (f *pin.File, versions, unpinned []pin.Var) {
	versions, urls, shas := m.pinVars()
	dls, ruleHex, toOf := m.recipeDownloads()
	s := &pinState{
		m: m, f: &pin.File{}, byVersion: map[string]int{},
		pinnedURL: map[string]bool{}, usedHex: map[string]bool{}, reported: map[string]bool{},
	}
	s.pinURLVars(urls, shas, toOf)
	s.pinLiteralDownloads(dls, ruleHex, toOf)
	f = s.f
	if len(f.Providers) == 0 {
		f = nil
	}
	return f, versions, s.unpinned
}

// pinVars sorts the variables into version pins, URL variables and
// SHA-256 digests by stem (a SHA256 name wins over a SHA or DIGEST one).
func (m *makefile) pinVars() (versions []pin.Var, urls []pinURLVar, shas map[string]string) {
	shas = map[string]string{} // stem -> digest
	shaPrio := map[string]int{}
	for _, name := range m.order {
		v := m.vars[name]
		val, known := m.value(name)
		if isVersionName(name) {
			vv := pin.Var{Name: name, Value: strings.TrimSpace(val), Known: known, File: v.file, Line: v.line}
			if strings.Contains(vv.Value, "$") {
				// $$X: a shell variable when the recipe runs, not a value.
				vv.Known, vv.Value = false, strings.TrimSpace(v.value)
			}
			versions = append(versions, vv)
		}
		t := strings.TrimSpace(val)
		if isHTTPURL(t) && !strings.ContainsAny(t, " \t\n") {
			urls = append(urls, pinURLVar{name: name, value: t, known: known && !strings.Contains(t, "$"), v: v})
			continue
		}
		if stem, ok := shaStem(name); ok && known {
			if d := normalizeDigest(t); d != "" {
				prio := 1
				if strings.Contains(strings.ToUpper(name), "SHA256") {
					prio = 2
				}
				if prio > shaPrio[stem] {
					shas[stem], shaPrio[stem] = d, prio
				}
			}
		}
	}
	return versions, urls, shas
}

// recipeDownloads finds the downloads in the recipes, the hex digests
// each rule carries, and where each URL is saved to (its first -o).
func (m *makefile) recipeDownloads() (dls []recipeDownload, ruleHex map[int][]string, toOf map[string]string) {
	ruleHex = map[int][]string{}
	for _, r := range m.recipes {
		text, _ := m.expand(r.text)
		for _, d := range findDownloads(text) {
			dls = append(dls, recipeDownload{d, r})
		}
		ruleHex[r.rule] = append(ruleHex[r.rule], hexDigests(text)...)
	}
	toOf = map[string]string{}
	for _, d := range dls {
		if d.To != "" && toOf[d.URL] == "" {
			toOf[d.URL] = d.To
		}
	}
	return dls, ruleHex, toOf
}

// addSource adds s to the provider of version, creating it in order.
func (s *pinState) addSource(version string, src pin.Source) {
	i, ok := s.byVersion[version]
	if !ok {
		i = len(s.f.Providers)
		s.byVersion[version] = i
		s.f.Providers = append(s.f.Providers, pin.Provider{Version: version})
	}
	s.f.Providers[i].Sources = append(s.f.Providers[i].Sources, src)
}

// versionOf is the version a URL downloads: the one version variable its
// raw text refers to, else a release tag in the expanded URL.
func (s *pinState) versionOf(raw, expanded string) string {
	var found []string
	for _, r := range s.m.refs(raw) {
		if isVersionName(r) {
			if val, ok := s.m.value(r); ok && !strings.Contains(val, "$") {
				found = append(found, strings.TrimSpace(val))
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	if mm := releaseTagRE().FindStringSubmatch(expanded); mm != nil {
		return mm[1]
	}
	return ""
}

// pinURLVars pins each URL variable that has a digest variable of the
// same stem and reports the others as unpinned.
func (s *pinState) pinURLVars(urls []pinURLVar, shas, toOf map[string]string) {
	for _, u := range urls {
		if d, ok := shas[urlStem(u.name)]; ok {
			s.pinnedURL[u.value] = true
			s.usedHex[d] = true
			to := toOf[u.value]
			if to == "" && u.known {
				to = s.m.vendoredAt(u.value)
			}
			s.addSource(s.versionOf(u.v.value, u.value), pin.Source{URL: u.value, SHA256: d, To: to})
			continue
		}
		s.reported[u.value] = true
		s.unpinned = append(s.unpinned, pin.Var{Name: u.name, Value: u.value, Known: u.known, File: u.v.file, Line: u.v.line})
	}
}

// pinLiteralDownloads handles the downloads not named by a variable:
// pinned when their rule carries as many digests as it fetches URLs
// (echo "<hex>  file" | sha256sum -c), reported as unpinned otherwise.
func (s *pinState) pinLiteralDownloads(dls []recipeDownload, ruleHex map[int][]string, toOf map[string]string) {
	candidates := map[int][]recipeDownload{}
	var ruleOrder []int
	for _, d := range dls {
		if s.pinnedURL[d.URL] || s.reported[d.URL] {
			continue
		}
		if _, ok := candidates[d.r.rule]; !ok {
			ruleOrder = append(ruleOrder, d.r.rule)
		}
		candidates[d.r.rule] = append(candidates[d.r.rule], d)
	}
	for _, rule := range ruleOrder {
		var hex []string
		for _, h := range ruleHex[rule] {
			if !s.usedHex[h] {
				hex = append(hex, h)
			}
		}
		cs := candidates[rule]
		distinct := map[string]bool{}
		for _, c := range cs {
			distinct[c.URL] = true
		}
		if len(hex) >= len(distinct) {
			if len(distinct) == 1 && len(hex) == 1 && cs[0].known() {
				s.usedHex[hex[0]] = true
				s.pinnedURL[cs[0].URL] = true
				s.addSource(s.versionOf("", cs[0].URL), pin.Source{URL: cs[0].URL, SHA256: hex[0], To: toOf[cs[0].URL]})
			}
			continue
		}
		for _, c := range cs {
			if s.reported[c.URL] {
				continue
			}
			s.reported[c.URL] = true
			s.unpinned = append(s.unpinned, pin.Var{Value: c.URL, Known: c.known(), File: c.r.file, Line: c.r.line})
		}
	}
}

// readLimited reads a regular file of fsys, at most limit bytes. The file
// is looked at before it is read, and never opened in a way that waits:
// opening a FIFO would wait for a writer for ever. In a package directory
// (dirFS) the open itself does not wait (O_NONBLOCK) and the opened file
// is looked at; in another fs.FS the path is looked at first.
func readLimited(fsys fs.FS, name string, limit int64) ([]byte, error) {
	var fh fs.File
	if d, ok := fsys.(dirFS); ok {
		if !fs.ValidPath(name) || filepath.Separator != '/' && strings.ContainsRune(name, filepath.Separator) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
		}
		if d.read != nil {
			if data, ok := d.read(name); ok && int64(len(data)) <= limit {
				return data, nil
			}
		}
		f, err := d.root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		fh = f
	} else {
		if st, err := fs.Stat(fsys, name); err != nil {
			return nil, err
		} else if !st.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
		}
		f, err := fsys.Open(name)
		if err != nil {
			return nil, err
		}
		fh = f
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	// Read into a buffer of the size the file has (one read, and one for
	// its end), at most limit+1 bytes.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(st.Size(), 0), limit)+1))
	if _, err := buf.ReadFrom(io.LimitReader(fh, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return data, nil
}

// dirFS is a package directory's os.Root as an fs.FS, with the root at
// hand for readLimited.
type dirFS struct {
	fs.FS
	root *os.Root
	read func(name string) ([]byte, bool) // files read already (LoadDirRead)
}

// vendoredAt is files/<the URL's file name> when the package holds that
// regular file, else "": where a pinned download goes when no recipe line
// says (a Makefile whose recipe only runs `builder build`, as `builder
// add` writes one).
func (m *makefile) vendoredAt(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	base := path.Base(p.Path)
	if base == "" || base == "." || base == "/" || base == ".." {
		return ""
	}
	rel := "files/" + base
	if st, err := fs.Stat(m.fsys, rel); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return rel
}
