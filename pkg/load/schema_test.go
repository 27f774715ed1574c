package load

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/render"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// TestSchemaReachesNothing: a values.schema.json whose references name a
// URL, a local file, a FIFO or a metaschema elsewhere makes the loader
// connect nowhere and open nothing; each is a package-load finding at the
// schema file naming the reference, whether the chart renders in a child
// or in process. References within the schema still resolve, and values
// that break the schema are still refused as Helm refuses them.
func TestSchemaReachesNothing(t *testing.T) {
	watch := netwatch.Listen(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	refused := []struct{ name, schema, ref string }{
		{"http ref", `{"properties":{"a":{"$ref":"` + watch.URL("/a.json") + `"}}}`, watch.URL("/a.json")},
		{"https ref", `{"$ref":"https://` + watch.Addr() + `/a.json"}`, "https://" + watch.Addr() + "/a.json"},
		{"metaschema", `{"$schema":"` + watch.URL("/meta") + `"}`, watch.URL("/meta")},
		{"id base", `{"$id":"` + watch.URL("/base/") + `","$ref":"x.json"}`, watch.URL("/base/x.json")},
		{"local file", `{"$ref":"file:///etc/passwd"}`, "file:///etc/passwd"},
		{"fifo", `{"$ref":"file://` + fifo + `"}`, "file://" + fifo},
		{"proc fd", `{"$ref":"file:///proc/self/fd/0"}`, "file:///proc/self/fd/0"},
		{"relative", `{"$ref":"other.json"}`, "file:///other.json"},
	}
	for _, inProcess := range []bool{false, true} {
		mode := "render child"
		if inProcess {
			mode = "in process"
		}
		for _, tc := range refused {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				root := fixture.CleanCopy(t)
				write(t, root, bootPkg+"/values.schema.json", []byte(tc.schema))
				write(t, root, bootPkg+"/other.json", []byte(`{"type":"object"}`))
				// A work bound, in this process's CPU time (a render child is held
				// to its own time bound): a busy machine does not stretch it.
				var tr *model.Tree
				if used := timebound.Work(func() { tr = loadTree(t, root, Options{Render: render.Limits{InProcess: inProcess}}) }); used > 10*time.Second {
					t.Errorf("load used %s of CPU", used)
				}
				otherPackagesFine(t, tr, bootPkg)
				p := find(t, tr, bootPkg)
				pr := problem(p, model.CheckPackageLoad, "refers to")
				if pr == nil || pr.File != "values.schema.json" || !strings.Contains(pr.Message, `"`+tc.ref+`"`) {
					t.Fatalf("problems = %+v, want one at values.schema.json naming %q", p.Problems, tc.ref)
				}
				if strings.Contains(pr.Message, "root:") {
					t.Errorf("the finding leaks the file: %s", pr.Message)
				}
				if len(p.Providers) != 0 {
					t.Errorf("the chart rendered: %v", p.Providers)
				}
			})
		}
		t.Run(mode+"/subchart", func(t *testing.T) {
			root := fixture.CleanCopy(t)
			write(t, root, bootPkg+"/charts/subdir/Chart.yaml", []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n"))
			write(t, root, bootPkg+"/charts/subdir/values.yaml", []byte("a: 1\n"))
			write(t, root, bootPkg+"/charts/subdir/values.schema.json", []byte(`{"$ref":"`+watch.URL("/sub.json")+`"}`))
			tr := loadTree(t, root, Options{Render: render.Limits{InProcess: inProcess}})
			p := find(t, tr, bootPkg)
			if pr := problem(p, model.CheckPackageLoad, "refers to"); pr == nil || pr.File != "charts/subdir/values.schema.json" {
				t.Fatalf("problems = %+v, want one at charts/subdir/values.schema.json", p.Problems)
			}
		})
		t.Run(mode+"/within the schema", func(t *testing.T) {
			const schema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"n":{"type":"integer"}},"properties":{"replicas":{"$ref":"#/$defs/n"},"u":{"$ref":"urn:example:x"}}}`
			root := fixture.CleanCopy(t)
			write(t, root, bootPkg+"/values.schema.json", []byte(schema))
			write(t, root, bootPkg+"/values.yaml", []byte("replicas: 2\n"))
			tr := loadTree(t, root, Options{Render: render.Limits{InProcess: inProcess}})
			if p := find(t, tr, bootPkg); len(p.Problems) != 0 || len(p.Providers) != 2 {
				t.Fatalf("clean schema: problems %+v, providers %d", p.Problems, len(p.Providers))
			}
			write(t, root, bootPkg+"/values.yaml", []byte("replicas: two\n"))
			tr = loadTree(t, root, Options{Render: render.Limits{InProcess: inProcess}})
			p := find(t, tr, bootPkg)
			if pr := problem(p, model.CheckPackageLoad, "values don't meet the specifications of the schema"); pr == nil || pr.File != "values.yaml" || !strings.Contains(pr.Message, "replicas") {
				t.Fatalf("problems = %+v, want the schema violation at values.yaml", p.Problems)
			}
		})
	}
	if n := watch.Count(); n != 0 {
		t.Fatalf("%d connections reached the listener the schemas named", n)
	}
}
