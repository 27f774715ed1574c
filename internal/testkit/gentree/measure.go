package gentree

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Construct is a set of template constructs a chart's templates use.
type Construct uint16

// The constructs measured: each found in a template's text (its own
// templates, or its subcharts').
const (
	UsesInclude  Construct = 1 << iota // include
	UsesDefine                         // define
	UsesRange                          // range
	UsesToYaml                         // toYaml
	UsesTpl                            // tpl
	UsesLookup                         // lookup
	UsesFiles                          // .Files.
	UsesRequired                       // required
	UsesFail                           // fail
	UsesWith                           // with
	UsesVariable                       // $x := …
)

var constructs = []struct {
	c          Construct
	name, goID string
	re         *regexp.Regexp
}{
	{UsesInclude, "include", "UsesInclude", regexp.MustCompile(`\binclude\s`)},
	{UsesDefine, "define", "UsesDefine", regexp.MustCompile(`\bdefine\s`)},
	{UsesRange, "range", "UsesRange", regexp.MustCompile(`\brange\s`)},
	{UsesToYaml, "toYaml", "UsesToYaml", regexp.MustCompile(`\btoYaml\b`)},
	{UsesTpl, "tpl", "UsesTpl", regexp.MustCompile(`\btpl\s`)},
	{UsesLookup, "lookup", "UsesLookup", regexp.MustCompile(`\blookup\s`)},
	{UsesFiles, ".Files", "UsesFiles", regexp.MustCompile(`\.Files\.`)},
	{UsesRequired, "required", "UsesRequired", regexp.MustCompile(`\brequired\s`)},
	{UsesFail, "fail", "UsesFail", regexp.MustCompile(`\bfail\s`)},
	{UsesWith, "with", "UsesWith", regexp.MustCompile(`\{\{-?\s*with\s`)},
	{UsesVariable, "variables", "UsesVariable", regexp.MustCompile(`\$[A-Za-z_]\w*\s*:?=`)},
}

// usesOf is the set of constructs in a template's text.
func usesOf(text []byte) Construct {
	var c Construct
	for _, k := range constructs {
		if k.re.Match(text) {
			c |= k.c
		}
	}
	return c
}

func (c Construct) String() string {
	var names []string
	for _, k := range constructs {
		if c&k.c != 0 {
			names = append(names, k.name)
		}
	}
	return strings.Join(names, ",")
}

// ChartStats are the measurements of one top-level chart (a directory
// with a Chart.yaml that is not under a charts/ folder): its regular files
// (symlinks are not followed, as the verifier does not follow them),
// subcharts included.
type ChartStats struct {
	Path          string // slash path relative to the measured root
	Files, Bytes  int    // regular files, subcharts included, and their bytes
	Values        int    // values.yaml bytes
	Schema        int    // values.schema.json bytes, 0 for none
	Templates     int    // files under templates/ (helpers included)
	TemplateBytes int
	Uses          Construct // what its own templates use
	// Subcharts are the charts under charts/ (nested ones too); SubFiles
	// and SubBytes everything under charts/, SubTemplates and
	// SubTemplateBytes their templates, SubUses what those use.
	Subcharts, SubFiles, SubBytes  int
	SubTemplates, SubTemplateBytes int
	SubUses                        Construct
	// Actions and SubActions are the template actions ({{ … }}) of its own
	// templates and of its subcharts': what a render executes, where the
	// rest of a template is text copied through.
	Actions, SubActions int
	// CRDFiles and CRDBytes are the files under a crds/ folder (the
	// chart's or a subchart's) that are not templates.
	CRDFiles, CRDBytes int
}

// MeasureCharts measures every top-level chart under root, sorted by path.
func MeasureCharts(root string) ([]ChartStats, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "charts" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "Chart.yaml" && d.Type().IsRegular() {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("measure %s: %w", root, err)
	}
	out := make([]ChartStats, 0, len(dirs))
	for _, dir := range dirs {
		s, err := measureChart(root, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func measureChart(root, dir string) (ChartStats, error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return ChartStats{}, err
	}
	s := ChartStats{Path: filepath.ToSlash(rel)}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		r, _ := filepath.Rel(dir, p)
		r = filepath.ToSlash(r)
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := int(info.Size())
		s.Files++
		s.Bytes += n
		sub := strings.HasPrefix(r, "charts/")
		parts := strings.Split(r, "/")
		tmpl := strings.HasPrefix(r, "templates/") || (sub && strings.Contains(r, "/templates/"))
		if slices.Contains(parts, "crds") && !tmpl {
			s.CRDFiles++
			s.CRDBytes += n
		}
		if sub {
			s.SubFiles++
			s.SubBytes += n
			if path.Base(r) == "Chart.yaml" {
				s.Subcharts++
			}
		}
		switch {
		case r == "values.yaml":
			s.Values = n
		case r == "values.schema.json":
			s.Schema = n
		case tmpl:
			text, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if sub {
				s.SubTemplates++
				s.SubTemplateBytes += n
				s.SubUses |= usesOf(text)
				s.SubActions += bytes.Count(text, []byte("{{"))
			} else {
				s.Templates++
				s.TemplateBytes += n
				s.Uses |= usesOf(text)
				s.Actions += bytes.Count(text, []byte("{{"))
			}
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("measure chart %s: %w", s.Path, err)
	}
	return s, nil
}

// Distribution is the median, 90th percentile, maximum and sum of a
// measure over charts.
type Distribution struct{ Median, P90, Max, Sum int }

// Distribute summarizes f over charts (nearest-rank percentiles).
func Distribute(charts []ChartStats, f func(ChartStats) int) Distribution {
	if len(charts) == 0 {
		return Distribution{}
	}
	v := make([]int, len(charts))
	var d Distribution
	for i, c := range charts {
		v[i] = f(c)
		d.Sum += v[i]
	}
	sort.Ints(v)
	rank := func(p float64) int {
		k := int(p*float64(len(v))+0.999999) - 1
		return v[max(0, min(k, len(v)-1))]
	}
	d.Median, d.P90, d.Max = rank(0.5), rank(0.9), v[len(v)-1]
	return d
}

func (d Distribution) String() string {
	return fmt.Sprintf("%d; %d; %d; %d", d.Median, d.P90, d.Max, d.Sum)
}
