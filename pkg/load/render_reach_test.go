package load

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/testkit/chartbomb"
	"github.com/pinseal/pinseal/pkg/render"
)

// bigFile is the size from which the render child is sent a chart file only
// when a template can read it (the render package's omitMin).
const bigFile = 4 << 10

// TestRenderChildSeesWhatTemplatesRead: a chart renders the same in the
// render child (sent only the files its templates can read) as in process
// (every file), however its templates read the files.
func TestRenderChildSeesWhatTemplatesRead(t *testing.T) {
	big := strings.Repeat("the vendored manifest\n", bigFile/10)
	reads := map[string]string{
		"literal":    `{{ .Files.Get "files/big.yaml" | sha256sum }}`,
		"computed":   `{{ .Files.Get (printf "files/%s" "big.yaml") | sha256sum }}`,
		"glob":       `{{ range $p, $_ := .Files.Glob "files/*" }}{{ $.Files.Get $p | sha256sum }}{{ end }}`,
		"variable":   `{{ $f := .Files }}{{ $f.Get "files/big.yaml" | sha256sum }}`,
		"index":      `{{ (index . "Files").Get "files/big.yaml" | sha256sum }}`,
		"tpl":        `{{ tpl "{{ .Files.Get \"files/big.yaml\" | sha256sum }}" . }}`,
		"other file": `{{ .Files.Get "files/small.yaml" | sha256sum }}`,
	}
	for name, expr := range reads {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			write := func(rel, content string) {
				p := filepath.Join(dir, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
			write("files/big.yaml", big)
			write("files/small.yaml", "a: 1\n")
			write("templates/provider.yaml", strings.Replace(chartbomb.ProviderTemplate, "v1.10.1-core", "v1.10.1-"+`{{ `+strings.TrimPrefix(expr, "{{ ")+` | trunc 12 }}`, 1))
			var got [2]string
			for i, lim := range []render.Limits{{InProcess: true}, testRenderLimits} {
				sb := render.New(nil)
				defer sb.Close()
				l := &scanner{root: filepath.Dir(dir), opts: Options{Render: lim}.withDefaults(), sandbox: sb}
				p := newPackage(candidate{dir: dir, rel: "c", chart: true})
				files, _, probs, fatal, _ := l.collectChart(p)
				if fatal || len(probs) > 0 {
					t.Fatalf("collect: %+v", probs)
				}
				objs, probs := l.renderChart(context.Background(), files, "", "default", nil, nil, false)
				if len(objs) != 1 || len(probs) > 0 {
					t.Fatalf("render (%+v): %d objects, %+v", lim, len(objs), probs)
				}
				b, err := yaml.Marshal(objs[0].Root)
				if err != nil {
					t.Fatal(err)
				}
				got[i] = string(b)
			}
			if got[0] != got[1] {
				t.Fatalf("the render child rendered\n%s\nin process:\n%s", got[1], got[0])
			}
			if name != "other file" && !strings.Contains(got[0], "v1.10.1-") || strings.Contains(got[0], "v1.10.1-e3b0c44298fc") {
				t.Fatalf("the template read an empty file (sha256 of nothing): %s", got[0])
			}
		})
	}
}

// FuzzRenderReadsFiles: however a template reads the chart's files, the
// chart renders the same in the render child (sent empty the large files
// the templates do not name, see unreadFiles) as in process (every file).
// The read is the components of a ConfigMap, so any difference in what it
// read shows in the loaded package.
func FuzzRenderReadsFiles(f *testing.F) {
	for _, read := range []string{
		`.Files.Get "files/big.yaml"`,
		`.Files.Get (printf "files/%s" "big.yaml")`,
		`(index . "Files").Get "files/big.yaml"`,
		`tpl "{{ .Files.Get \"files/big.yaml\" }}" .`,
		`.Files.Get "files/small.yaml"`,
		`(.Files.Glob "files/b*").AsConfig`,
		`$.Files.Get "files/big.yaml"`,
		`.Files.Lines "files/big.yaml" | join "\n"`,
	} {
		f.Add(read)
	}
	big := strings.Repeat("kind: Vendored\n", bigFile/10)
	f.Fuzz(func(t *testing.T, read string) {
		if strings.Contains(read, "}}") || strings.Contains(read, "{{") && !strings.Contains(read, "tpl") {
			return // one action: the fuzzer varies the read, not the template around it
		}
		root := t.TempDir()
		writeBombChart(t, root, "c", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  metadata: m\n  components: {{ "+read+" | sha256sum | quote }}\n")
		for name, content := range map[string]string{"files/big.yaml": big, "files/small.yaml": "a: 1\n"} {
			if err := os.MkdirAll(filepath.Join(root, "c", "files"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "c", name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		child, err := Tree(context.Background(), root, Options{Workers: 1, Render: testRenderLimits})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range child.Packages {
			for _, pr := range p.Problems {
				if strings.Contains(pr.Message, "limit of") {
					return // a bound stopped it: nothing to compare
				}
			}
		}
		inproc, err := Tree(context.Background(), root, Options{Workers: 1, Render: render.Limits{InProcess: true}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sortProblems(child), sortProblems(inproc)) {
			t.Fatalf("read %s: the render child loaded\n%+v\nin process:\n%+v", read, child.Packages, inproc.Packages)
		}
	})
}
