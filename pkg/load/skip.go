package load

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/model"
)

// ValuesFiles gives the charts whose path matches Package the values of
// Files, as `helm template -f FILE…` would (later files win).
type ValuesFiles struct {
	// Package is a chart's slash path relative to the root, or a path.Match
	// pattern of such paths.
	Package string
	// Files are values files, absolute or relative to the working
	// directory.
	Files []string
}

// providerMarkers are texts only a chart that may hold provider objects or
// the ConfigMaps they select has: the operator's API group and the
// annotations and labels the operator reads. The render-gate markers
// (markers) are much broader; these decide whether a chart that does not
// render is a finding or is skipped.
var providerMarkers = [][]byte{[]byte("operator.cluster.x-k8s.io"), []byte("provider.cluster.x-k8s.io"), []byte(model.TurtlesAPIGroup)}

// providerMarked reports whether a file of the chart (a blob aside) names
// the operator's API group or its annotations and labels.
func providerMarked(files []*loader.BufferedFile) bool {
	for _, f := range files {
		if strings.HasSuffix(f.Name, ".gz") {
			continue
		}
		for _, m := range providerMarkers {
			if bytes.Contains(f.Data, m) {
				return true
			}
		}
	}
	return false
}

// skips collects the charts a load does not check.
type skips struct {
	mu   sync.Mutex
	list []model.Skip
}

func (s *skips) add(rel, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, model.Skip{Path: rel, Reason: reason})
}

// reason is why the chart at rel was skipped; ok is false when it was not
// (or s is nil).
func (s *skips) reason(rel string) (why string, ok bool) {
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.list) - 1; i >= 0; i-- {
		if s.list[i].Path == rel {
			return s.list[i].Reason, true
		}
	}
	return "", false
}

func (s *skips) sorted() []model.Skip {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]model.Skip(nil), s.list...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// excluded returns the first exclude pattern that matches rel (a slash
// path relative to the root), "" when none does.
func excluded(patterns []string, rel string) string {
	for _, g := range patterns {
		g = strings.TrimSuffix(strings.TrimPrefix(g, "./"), "/")
		if g == "" {
			continue
		}
		if ok, _ := path.Match(g, rel); ok || rel == g {
			return g
		}
	}
	return ""
}

// firstLine is the first line of a message, shortened.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// valuesFor reads and merges the values files configured for the chart at
// rel. A file that cannot be read or parsed is a package-load problem: it
// was configured on purpose.
func (l *scanner) valuesFor(rel string) (map[string]any, []model.Problem) {
	var vals map[string]any
	var probs []model.Problem
	for _, vf := range l.opts.Values {
		if ok, _ := path.Match(vf.Package, rel); !ok && vf.Package != rel {
			continue
		}
		for _, f := range vf.Files {
			data, err := readCapped(f, maxValuesSize)
			if err == nil {
				var v map[string]any
				v, err = chartutil.ReadValues(data)
				if err == nil {
					if vals == nil {
						vals = map[string]any{}
					}
					mergeValues(vals, v)
					continue
				}
			}
			probs = append(probs, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "values.yaml"},
				Message: fmt.Sprintf("the values file %s the policy gives this chart cannot be used: %v", filepath.Clean(f), err),
				Hint:    "fix the path or the YAML of the file under the policy's values:"})
		}
	}
	return vals, probs
}

// maxValuesSize bounds a values file.
const maxValuesSize = 4 << 20

// mergeValues merges src into dst as Helm merges -f files: maps merge
// recursively, anything else in src replaces dst's.
func mergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// shapedAsComponents reports whether a ConfigMap is shaped as provider
// components: a components key beside a metadata key (whatever they
// hold), or the operator's compressed annotation.
func shapedAsComponents(o *manifest.Object) bool {
	if manifest.LookupPath(o.Root, "data", "metadata") != nil || manifest.LookupPath(o.Root, "binaryData", "metadata") != nil {
		return true
	}
	return manifest.LookupPath(o.Root, "metadata", "annotations", model.CompressedAnnotation) != nil
}
