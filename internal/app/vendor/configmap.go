package vendor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/validate/content"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// SelectorLabel is the label key of the ConfigMap a vendored provider
// selects; its value is <type>-<name>, so each provider selects its own
// ConfigMap whatever else shares its namespace.
const SelectorLabel = "vendor.pinseal.dev/provider"

// configMapTemplate is the ConfigMap of the release: named after the
// release and the provider (so providers of one release in one namespace
// do not collide), versioned by the operator's version label (the
// version the operator keys it by: spec.version), holding the blob
// compressed and the metadata, as the cluster-api-operator reads them.
const configMapTemplate = `# Written by builder vendor. The release stands alone in the name, so that
# builder bump renames the ConfigMap along with spec.version.
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ %q }}-%s%s
  labels:
    %s: %s
    %s: %s
  annotations:
    %s: "true"
binaryData:
  components: {{ .Files.Get %q | b64enc }}
data:
  metadata: |
    {{- .Files.Get %q | nindent 4 }}
`

// vendorConfigMap writes the ConfigMap package (see the package
// documentation), checked in a staged copy of the chart first.
func (t *target) vendorConfigMap(ctx context.Context, opts Options, got []file, res *Result) error {
	n := t.names(got)
	if !t.pkg.Chart {
		return fmt.Errorf("vendor %s: a plain manifest directory cannot read the blob into its ConfigMap; vendor a Helm chart, or by hand (docs/sources.md)", res.Package)
	}
	if err := refuseExisting(t.dir, n.components, n.metadata, n.blob, n.template); err != nil {
		return fmt.Errorf("vendor %s: %w", res.Package, err)
	}
	gz, err := blob.CompressBytes(got[0].data)
	if err != nil {
		return err
	}
	pinBytes, err := pinFile(t.dir, t.pinEntry(n, true, t.checksums))
	if err != nil {
		return fmt.Errorf("vendor %s: %w", res.Package, err)
	}
	name := t.provider.Version + "-" + n.base
	if errs := content.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("vendor %s: the ConfigMap name %q is not an object name (%s)", res.Package, name, strings.Join(errs, "; "))
	}
	labels := map[string]string{SelectorLabel: n.base}
	tmplRel, tmplBytes, ns, err := t.selectTemplate(labels)
	if err != nil {
		return fmt.Errorf("vendor %s: %w; add spec.fetchConfig.selector by hand (docs/sources.md)", res.Package, err)
	}
	if ns != "" {
		// The operator looks in the provider's namespace only: the
		// ConfigMap takes the provider's, as its template writes it.
		ns = "\n  namespace: " + ns
	}
	cm := fmt.Sprintf(configMapTemplate, t.provider.Version, n.base, ns, SelectorLabel, n.base, model.VersionLabel, t.provider.Version,
		model.CompressedAnnotation, n.blob, n.metadata)
	changes := []change{
		{n.components, got[0].data},
		{n.metadata, got[1].data},
		{n.blob, gz},
		{n.template, []byte(cm)},
		{"pin.yaml", pinBytes},
		{tmplRel, tmplBytes},
	}
	if err := t.checkStaged(ctx, opts, changes, labels); err != nil {
		return fmt.Errorf("vendor %s: %w; nothing was written", res.Package, err)
	}
	if res.Files, err = commit(t.dir, changes); err != nil {
		return err
	}
	res.ConfigMap, res.Selector = name, labels
	return nil
}

// checkStaged renders a staged copy of the chart with changes and checks
// that the provider now installs from its ConfigMap, pinned, with no
// error finding: the selector picks the one ConfigMap of the release,
// and whatever values the chart is rendered with give it no other
// source.
func (t *target) checkStaged(ctx context.Context, opts Options, changes []change, labels map[string]string) error {
	dir, err := stage(t.dir, changes)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(dir))
	passes := [][]string{nil}
	if len(opts.Values) > 0 {
		passes = append(passes, opts.Values)
	}
	for _, values := range passes {
		vopts := verify.Options{}
		vopts.Logger = opts.Logger
		if len(values) > 0 {
			vopts.Values = []load.ValuesFiles{{Package: ".", Files: values}}
		}
		tree, rep, err := verify.Run(ctx, dir, vopts)
		if err != nil {
			return err
		}
		if err := t.judgeStaged(tree, rep, labels); err != nil {
			if len(values) > 0 {
				return fmt.Errorf("rendered with %s: %w", strings.Join(values, ", "), err)
			}
			return err
		}
	}
	return nil
}

// judgeStaged says what is wrong with the staged package, nil when the
// provider is vendored, pinned and free of error findings.
func (t *target) judgeStaged(tree *model.Tree, rep *report.Report, labels map[string]string) error {
	id := t.provider.ID()
	var p *model.Provider
	var pkg *model.Package
	for _, q := range tree.Packages {
		for _, pr := range q.Providers {
			if pr.ID() == id {
				p, pkg = pr, q
			}
		}
	}
	if p == nil {
		return fmt.Errorf("the staged chart no longer renders %s", id)
	}
	if p.Selector == nil || p.FetchOCI != "" || p.FetchURL != "" || !maps(p.Selector.MatchLabels, labels) {
		return fmt.Errorf("the edited template does not give %s exactly spec.fetchConfig.selector.matchLabels %v (it renders selector %v, oci %q, url %q)", id, labels, selectorLabels(p), p.FetchOCI, p.FetchURL)
	}
	src := check.Source(check.NewIndex(tree), pkg, p)
	if src.Kind != report.SourceVendored || !src.Pinned {
		return fmt.Errorf("in the staged chart %s is %s, not vendored and pinned: %s", id, src.Kind, src.Status)
	}
	var errs []string
	for _, f := range rep.Findings {
		if f.Severity == report.Error && (f.Provider == id || f.Provider == "") {
			errs = append(errs, fmt.Sprintf("%s: %s", f.Check, f.Message))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the staged chart fails checks: %s", strings.Join(errs, "; "))
	}
	return nil
}

func selectorLabels(p *model.Provider) map[string]string {
	if p.Selector == nil {
		return nil
	}
	return p.Selector.MatchLabels
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

var (
	docSep    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^---\s*$`) })
	ifLine    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\{\{-?\s*if\b.*\}\}\s*$`) })
	endLine   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\{\{-?\s*end\s*-?\}\}\s*$`) })
	keyLine   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\s*)([A-Za-z]+):\s*(.*?)\s*$`) })
	commentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(#.*)?$`) })
)

// selectTemplate edits the template that holds the provider object so
// that its spec.fetchConfig is selector.matchLabels labels, and returns
// the file (relative to the package), its new content and the provider's
// metadata.namespace as written ("" when none). The edit is
// the least that does it: an existing spec.fetchConfig block (with the
// `{{ if }}`/`{{ end }}` lines that wrap it alone, as a registry switch
// does) is replaced, else the selector goes after spec.version. The
// staged render (checkStaged) confirms what the edit gives.
func (t *target) selectTemplate(labels map[string]string) (string, []byte, string, error) {
	rel := t.provider.File
	if !strings.HasPrefix(rel, "templates/") {
		return "", nil, "", fmt.Errorf("cannot tell which template holds %s", t.provider.ID())
	}
	raw, err := os.ReadFile(filepath.Join(t.dir, filepath.FromSlash(rel)))
	if err != nil {
		return "", nil, "", err
	}
	lines := strings.SplitAfter(string(raw), "\n")
	start, end, err := t.objectLines(lines)
	if err != nil {
		return "", nil, "", fmt.Errorf("%s: %w", rel, err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range labels {
			if !yield(k) {
				return
			}
		}
	})
	block := func(indent string) []string {
		out := []string{indent + "fetchConfig:\n", indent + "  selector:\n", indent + "    matchLabels:\n"}
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%s      %s: %s\n", indent, k, labels[k]))
		}
		return out
	}
	out := slices.Clone(lines[:start])
	body := lines[start:end]
	if fc, fcEnd, indent, ok := findKey(body, "fetchConfig"); ok {
		from, to := fc, fcEnd
		if from > 0 && ifLine().MatchString(body[from-1]) && to < len(body) && endLine().MatchString(body[to]) {
			from, to = from-1, to+1
		}
		out = append(out, body[:from]...)
		out = append(out, block(indent)...)
		out = append(out, body[to:]...)
	} else if v, _, indent, ok := findKey(body, "version"); ok && indent != "" {
		out = append(out, body[:v+1]...)
		out = append(out, block(indent)...)
		out = append(out, body[v+1:]...)
	} else {
		return "", nil, "", fmt.Errorf("%s: no spec.version line in the object of %s", rel, t.provider.ID())
	}
	out = append(out, lines[end:]...)
	return rel, []byte(strings.Join(out, "")), namespaceOf(body), nil
}

// namespaceOf is the value of the object's metadata.namespace as written
// (the first indented namespace: before spec:), "" when none.
func namespaceOf(body []string) string {
	for _, l := range body {
		m := keyLine().FindStringSubmatch(l)
		switch {
		case m == nil:
		case m[1] == "" && m[2] == "spec":
			return ""
		case m[1] != "" && m[2] == "namespace":
			return m[3]
		}
	}
	return ""
}

// objectLines finds the lines [start, end) of the YAML document that holds
// the provider object: kind and metadata.name as written.
func (t *target) objectLines(lines []string) (int, int, error) {
	var found [][2]int
	start := 0
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) && !docSep().MatchString(lines[i]) {
			continue
		}
		if t.isObject(lines[start:i]) {
			found = append(found, [2]int{start, i})
		}
		start = i + 1
	}
	switch len(found) {
	case 0:
		kind, name := t.written()
		return 0, 0, fmt.Errorf("no document with kind: %s and name: %s as written text", kind, name)
	case 1:
		return found[0][0], found[0][1], nil
	}
	return 0, 0, fmt.Errorf("%d documents read as %s", len(found), t.provider.ID())
}

// written is the kind and metadata.name the provider's object is written
// with: a Rancher Turtles provider is a CAPIProvider of its own name.
func (t *target) written() (kind, name string) {
	if t.provider.Turtles() {
		k, n, _ := strings.Cut(t.provider.Object, "/")
		return k, n
	}
	return t.provider.Kind, t.provider.Name
}

func (t *target) isObject(doc []string) bool {
	wantKind, wantName := t.written()
	kind, name := false, false
	for _, l := range doc {
		m := keyLine().FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := strings.Trim(m[3], `"'`)
		switch {
		case m[1] == "" && m[2] == "kind" && v == wantKind:
			kind = true
		case m[1] != "" && m[2] == "name" && v == wantName:
			name = true
		}
	}
	return kind && name
}

// findKey finds the first line "INDENT key:" with a non-empty indent and
// the end of its block (the first later line indented no deeper that is
// not blank or a comment).
func findKey(body []string, key string) (at, end int, indent string, ok bool) {
	for i, l := range body {
		m := keyLine().FindStringSubmatch(l)
		if m == nil || m[2] != key || m[1] == "" {
			continue
		}
		end = i + 1
		for end < len(body) {
			if !commentRE().MatchString(body[end]) && len(leading(body[end])) <= len(m[1]) {
				break
			}
			end++
		}
		return i, end, m[1], true
	}
	return 0, 0, "", false
}

func leading(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " "))] }
