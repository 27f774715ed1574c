package add

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// releaseWords are the words a release name carries after the version
// when no sibling of the same kind shows the tree's own
// (v1.10.1-core, v0.7.7-infraprovider-proxmox): Cozystack's.
var releaseWords = map[string]string{
	"CoreProvider": "core", "BootstrapProvider": "bootstrap", "ControlPlaneProvider": "control-plane",
	"InfrastructureProvider": "infraprovider", "IPAMProvider": "ipam", "AddonProvider": "addon",
	"RuntimeExtensionProvider": "runtime-extension",
}

// The layout of examples/ (a package with no sibling).
const (
	examplesHelmignore = "# Patterns to ignore when building packages.\n.git\n*.swp\n*.bak\n.DS_Store\npatches\nMakefile\npin.yaml\n"
	examplesChart      = "apiVersion: v2\nname: %s\nversion: 0.0.0 # Placeholder, the actual version will be automatically set during the build process\n"
	defaultTarget      = "components"
	blobFile           = "files/components.gz"
	metadataFile       = "files/metadata.yaml"
)

// shape is what a new package takes from the sibling it follows.
type shape struct {
	sibling    *model.Package // nil: the layout of examples/
	pins       string         // pin.SourcePinFile or pin.SourceMakefile
	chart      string         // Chart.yaml text, its name line to be replaced
	chartName  string         // the sibling's chart name
	helmignore string
	makefile   bool     // write a Makefile
	target     string   // the make target that runs builder build
	includes   []string // the sibling Makefile's include lines
	namespace  string   // Makefile NAMESPACE
	objectNS   string   // metadata.namespace the sibling's templates write
	cmFile     string   // template of the ConfigMap
	provFile   string   // template of the provider
	labelValue string   // value of the sibling's <type>-components label
	release    *model.Provider
}

var (
	chartNameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^name:[ \t]*["']?([^"'\s#]+)["']?[ \t]*(#.*)?$`) })
	includeRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^-?include[ \t]+\S.*$`) })
	ruleRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9_.-]+)[ \t]*:([^=]|$)`) })
	builderBuild  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(builder|\$\(BUILDER\)|\$\{BUILDER\})[ \t]+build\b`) })
	objectNSRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^  namespace:[ \t]*(\S+)[ \t]*$`) })
	releaseWordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z-]*[a-z]$`) })
)

// pinned says whether pkg pins its downloads (pin.yaml, or Makefile
// URLs with SHA-256).
func pinned(pkg *model.Package) bool {
	return pkg.Pins != nil && (pkg.Pins.Source == pin.SourcePinFile || pkg.Pins.Source == pin.SourceMakefile && pkg.Pins.File != nil)
}

// learnShape reads what a new package of kind in parent copies from the
// sibling it follows: its chart files, its Makefile's conventions, its
// namespace, and where and how its provider and ConfigMap are written.
// With no sibling to follow, the layout of examples/.
func learnShape(t *model.Tree, parent, kind string) shape {
	sh := shape{pins: pin.SourcePinFile, chart: examplesChart, helmignore: examplesHelmignore, makefile: true, target: "update",
		cmFile: "templates/configmaps.yaml", provFile: "templates/providers.yaml"}
	sib := siblingToFollow(t, parent, kind)
	if sib == nil {
		return sh
	}
	sh.sibling = sib
	sh.copyChartFiles()
	sh.followMakefile()
	if sib.Pins != nil {
		sh.namespace = sib.Pins.Namespace
	}
	sh.release = providerToFollow(sib, kind)
	sh.followProviderTemplate()
	sh.followConfigMap(t)
	return sh
}

// siblingToFollow picks, among the provider packages in parent, a pinned
// one of the same kind, else a pinned one that is not the core, else the
// pinned core, else any of the same kind, else any; ties go to the first
// by path. Nil when parent holds none.
func siblingToFollow(t *model.Tree, parent, kind string) *model.Package {
	var best *model.Package
	bestScore := -1
	for _, pkg := range t.Packages {
		if filepath.Dir(pkg.Dir) != parent || len(pkg.Providers) == 0 || !pkg.Chart {
			continue
		}
		if score := siblingScore(pkg, kind); score > bestScore {
			best, bestScore = pkg, score
		}
	}
	return best
}

// siblingScore ranks pkg as a sibling to follow for a new package of
// kind: the higher the better.
func siblingScore(pkg *model.Package, kind string) int {
	same := slices.ContainsFunc(pkg.Providers, func(p *model.Provider) bool { return p.Kind == kind })
	core := slices.ContainsFunc(pkg.Providers, func(p *model.Provider) bool { return p.Kind == "CoreProvider" })
	switch {
	case pinned(pkg) && same:
		return 5
	case pinned(pkg) && !core:
		return 4
	case pinned(pkg):
		return 3
	case same:
		return 2
	default:
		return 1
	}
}

// siblingFile is the text of the sibling's file rel; false when it
// cannot be read.
func (sh *shape) siblingFile(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(sh.sibling.Dir, rel))
	return string(b), err == nil
}

// copyChartFiles takes the sibling's Chart.yaml (when its name line can
// be found, to be replaced) and its .helmignore (none when it has none).
func (sh *shape) copyChartFiles() {
	if c, ok := sh.siblingFile("Chart.yaml"); ok {
		if m := chartNameRE().FindStringSubmatch(c); m != nil {
			sh.chart, sh.chartName = c, m[1]
		}
	}
	sh.helmignore, _ = sh.siblingFile(".helmignore")
}

// followMakefile takes from the sibling's Makefile whether the new
// package has one, where its pins live (pin.yaml when the sibling has
// one, else the Makefile), its include lines and the target that runs
// builder build.
func (sh *shape) followMakefile() {
	mk, hasMk := sh.siblingFile("Makefile")
	sh.makefile = hasMk
	if hasMk && (sh.sibling.Pins == nil || sh.sibling.Pins.Source != pin.SourcePinFile) {
		sh.pins = pin.SourceMakefile
	}
	sh.target = defaultTarget
	if !hasMk {
		return
	}
	sh.includes = includeRE().FindAllString(mk, -1)
	if tg := buildTarget(mk); tg != "" {
		sh.target = tg
	} else if sh.pins == pin.SourcePinFile {
		sh.target = "update"
	}
}

// providerToFollow is the sibling's first provider of kind, else its
// first provider.
func providerToFollow(sib *model.Package, kind string) *model.Provider {
	for _, q := range sib.Providers {
		if q.Kind == kind {
			return q
		}
	}
	return sib.Providers[0]
}

// followProviderTemplate writes the new provider to the template the
// followed provider comes from, in the namespace that template writes
// (when it is a literal).
func (sh *shape) followProviderTemplate() {
	p := sh.release
	if !strings.HasPrefix(p.File, "templates/") {
		return
	}
	sh.provFile = p.File
	if txt, ok := sh.siblingFile(p.File); ok {
		if m := objectNSRE().FindStringSubmatch(txt); m != nil && !strings.Contains(m[1], "{{") {
			sh.objectNS = m[1]
		}
	}
}

// followConfigMap writes the new ConfigMap to the template of the
// followed provider's picked ConfigMap and takes the value of its
// <type>-components label.
func (sh *shape) followConfigMap(t *model.Tree) {
	p := sh.release
	m, ok := check.NewIndex(t).Select(sh.sibling, p).Picked(p.Version)
	if !ok {
		return
	}
	if strings.HasPrefix(m.ConfigMap.File, "templates/") {
		sh.cmFile = m.ConfigMap.File
	}
	for k, v := range m.ConfigMap.Labels {
		if strings.HasSuffix(k, "-components") {
			sh.labelValue = v
		}
	}
}

// buildTarget is the first rule of a Makefile whose recipe runs builder
// build.
func buildTarget(mk string) string {
	rule := ""
	for _, l := range strings.Split(mk, "\n") {
		if m := ruleRE().FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "\t") {
			rule = m[1]
			continue
		}
		if strings.HasPrefix(l, "\t") && rule != "" && builderBuild().MatchString(l) {
			return rule
		}
	}
	return ""
}

// newPackage is what the new package holds.
type newPackage struct {
	base, kind, name, repo, version string
	components, metadata            upstream
	variables                       []string
}

// change is one file of the new package.
type change struct {
	rel  string
	data []byte
}

// releaseName follows the sibling's convention: the version, the word
// its release carries for the kind (when it is of the same kind), and
// the provider's name unless it is the core.
func (sh shape) releaseName(np newPackage, res *Result) string {
	word := releaseWords[np.kind]
	from := ""
	if p := sh.release; p != nil && p.Kind == np.kind {
		suffix := strings.TrimPrefix(strings.TrimPrefix(p.Version, pin.ReleaseVersion(p.Version)), "-")
		suffix = strings.TrimSuffix(suffix, "-"+p.Name)
		if releaseWordRE().MatchString(suffix) {
			word, from = suffix, p.Version
		}
	}
	name := np.version + "-" + word
	if np.kind != "CoreProvider" {
		name += "-" + np.name
	}
	switch {
	case from != "":
		res.Notes = append(res.Notes, fmt.Sprintf("release name %s: the word of %s's %s, with the provider's name", name, sh.sibling.Path, from))
	case np.kind != "CoreProvider":
		res.Notes = append(res.Notes, fmt.Sprintf("release name %s: version, %q for a %s, the provider's name", name, word, np.kind))
	}
	return name
}

// selector is the new provider's labels: <type>-components with the
// sibling's value (when it has one) and <type>-provider: name, its own.
// A label set another provider's selector in the namespace would match
// drops the shared label; a ConfigMap the new selector would match is
// refused.
func (sh shape) selector(t *model.Tree, np newPackage, ns string) (map[string]string, error) {
	typ := model.ProviderKinds[np.kind]
	own := map[string]string{typ + "-provider": np.name}
	try := []map[string]string{own}
	if sh.labelValue != "" {
		try = append([]map[string]string{{typ + "-components": sh.labelValue, typ + "-provider": np.name}}, try...)
	}
	var conflict string
	for _, ls := range try {
		conflict = ""
		for _, pkg := range t.Packages {
			for _, p := range pkg.Providers {
				if p.Selector == nil || check.Namespace(pkg, p.Namespace) != ns {
					continue
				}
				if sel, err := layout.Selector(p.Selector); err == nil && sel.Matches(labels.Set(ls)) {
					conflict = fmt.Sprintf("the selector of %s in %s would match its ConfigMap", p.ID(), pkg.Path)
				}
			}
			for _, cm := range pkg.ConfigMaps {
				if check.Namespace(pkg, cm.Namespace) == ns && labels.SelectorFromSet(ls).Matches(labels.Set(cm.Labels)) {
					conflict = fmt.Sprintf("its selector would match the ConfigMap %s of %s", cm.Name, pkg.Path)
				}
			}
		}
		if conflict == "" {
			return ls, nil
		}
	}
	return nil, fmt.Errorf("no selector label of its own in namespace %q: %s", ns, conflict)
}

// write lays the package out and fills res with what it decided.
func (sh shape) write(t *model.Tree, np newPackage, res *Result) ([]change, error) {
	res.Pins = sh.pins
	if sh.sibling != nil {
		res.Sibling = sh.sibling.Path
	}
	res.Release = sh.releaseName(np, res)
	ns := sh.namespace
	if sh.objectNS != "" {
		ns = sh.objectNS
	}
	if ns == "" && sh.sibling != nil {
		ns = sh.sibling.Namespace
	}
	res.Namespace = ns
	sel, err := sh.selector(t, np, ns)
	if err != nil {
		return nil, err
	}
	res.Selector = sel
	compFile := "files/" + np.components.name
	gz, err := blob.CompressBytes(np.components.data)
	if err != nil {
		return nil, err
	}
	chart := sh.chart
	if sh.chartName != "" {
		newName := np.base
		if strings.Contains(sh.chartName, filepath.Base(sh.sibling.Dir)) {
			newName = strings.Replace(sh.chartName, filepath.Base(sh.sibling.Dir), np.base, 1)
		}
		loc := chartNameRE().FindStringSubmatchIndex(chart)
		chart = chart[:loc[2]] + newName + chart[loc[3]:]
	} else {
		chart = fmt.Sprintf(examplesChart, np.base)
	}
	out := []change{{"Chart.yaml", []byte(chart)}}
	if sh.helmignore != "" {
		out = append(out, change{".helmignore", []byte(sh.helmignore)})
	}
	varStem := strings.ToUpper(strings.ReplaceAll(np.name, "-", "_"))
	if sh.makefile || sh.pins == pin.SourceMakefile {
		out = append(out, change{"Makefile", []byte(sh.makefileText(np, res, varStem, compFile))})
	}
	if sh.pins == pin.SourcePinFile {
		p, err := pinFile(np, res, compFile)
		if err != nil {
			return nil, err
		}
		out = append(out, change{pin.FileName, p})
	}
	if len(np.variables) > 0 {
		out = append(out, change{"values.yaml", []byte(valuesText(np))})
	}
	out = append(out,
		change{compFile, np.components.data},
		change{metadataFile, np.metadata.data},
		change{blobFile, gz},
	)
	cm := configMapText(res, sel, sh.objectNS, sh.provFile)
	prov := providerText(np, res, sel, sh.objectNS)
	if sh.cmFile == sh.provFile {
		out = append(out, change{sh.cmFile, []byte(cm + prov)})
	} else {
		out = append(out, change{sh.cmFile, []byte(cm)}, change{sh.provFile, []byte(prov)})
	}
	return out, nil
}

// makefileText is the package Makefile: NAME, NAMESPACE, the version
// variable, the pins when the Makefile holds them, the sibling's
// includes and a target that runs builder build.
func (sh shape) makefileText(np newPackage, res *Result, stem, compFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "export NAME=%s\n", np.base)
	if sh.namespace != "" {
		fmt.Fprintf(&b, "export NAMESPACE=%s\n", sh.namespace)
	}
	b.WriteString("\n")
	if sh.pins == pin.SourceMakefile {
		fmt.Fprintf(&b, "# Upstream release of %s (%s/%s), each file pinned by the\n# SHA-256 of its bytes. `builder build` reads these pins, downloads what\n# files/ lacks, checks every SHA-256 and writes the reproducible blob;\n# `builder bump` moves them to another release.\n", np.repo, np.kind, np.name)
		fmt.Fprintf(&b, "%s_VERSION = %s\n", stem, np.version)
		for _, f := range []struct {
			word string
			u    upstream
		}{{"COMPONENTS", np.components}, {"METADATA", np.metadata}} {
			u := strings.Replace(f.u.digest.URL, "/download/"+np.version+"/", "/download/$("+stem+"_VERSION)/", 1)
			fmt.Fprintf(&b, "%s_%s_URL = %s\n%s_%s_SHA256 = %s\n", stem, f.word, u, stem, f.word, f.u.digest.SHA256)
		}
	} else {
		fmt.Fprintf(&b, "# Upstream release of %s (%s/%s). pin.yaml pins its files by\n# SHA-256; keep the two in step (the verifier's pin-version check compares\n# them with the ConfigMap name and spec.version).\n%s_VERSION = %s\n", np.repo, np.kind, np.name, stem, np.version)
	}
	if len(sh.includes) > 0 {
		b.WriteString("\n" + strings.Join(sh.includes, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nBUILDER ?= builder\n\n# Write %s, %s and the reproducible\n# blob %s from the pinned upstream files.\n%s:\n\t$(BUILDER) build .\n",
		compFile, metadataFile, blobFile, sh.target)
	return b.String()
}

// pinFile is the pin.yaml of the package, checked to parse and validate.
func pinFile(np newPackage, res *Result, compFile string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Upstream files this package vendors, pinned by the SHA-256 of their bytes\n# (the GitHub release %s of %s).\nproviders:\n", np.version, np.repo)
	fmt.Fprintf(&b, "- kind: %s\n  name: %s\n  version: %s\n  release: %s\n  sources:\n", np.kind, np.name, np.version, res.Release)
	fmt.Fprintf(&b, "  - url: %s\n    sha256: %s\n    to: %s\n", np.components.digest.URL, np.components.digest.SHA256, compFile)
	fmt.Fprintf(&b, "  - url: %s\n    sha256: %s\n    to: %s\n", np.metadata.digest.URL, np.metadata.digest.SHA256, metadataFile)
	fmt.Fprintf(&b, "  blob: %s\n", blobFile)
	f, err := pin.Parse([]byte(b.String()), pin.FileName)
	if err == nil {
		err = f.Validate(pin.FileName)
	}
	if err != nil {
		return nil, fmt.Errorf("the new %s does not hold: %w", pin.FileName, err)
	}
	return []byte(b.String()), nil
}

// valuesText documents the Secret the provider reads its variables from:
// the variables are named, their values are not invented.
func valuesText(np newPackage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The Secret the provider reads its variables from (spec.configSecret).\n# The components of %s %s need these variables, which have no default;\n# the operator's install fails while one is missing:\n", np.repo, np.version)
	for _, v := range np.variables {
		fmt.Fprintf(&b, "#   %s\n", v)
	}
	b.WriteString("# Create a Secret holding them in the provider's namespace and name it here.\nconfigSecret:\n  name: \"\"\n")
	return b.String()
}

func labelLines(sel map[string]string, indent string) string {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s%s: %s\n", indent, k, sel[k])
	}
	return b.String()
}

// configMapText is the ConfigMap of the release: named after it, with
// the selector's labels, the compressed annotation, the blob and the
// metadata.
func configMapText(res *Result, sel map[string]string, ns, provFile string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  # The cluster-api-operator installs the ConfigMap whose name equals the\n  # provider's spec.version (%s).\n  name: %s\n", provFile, res.Release)
	if ns != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", ns)
	}
	fmt.Fprintf(&b, "  labels:\n%s  annotations:\n    %s: \"true\"\n", labelLines(sel, "    "), model.CompressedAnnotation)
	fmt.Fprintf(&b, "binaryData:\n  components: {{ .Files.Get %q | b64enc }}\ndata:\n  metadata: |\n    {{- .Files.Get %q | nindent 4 }}\n", blobFile, metadataFile)
	return b.String()
}

// providerText is the provider object: spec.version the release, its
// own selector, and spec.configSecret when values.yaml names a Secret.
func providerText(np newPackage, res *Result, sel map[string]string, ns string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n", model.OperatorAPIVersion, np.kind, np.name)
	if ns != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", ns)
	}
	fmt.Fprintf(&b, "spec:\n  # https://github.com/%s/\n  version: %s\n  fetchConfig:\n    selector:\n      matchLabels:\n%s", np.repo, res.Release, labelLines(sel, "        "))
	if len(np.variables) > 0 {
		b.WriteString("  {{- with .Values.configSecret }}\n  {{- if .name }}\n  configSecret:\n    name: {{ .name | quote }}\n  {{- end }}\n  {{- end }}\n")
	}
	return b.String()
}
