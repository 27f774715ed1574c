package load

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// TestCollectChartReadsTemplatesFirst: a chart whose templates (with its
// values.yaml and Chart.yaml, read with them) prove it writes no provider
// marker and do not read .Files is settled on them (its other files are
// not read); one whose template reads .Files, copies a value that holds a
// marker, or whose unread file Helm could not load, is read in full.
func TestCollectChartReadsTemplatesFirst(t *testing.T) {
	for _, tc := range []struct {
		name, template string
		unreadable     bool
		wantSkip       bool
		wantFiles      int
	}{
		{"plain", "kind: {{ .Values.kind }}\n", false, true, 3},
		{"value with a marker", "kind: {{ .Values.kind }}\n", false, false, 4},
		{"reads files", "data: {{ .Files.Get \"files/a.yaml\" }}\n", false, false, 4},
		{"marker", "kind: CoreProvider\n", false, false, 4},
		{"unloadable file", "kind: Service\n", true, false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			values := "kind: Service\n"
			if tc.name == "value with a marker" {
				values = "kind: CoreProvider\n"
			}
			for name, content := range map[string]string{
				"Chart.yaml":       "apiVersion: v2\nname: c\nversion: 0.1.0\n",
				"templates/x.yaml": tc.template,
				"files/a.yaml":     "apiVersion: operator.cluster.x-k8s.io/v1alpha2\n",
				"values.yaml":      values,
			} {
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.unreadable {
				// A problem of the walk (not fatal) before the read error.
				if err := os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "files", "gone.yaml")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "files", "unreadable.yaml"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			l := &scanner{root: filepath.Dir(dir), opts: Options{}.withDefaults()}
			p := newPackage(candidate{dir: dir, rel: "c", chart: true})
			c := &chartReader{l: l, p: p, mem: map[string][]byte{}, read: l.readFile, open: l.open}
			c.readIgnore()
			if err := filepath.WalkDir(dir, c.visit); err != nil {
				t.Fatal(err)
			}
			if tc.unreadable {
				// A file that cannot be read (as root nothing is unreadable,
				// so the pending entry points at a path that is gone).
				for i := range c.pending {
					if c.pending[i].n == "files/unreadable.yaml" {
						c.pending[i].target = filepath.Join(dir, "no-such-file")
					}
				}
			}
			skip, _ := c.readAll()
			if skip != tc.wantSkip || len(c.files) != tc.wantFiles {
				t.Fatalf("skip %v with %d files read, want %v with %d (problems %+v)", skip, len(c.files), tc.wantSkip, tc.wantFiles, c.probs)
			}
			if tc.unreadable && (!c.fatal || len(c.probs) != 2 || c.probs[1].Location.File != "files/unreadable.yaml") {
				t.Fatalf("fatal %v, problems %+v: want the dangling link's, then the read error", c.fatal, c.probs)
			}
		})
	}
}

// TestNeedsRestUnsettled: what the templates prove unsettled stays so with
// every file read (the rest is not settled again), but a byte order mark,
// which the loader trims, leaves it open.
func TestNeedsRestUnsettled(t *testing.T) {
	chartYAML := &loader.BufferedFile{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: x\nversion: 0.1.0\n")}
	for _, tc := range []struct {
		name, values, tpl    string
		need, unsettled, all bool // all: chartSettled with the BOM trimmed
	}{
		{"inert", "a: b\n", "a: {{ .Values.a }}\n", false, false, true},
		{"not inert", "a: b\n", "a: {{ lower .Values.a }}\n", true, true, false},
		{"a marker in the values", "a: CoreProvider\n", "a: {{ .Values.a }}\n", true, true, false},
		{"a byte order mark", "\xEF\xBB\xBFa: b\n", "a: {{ .Values.a }}\n", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []*loader.BufferedFile{chartYAML, {Name: "values.yaml", Data: []byte(tc.values)}, {Name: "templates/a.yaml", Data: []byte(tc.tpl)}}
			need, unsettled := chartNeedsRest(files, nil, "")
			if need != tc.need || unsettled != tc.unsettled {
				t.Fatalf("chartNeedsRest = %v, %v; want %v, %v", need, unsettled, tc.need, tc.unsettled)
			}
			files[1].Data = bytes.TrimPrefix(files[1].Data, bom)
			if got := chartSettled(files, ""); got != tc.all {
				t.Fatalf("chartSettled of the files as loaded = %v, want %v", got, tc.all)
			}
		})
	}
}
