package render

// Bounds on what the verifier's own process parses of a chart. Helm's
// loader builds a chart's values, Chart.yaml and lock, values schema and
// the contents of its packed subcharts in memory, and the verifier needs
// the loaded chart in its own process (the release it would store, the
// templates' sources). A 1 KB values.yaml of nested aliases decodes to
// gigabytes, and a packed subchart of a few kilobytes inflates to 100 MiB
// (Helm's own bound, per archive, nested ones each again). So the render
// child, under its memory and time bounds, inflates the packed subcharts
// through a bounded reader before Helm does, loads the chart first and
// measures what Helm built; the verifier's process loads the chart only
// when that is within the bounds below. A chart over one is a package-load
// finding naming the file and the bound.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/yamlbound"
	"github.com/pinseal/pinseal/pkg/model"
)

// Parse bounds of one chart (its subcharts, packed or not, included).
const (
	// MaxChartValueNodes bounds the nodes of the values of a chart and
	// its subcharts, Chart.yaml, lock files and values schemas as Helm
	// loads them (aliases expanded): about 30 MiB of the verifier's memory
	// at the bound.
	MaxChartValueNodes = 100000
	// MaxChartValueBytes bounds the bytes of the strings in them.
	MaxChartValueBytes = 4 << 20
	// MaxArchiveBytes bounds what the packed subcharts (charts/*.tgz,
	// nested ones included) of a chart inflate to, in all.
	MaxArchiveBytes = 16 << 20
	// MaxArchiveEntries bounds their entries, in all.
	MaxArchiveEntries = 10000
)

// parseMark starts a render child's progress mark for a step that parses
// rather than renders (a template name never starts with it), so that a
// render bound passed there names the file being parsed.
const parseMark = "parse:"

// parseBound is a parse bound a chart passed: File is the package file
// (a packed subchart for what is inside one), Message what passed which
// bound.
type Bound struct {
	File    string
	Message string
}

func (b *Bound) Problem() *model.Problem {
	return &model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: b.File},
		Message: b.Message + "; the chart was not loaded",
		Hint:    "a provider package's chart needs nothing this large: remove what makes it so (YAML aliases that repeat whole subtrees, generated values, large packed subcharts)"}
}

// CheckChartFiles goes through the chart as Helm's loader.LoadFiles will:
// every packed subchart (charts/*.tgz of the chart and of its subcharts,
// nested ones included) is inflated through a reader bounded by
// MaxArchiveBytes and MaxArchiveEntries in all, and every YAML file Helm
// decodes (Chart.yaml, values.yaml, lock files, of every chart) is decoded
// (the schema too) as Helm decodes it and measured, against MaxChartValueNodes and
// MaxChartValueBytes in all. mark is called with the package file about to
// be read, so that a render bound passed while reading it names it. It
// runs in the render child (in this process when the chart renders in
// process).
func CheckChartFiles(files []*loader.BufferedFile, mark func(string)) *Bound {
	if withinUndecoded(files) {
		return nil
	}
	a := &archiveCheck{bytesLeft: MaxArchiveBytes, entriesLeft: MaxArchiveEntries, mark: mark,
		values: &yamlbound.Budget{Limits: yamlbound.Limits{MaxNodes: MaxChartValueNodes, MaxScalarBytes: MaxChartValueBytes}}}
	return a.chart("", "", files)
}

// A YAML or JSON text without aliases decodes to at most a node per byte
// and one more (a key and its null value, "a:", take two bytes), and to
// strings of at most five bytes per byte (the key "n" is "false"); the
// factors below leave a margin. A chart without packed subcharts whose
// loader files are so small that these factors keep them in the value
// bounds is within them undecoded (FuzzUndecodedValues): most charts'
// values, which Helm's loader decodes next, are decoded once, not twice.
const (
	undecodedNodesPerByte = 2
	undecodedBytesPerByte = 8
)

// withinUndecoded reports whether files are within the value bounds by
// their sizes alone: no packed file, no '*' (which may be an alias) in a
// file Helm's loader decodes, and few enough bytes in those.
func withinUndecoded(files []*loader.BufferedFile) bool {
	var n, count int64
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".tgz") {
			return false
		}
		if !chartLoaderFiles[path.Base(f.Name)] {
			continue
		}
		if bytes.IndexByte(f.Data, '*') >= 0 {
			return false
		}
		n += int64(len(f.Data))
		count++
	}
	return undecodedNodesPerByte*n+2*count <= MaxChartValueNodes && undecodedBytesPerByte*n <= MaxChartValueBytes
}

type archiveCheck struct {
	bytesLeft, entriesLeft int64
	mark                   func(string)
	values                 *yamlbound.Budget
}

// yaml decodes one YAML file as Helm does (sigs.k8s.io/yaml) and spends
// what it built from a.values.
func (a *archiveCheck) yaml(name, where string, data []byte) *Bound {
	if where == "" {
		where = name
		a.mark(name)
	}
	var v any
	if sigsyaml.Unmarshal(data, &v) != nil {
		return nil // Helm reports it when it loads the chart
	}
	if err := measureValues(a.values, v); err != nil {
		var be *yamlbound.Error
		if errors.As(err, &be) {
			in := ""
			if where != name {
				in = " (in " + where + ")"
			}
			return &Bound{File: where, Message: fmt.Sprintf("%s%s: with the chart's other values files and Chart.yaml it has %s", name, in, boundText(be))}
		}
	}
	return nil
}

// chart walks the subcharts of the chart whose files (relative to it) are
// files, as Helm's loader.LoadFiles groups them. prefix is the chart's
// path in the package; outer the package file of the archive it is in
// ("" when it is not in one).
func (a *archiveCheck) chart(prefix, outer string, files []*loader.BufferedFile) *Bound {
	subs := map[string][]*loader.BufferedFile{}
	for _, f := range files {
		if chartLoaderFiles[f.Name] {
			if b := a.yaml(prefix+f.Name, outer, f.Data); b != nil {
				return b
			}
			continue
		}
		rest, ok := strings.CutPrefix(f.Name, "charts/")
		if !ok || path.Ext(f.Name) == ".prov" {
			continue
		}
		cname, _, _ := strings.Cut(rest, "/")
		subs[cname] = append(subs[cname], &loader.BufferedFile{Name: rest, Data: f.Data})
	}
	for _, cname := range slices.Sorted(maps.Keys(subs)) {
		sf := subs[cname]
		if strings.IndexAny(cname, "_.") == 0 {
			continue
		}
		here := prefix + "charts/" + cname
		if path.Ext(cname) == ".tgz" {
			if sf[0].Name != cname {
				continue // Helm refuses it
			}
			where := outer
			if where == "" {
				where = here
			}
			inner, b := a.inflate(here, where, sf[0].Data)
			if b != nil || inner == nil {
				return b
			}
			if b := a.chart(here+"/", where, inner); b != nil {
				return b
			}
			continue
		}
		var buff []*loader.BufferedFile
		for _, f := range sf {
			if _, n, ok := strings.Cut(f.Name, "/"); ok {
				buff = append(buff, &loader.BufferedFile{Name: n, Data: f.Data})
			}
		}
		if b := a.chart(here+"/", outer, buff); b != nil {
			return b
		}
	}
	return nil
}

// inflate reads the archive data (the packed subchart at name, in the
// package file where) as loader.LoadArchiveFiles does, within what is left
// of the bounds. nil files and no bound: the archive is broken, which
// Helm reports when it loads it.
func (a *archiveCheck) inflate(name, where string, data []byte) ([]*loader.BufferedFile, *Bound) {
	if where == name {
		a.mark(name)
	}
	over := func(what string) *Bound {
		return &Bound{File: where, Message: fmt.Sprintf("the packed subcharts of the chart hold more than %s (reading %s)", what, name)}
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil
	}
	cr := &cappedReader{r: zr, left: a.bytesLeft}
	tr := tar.NewReader(cr)
	var files []*loader.BufferedFile
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if cr.over {
			return nil, over(fmt.Sprintf("%s once inflated", byteSize(MaxArchiveBytes)))
		}
		if err != nil {
			return nil, nil
		}
		if a.entriesLeft--; a.entriesLeft < 0 {
			return nil, over(fmt.Sprintf("%d entries", MaxArchiveEntries))
		}
		if hd.FileInfo().IsDir() || hd.Typeflag == tar.TypeXGlobalHeader || hd.Typeflag == tar.TypeXHeader {
			continue
		}
		if hd.Size > cr.left {
			return nil, over(fmt.Sprintf("%s once inflated", byteSize(MaxArchiveBytes)))
		}
		b, err := io.ReadAll(tr)
		if cr.over {
			return nil, over(fmt.Sprintf("%s once inflated", byteSize(MaxArchiveBytes)))
		}
		if err != nil {
			return nil, nil
		}
		// As Helm names it: the first path element (the chart's
		// directory) dropped.
		n := strings.ReplaceAll(hd.Name, "\\", "/")
		if _, rest, ok := strings.Cut(n, "/"); ok {
			files = append(files, &loader.BufferedFile{Name: path.Clean(rest), Data: b})
		}
	}
	a.bytesLeft = cr.left
	return files, nil
}

// cappedReader reads at most left bytes of r, then fails (over set).
type cappedReader struct {
	r    io.Reader
	left int64
	over bool
}

var errCapped = errors.New("bound passed")

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a stream that ends exactly at the bound
		// from one that goes on.
		var one [1]byte
		if n, _ := c.r.Read(one[:]); n > 0 {
			c.over = true
			return 0, errCapped
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// MeasureChart measures what Helm built loading chrt (and its subcharts):
// values, Chart.yaml, lock and schema, against MaxChartValueNodes and
// MaxChartValueBytes in all. files are the chart's files, to name a
// subchart's directory.
func MeasureChart(chrt *chart.Chart, files []*loader.BufferedFile) *Bound {
	b := &yamlbound.Budget{Limits: yamlbound.Limits{MaxNodes: MaxChartValueNodes, MaxScalarBytes: MaxChartValueBytes}}
	subdirs := SubchartDirs(files)
	var bound *Bound
	var rec func(c *chart.Chart)
	rec = func(c *chart.Chart) {
		dir := strings.TrimPrefix(c.ChartFullPath(), chrt.Name())
		dir = strings.TrimPrefix(SubchartPath(strings.TrimPrefix(dir, "/"), subdirs), "/")
		if dir != "" {
			dir += "/"
		}
		fail := func(file string, err error) {
			var be *yamlbound.Error
			if errors.As(err, &be) {
				bound = &Bound{File: dir + file, Message: fmt.Sprintf("%s%s: as Helm loaded it, with the chart's other values files, Chart.yaml and schemas, it has %s", dir, file, boundText(be))}
			}
		}
		if err := measureValues(b, c.Values); err != nil {
			fail("values.yaml", err)
			return
		}
		for _, part := range []struct {
			file string
			v    any
		}{{"Chart.yaml", c.Metadata}, {"Chart.lock", c.Lock}} {
			js, err := json.Marshal(part.v)
			if err == nil {
				err = b.MeasureJSON(js)
			}
			if err != nil {
				fail(part.file, err)
				return
			}
		}
		if len(c.Schema) > 0 {
			if err := b.MeasureJSON(c.Schema); err != nil {
				fail("values.schema.json", err)
				return
			}
		}
		for _, d := range c.Dependencies() {
			if rec(d); bound != nil {
				return
			}
		}
	}
	rec(chrt)
	return bound
}

func boundText(be *yamlbound.Error) string {
	if be.What == "nodes" {
		return fmt.Sprintf("more than %d YAML nodes once aliases are expanded", be.Limit)
	}
	return fmt.Sprintf("more than %s of strings once aliases are expanded", byteSize(be.Limit))
}

// measureValues spends the nodes and string bytes of v (decoded values:
// maps, lists, scalars) from b.
func measureValues(b *yamlbound.Budget, v any) error {
	var size yamlbound.Size
	var rec func(v any) error
	rec = func(v any) error {
		size.Nodes++
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				size.Nodes++
				size.ScalarBytes += int64(len(k))
				if err := rec(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range t {
				if err := rec(e); err != nil {
					return err
				}
			}
		case string:
			size.ScalarBytes += int64(len(t))
		}
		if size.Nodes >= 1024 {
			if err := b.Spend(size, 0); err != nil {
				return err
			}
			size = yamlbound.Size{}
		}
		return nil
	}
	if err := rec(v); err != nil {
		return err
	}
	return b.Spend(size, 0)
}

// ChartName is the name in a Chart.yaml, read as Helm reads it, or "" when
// it has none, does not parse, or is larger than a Chart.yaml could
// reasonably be (it is read in the verifier's own process, before any
// bound was checked).
func ChartName(data []byte) string {
	const maxChartYAML = 64 << 10
	if len(data) > maxChartYAML {
		return ""
	}
	if _, err := yamlbound.Measure(data, yamlbound.Limits{MaxNodes: 10000, MaxScalarBytes: maxChartYAML}); err != nil {
		return ""
	}
	var md chart.Metadata
	if err := sigsyaml.Unmarshal(data, &md); err != nil {
		return ""
	}
	return md.Name
}
