package bump

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/pkg/pin"
)

// Text edits are byte-range edits of files as written: one value on one
// line is replaced, and every other byte (comments, quoting, key order,
// indentation, line endings) stays.

// isTokenByte reports whether c continues a version or release token.
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '+'
}

// tokenIndexes returns the offsets of old in s where it stands as a whole
// token (not part of v0.7.70 or xv0.7.7).
func tokenIndexes(s, old string) []int {
	var out []int
	if old == "" {
		return nil
	}
	for i := 0; ; {
		j := strings.Index(s[i:], old)
		if j < 0 {
			return out
		}
		k := i + j
		end := k + len(old)
		if (k == 0 || !isTokenByte(s[k-1])) && (end == len(s) || !isTokenByte(s[end]) || (s[end] == '.' && (end+1 == len(s) || !isTokenByte(s[end+1])))) {
			out = append(out, k)
		}
		i = k + 1
	}
}

func containsToken(s, tok string) bool { return len(tokenIndexes(s, tok)) > 0 }

// replaceTokens replaces every whole-token old in s.
func replaceTokens(s, old, new string) string {
	idx := tokenIndexes(s, old)
	if len(idx) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, k := range idx {
		b.WriteString(s[last:k])
		b.WriteString(new)
		last = k + len(old)
	}
	b.WriteString(s[last:])
	return b.String()
}

// textFile is one text file of the package being edited, line by line.
type textFile struct {
	rel   string
	old   []byte
	lines []string // each with its line ending
	why   map[int]string
}

func readText(dir, rel string) (*textFile, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, fmt.Errorf("%s is not a text file", rel)
	}
	return &textFile{rel: rel, old: data, lines: strings.SplitAfter(string(data), "\n"), why: map[int]string{}}, nil
}

func (f *textFile) bytes() []byte { return []byte(strings.Join(f.lines, "")) }

func (f *textFile) changed() bool { return !bytes.Equal(f.bytes(), f.old) }

// replaceOnLine replaces the whole-token old with new on 1-based line n,
// at or after byte column from; it reports whether it found old.
func (f *textFile) replaceOnLine(n, from int, old, new, why string) bool {
	if n < 1 || n > len(f.lines) {
		return false
	}
	line := f.lines[n-1]
	if from > len(line) {
		return false
	}
	head, tail := line[:from], line[from:]
	r := replaceTokens(tail, old, new)
	if r == tail {
		return false
	}
	f.lines[n-1] = head + r
	f.why[n] = why
	return true
}

// replaceAll replaces the whole-token old with new on every line
// (lines that hold skip are left alone), and returns how many lines changed.
func (f *textFile) replaceAll(old, new, why string) int {
	n := 0
	for i := range f.lines {
		if f.replaceOnLine(i+1, 0, old, new, why) {
			n++
		}
	}
	return n
}

// editSet is every text file a bump edits.
type editSet struct {
	dir   string
	files map[string]*textFile
}

func (e *editSet) file(rel string) (*textFile, error) {
	if f, ok := e.files[rel]; ok {
		return f, nil
	}
	f, err := readText(e.dir, rel)
	if err != nil {
		return nil, err
	}
	e.files[rel] = f
	return f, nil
}

// changedFiles returns the edited files that differ, by path.
func (e *editSet) changedFiles() []*textFile {
	var out []*textFile
	for _, f := range e.files {
		if f.changed() {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

// editPinFile rewrites the provider entry i of pin.yaml: version, release,
// each source url and sha256, from the values in to. Only the scalars'
// text changes; a value YAML would write escaped or over several lines is
// refused (edit it by hand).
func (e *editSet) editPinFile(i int, from, to *pin.Provider) error {
	f, err := e.file(pin.FileName)
	if err != nil {
		return err
	}
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(f.old, &doc); err != nil || len(doc.Content) == 0 {
		return fmt.Errorf("%s: %v", pin.FileName, err)
	}
	provs := mapValue(doc.Content[0], "providers")
	if provs == nil || provs.Kind != yamlv3.SequenceNode || i >= len(provs.Content) {
		return fmt.Errorf("%s: providers[%d] not found", pin.FileName, i)
	}
	entry := provs.Content[i]
	set := func(n *yamlv3.Node, field, old, new string) error {
		if n == nil || old == new {
			return nil
		}
		if n.Kind != yamlv3.ScalarNode || n.Value != old || n.Style&(yamlv3.LiteralStyle|yamlv3.FoldedStyle) != 0 {
			return fmt.Errorf("%s:%d: %s is not the plain value %q; edit it by hand", pin.FileName, n.Line, field, old)
		}
		col := byteColumn(f.lines[n.Line-1], n.Column)
		if !f.replaceOnLine(n.Line, col, old, new, field) {
			return fmt.Errorf("%s:%d: %s %q is written in a form bump does not rewrite (escapes?); write it as a plain scalar", pin.FileName, n.Line, field, old)
		}
		return nil
	}
	if err := set(mapValue(entry, "version"), "version", from.Version, to.Version); err != nil {
		return err
	}
	if err := set(mapValue(entry, "release"), "release", from.Release, to.Release); err != nil {
		return err
	}
	if err := set(mapValue(entry, "checksums"), "checksums", from.Checksums, to.Checksums); err != nil {
		return err
	}
	srcs := mapValue(entry, "sources")
	for j := range from.Sources {
		if srcs == nil || j >= len(srcs.Content) {
			break
		}
		s := srcs.Content[j]
		if err := set(mapValue(s, "url"), "url", from.Sources[j].URL, to.Sources[j].URL); err != nil {
			return err
		}
		if err := set(mapValue(s, "sha256"), "sha256", from.Sources[j].SHA256, to.Sources[j].SHA256); err != nil {
			return err
		}
	}
	return nil
}

// mapValue returns the value node of key in mapping m, nil if absent.
func mapValue(m *yamlv3.Node, key string) *yamlv3.Node {
	if m == nil || m.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// byteColumn converts yaml's 1-based character column to a byte offset.
func byteColumn(line string, col int) int {
	off := 0
	for c := 1; c < col && off < len(line); c++ {
		_, n := utf8.DecodeRuneInString(line[off:])
		off += n
	}
	return off
}

var (
	mkAssignRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^\s*(?:(?:export|override)\s+)*([A-Za-z0-9_.-]*VERSION)\s*(?::{1,3}=|\?=|=)\s*(\S.*)$`)
	})
	argRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*ARG\s+([A-Za-z0-9_]*VERSION)=(\S+)`) })
)

// editVersionVars replaces the old version in Makefile version variables
// (CABPT_UPSTREAM_VERSION = v0.6.12) of the package's Makefile and the
// in-package files it includes, and in Dockerfile ARG *VERSION= defaults
// (Dockerfile, images/*/Dockerfile).
func (e *editSet) editVersionVars(set *pin.Set, oldV, newV string) error {
	var files []string
	if set != nil {
		for _, v := range set.Versions {
			files = append(files, v.File)
		}
	}
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile", "Dockerfile"} {
		files = append(files, name)
	}
	more, _ := filepath.Glob(filepath.Join(e.dir, "images", "*", "Dockerfile"))
	for _, m := range more {
		rel, _ := filepath.Rel(e.dir, m)
		files = append(files, filepath.ToSlash(rel))
	}
	seen := map[string]bool{}
	for _, rel := range files {
		if rel == "" || seen[rel] || pin.CheckPath(rel) != nil {
			continue
		}
		seen[rel] = true
		f, err := e.file(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		docker := strings.HasPrefix(path.Base(rel), "Dockerfile")
		for i, line := range f.lines {
			re := mkAssignRE()
			if docker {
				re = argRE()
			}
			m := re.FindStringSubmatchIndex(strings.TrimRight(line, "\r\n"))
			if m == nil {
				continue
			}
			val := line[m[4]:m[5]]
			if !docker {
				val = strings.TrimSpace(strings.SplitN(val, "#", 2)[0])
			}
			if strings.Trim(val, `"'`) != oldV {
				continue
			}
			name := line[m[2]:m[3]]
			f.replaceOnLine(i+1, m[4], oldV, newV, name)
		}
	}
	return nil
}

// editLiterals replaces literal old URLs and digests wherever a Makefile
// (or included file) writes them out: URL variables, recipe lines and
// `echo "<hex>  file" | sha256sum -c` digests.
func (e *editSet) editLiterals(set *pin.Set, pairs [][2]string) error {
	files := []string{}
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		if _, err := os.Stat(filepath.Join(e.dir, name)); err == nil {
			files = append(files, name)
		}
	}
	if set != nil {
		for _, v := range append(append([]pin.Var(nil), set.Versions...), set.Unpinned...) {
			if v.File != "" && pin.CheckPath(v.File) == nil {
				files = append(files, v.File)
			}
		}
	}
	seen := map[string]bool{}
	for _, rel := range files {
		if seen[rel] {
			continue
		}
		seen[rel] = true
		f, err := e.file(rel)
		if err != nil {
			continue
		}
		for _, p := range pairs {
			if p[0] != "" && p[0] != p[1] {
				f.replaceAll(p[0], p[1], "pin")
			}
		}
	}
	return nil
}

var (
	valuesRefRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\.Values((?:\.[A-Za-z0-9_]+)+)`) })
	// indexRefRE is `index .Values "a" "b"` (or `index .Values.a "b"`):
	// how a template reads keys with dashes (Rancher Turtles'
	// `index .Values "cluster-api-operator" "cluster-api" "core" "version"`).
	indexRefRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`index\s+\.Values((?:\.[A-Za-z0-9_]+)*)((?:\s+"[^"\\]*")+)`)
	})
	quotedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"([^"\\]*)"`) })
)

// valuesRefs are the values keys a template reads, as dotted paths
// (.Values.a.b and index .Values "a" "b" both "a.b").
func valuesRefs(text string) []string {
	var out []string
	for _, m := range valuesRefRE().FindAllStringSubmatchIndex(text, -1) {
		if strings.HasSuffix(strings.TrimRight(text[:m[0]], " \t"), "index") {
			continue // index .Values.a "b": read below
		}
		out = append(out, text[m[2]+1:m[3]])
	}
	for _, m := range indexRefRE().FindAllStringSubmatch(text, -1) {
		keys := strings.Split(strings.TrimPrefix(m[1], "."), ".")
		if m[1] == "" {
			keys = nil
		}
		for _, q := range quotedRE().FindAllStringSubmatch(m[2], -1) {
			keys = append(keys, q[1])
		}
		out = append(out, strings.Join(keys, "."))
	}
	return out
}

// editTemplates replaces the old release name in the chart's templates
// (ConfigMap name, spec.version, the provider.cluster.x-k8s.io/version
// label) and, where the templates read the version from values.yaml, the
// keys they read.
func (e *editSet) editTemplates(oldRel, newRel, oldV, newV string) error {
	tmpls, err := templateFiles(e.dir)
	if err != nil {
		return err
	}
	refs := e.replaceInTemplates(tmpls, oldRel, newRel)
	if len(refs) == 0 {
		return nil
	}
	return e.editValues(refs, oldRel, newRel, oldV, newV)
}

// templateFiles are the chart's templates under dir (templates/*.yaml,
// .yml, .tpl) and the plain manifests at its top, as slash paths.
func templateFiles(dir string) ([]string, error) {
	var tmpls []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (rel == "files" || rel == "patches" || rel == "images" || strings.HasPrefix(d.Name(), ".") || rel == "charts") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		ext := path.Ext(rel)
		if (strings.HasPrefix(rel, "templates/") && (ext == ".yaml" || ext == ".yml" || ext == ".tpl")) ||
			(!strings.Contains(rel, "/") && (ext == ".yaml" || ext == ".yml") && rel != pin.FileName && rel != "values.yaml" && rel != "Chart.yaml") {
			tmpls = append(tmpls, rel)
		}
		return nil
	})
	return tmpls, err
}

// replaceInTemplates replaces the old release name in the templates,
// returning the values keys they read (.Values.a.b as "a.b").
func (e *editSet) replaceInTemplates(tmpls []string, oldRel, newRel string) map[string]bool {
	refs := map[string]bool{}
	for _, rel := range tmpls {
		f, err := e.file(rel)
		if err != nil {
			continue // not text
		}
		for _, r := range valuesRefs(string(f.old)) {
			refs[r] = true
		}
		f.replaceAll(oldRel, newRel, "release")
	}
	return refs
}

// editValues replaces the old release name or version in the values.yaml
// keys refs names.
func (e *editSet) editValues(refs map[string]bool, oldRel, newRel, oldV, newV string) error {
	f, err := e.file("values.yaml")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var doc yamlv3.Node
	if yamlv3.Unmarshal(f.old, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	var walk func(n *yamlv3.Node, prefix string)
	walk = func(n *yamlv3.Node, prefix string) {
		if n.Kind != yamlv3.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if prefix != "" {
				p = prefix + "." + k.Value
			}
			if v.Kind == yamlv3.MappingNode {
				walk(v, p)
				continue
			}
			if v.Kind != yamlv3.ScalarNode || !refs[p] {
				continue
			}
			col := byteColumn(f.lines[v.Line-1], v.Column)
			switch v.Value {
			case oldRel:
				f.replaceOnLine(v.Line, col, oldRel, newRel, p)
			case oldV:
				f.replaceOnLine(v.Line, col, oldV, newV, p)
			}
		}
	}
	walk(doc.Content[0], "")
	return nil
}
