package load

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestChartWalkMatchesWalkDir: the walk through per-directory roots finds
// what filepath.WalkDir finds, in its order, with the same problems, on a
// chart of more directories than it keeps open (nested ones, ignored ones,
// empty ones, links to a file and to a directory), and keeps no more than
// maxKeptRoots of them open.
func TestChartWalkMatchesWalkDir(t *testing.T) {
	tree := t.TempDir()
	dir := filepath.Join(tree, "c")
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	write(".helmignore", "ignored/\n")
	write("templates/x.yaml", "kind: CoreProvider\n")
	write("ignored/a.yaml", "a: b\n")
	for i := range maxKeptRoots + 20 {
		write(fmt.Sprintf("files/d%03d/a.yaml", i), fmt.Sprintf("n: %d\n", i))
	}
	write("files/deep/a/b/c/d/e.yaml", "e: f\n")
	if err := os.MkdirAll(filepath.Join(dir, "files", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"files/link.yaml": "d000/a.yaml", "files/dirlink": "deep", "files/out.yaml": "../../../outside.yaml"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	l := &scanner{root: tree, fsys: root, opts: Options{}.withDefaults()}
	collect := func(viaRoots bool) (*chartReader, int) {
		p := newPackage(candidate{dir: dir, rel: "c", chart: true})
		c := &chartReader{l: l, p: p, mem: map[string][]byte{}, read: l.readFile, open: l.open}
		c.readIgnore()
		if !viaRoots {
			c.walk(nil)
			return c, 0
		}
		dirs := &dirRoots{root: l.subRoot(dir)}
		defer dirs.close()
		c.walk(dirs)
		return c, len(dirs.dirs)
	}
	want, _ := collect(false)
	got, kept := collect(true)
	if len(want.pending) != maxKeptRoots+20+6 { // and Chart.yaml, .helmignore, the template, e.yaml (twice: through dirlink), link.yaml
		t.Fatalf("WalkDir found %d files", len(want.pending))
	}
	if !reflect.DeepEqual(got.pending, want.pending) || !reflect.DeepEqual(got.probs, want.probs) || got.fatal != want.fatal {
		t.Fatalf("the walk through roots differs from WalkDir:\ngot  %+v\n     %+v\nwant %+v\n     %+v", got.pending, got.probs, want.pending, want.probs)
	}
	if len(want.probs) == 0 {
		t.Fatal("the link out of the tree is not a problem")
	}
	if kept == 0 || kept > maxKeptRoots {
		t.Fatalf("%d directory roots kept open, want 1..%d", kept, maxKeptRoots)
	}
}

// BenchmarkCollectChart reads a chart of a monorepo's shape (a few
// directories, a dozen templates, vendored files) as a tree load does:
// through the chart's root.
func BenchmarkCollectChart(b *testing.B) {
	tree := b.TempDir()
	dir := filepath.Join(tree, "packages", "system", "c")
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n", "values.yaml": "a: b\n"}
	for i := range 12 {
		files[fmt.Sprintf("templates/t%02d.yaml", i)] = "kind: Service\ndata: {{ .Files.Get \"files/x.yaml\" }}\n"
	}
	for i := range 8 {
		files[fmt.Sprintf("files/crds/f%02d.yaml", i)] = "kind: CustomResourceDefinition\n"
	}
	files["charts/sub/Chart.yaml"] = "apiVersion: v2\nname: sub\nversion: 0.1.0\n"
	files["charts/sub/templates/a.yaml"] = "kind: ConfigMap\n"
	for name, content := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	root, err := os.OpenRoot(tree)
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	l := &scanner{root: tree, fsys: root, opts: Options{}.withDefaults()}
	b.ReportAllocs()
	for b.Loop() {
		p := newPackage(candidate{dir: dir, rel: "packages/system/c", chart: true})
		got, mem, probs, fatal, _ := l.collectChart(p)
		if len(got) != len(files) || len(probs) > 0 || fatal {
			b.Fatalf("%d files, %v", len(got), probs)
		}
		releaseBuffers(mem)
	}
}
