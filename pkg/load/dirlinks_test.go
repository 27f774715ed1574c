package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"
)

// linkedApp writes, beside the clean fixture's packages, the chart app
// whose subchart charts/sub is a symlink (to target, relative to
// app/charts) and the chart lib/sub that writes a provider only when
// enabled (app's values enable it, its own defaults do not).
func linkedApp(t *testing.T, root, target string) (app string) {
	t.Helper()
	const lib = "packages/extra/lib/sub"
	app = "packages/extra/app"
	write(t, root, app+"/Chart.yaml", []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n"))
	write(t, root, app+"/values.yaml", []byte("sub:\n  enabled: true\n"))
	write(t, root, app+"/templates/cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"))
	write(t, root, lib+"/Chart.yaml", []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n"))
	write(t, root, lib+"/templates/p.yaml", []byte("{{- if .Values.enabled }}\n"+
		strings.NewReplacer("{{API}}", "operator.cluster.x-k8s.io/v1alpha2", "{{KIND}}", "CoreProvider").Replace(hiddenProvider)+"{{- end }}\n"))
	if err := os.MkdirAll(filepath.Join(root, app, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, app, "charts", "sub")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	return app
}

// TestLinkedSubchartIsRead: a subchart that is a directory symlink into
// the tree is part of the chart, as Helm's loader reads it: the provider
// it writes is found (not settled away from the parent's templates), in
// process and in a render child.
func TestLinkedSubchartIsRead(t *testing.T) {
	for _, child := range []bool{false, true} {
		t.Run(map[bool]string{false: "in process", true: "render child"}[child], func(t *testing.T) {
			root := fixture.CleanCopy(t)
			app := linkedApp(t, root, "../../lib/sub")
			var opts Options
			opts.Render.NoFastPath = child
			tr := loadTree(t, root, opts)
			cleanPlusOne(t, tr, app)
			for _, s := range tr.Skipped {
				if s.Path == app {
					t.Fatalf("%s skipped: %s", app, s.Reason)
				}
			}
			p := find(t, tr, app)
			if len(p.Providers) != 1 || p.Providers[0].FetchURL != "https://evil.example/c.yaml" || p.Providers[0].Location.File != "charts/sub/templates/p.yaml" {
				t.Fatalf("providers = %+v, problems = %+v", p.Providers, p.Problems)
			}
			if len(p.Problems) != 0 {
				t.Errorf("problems = %+v", p.Problems)
			}
		})
	}
}

// TestDirLinkNotFollowed: a directory symlink the loader cannot follow
// (out of the tree, dangling, a loop, a cycle, too many times) keeps the
// chart as a package with a package-load problem at the link, never
// skipped as one that installs no provider.
func TestDirLinkNotFollowed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T, root string) string // relative to app/charts
		file   string                                 // the problem's
		words  string
	}{
		{"outside the tree", func(t *testing.T, root string) string {
			out := t.TempDir()
			write(t, out, "Chart.yaml", []byte("apiVersion: v2\nname: sub\nversion: 0.1.0\n"))
			return out
		}, "charts/sub", "points outside the tree"},
		{"dangling", func(*testing.T, string) string { return "../../lib/missing" }, "charts/sub", "cannot be resolved"},
		{"loop to the chart", func(*testing.T, string) string { return ".." }, "charts/sub", "a loop"},
		{"loop to an ancestor", func(*testing.T, string) string { return "../../.." }, "charts/sub", "a loop"},
		{"cycle", func(t *testing.T, root string) string {
			for from, to := range map[string]string{"a": "../../b", "b": "../../a"} {
				d := filepath.Join(root, "packages/extra/lib", from)
				write(t, d, "Chart.yaml", []byte("apiVersion: v2\nname: "+from+"\nversion: 0.1.0\n"))
				if err := os.MkdirAll(filepath.Join(d, "charts"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(to, filepath.Join(d, "charts", map[string]string{"a": "b", "b": "a"}[from])); err != nil {
					t.Fatal(err)
				}
			}
			return "../../lib/a"
		}, "charts/sub/charts/b/charts/a", "a loop"},
		{"followed too many times", func(t *testing.T, root string) string {
			// Each level links twice to the next: 2^15 directories.
			const levels = 15
			for i := range levels {
				d := filepath.Join(root, "packages/extra/fan", "l"+string(rune('a'+i)))
				write(t, d, "f.yaml", []byte("a: b\n"))
				if i == levels-1 {
					continue
				}
				for _, n := range []string{"x", "y"} {
					if err := os.Symlink("../l"+string(rune('a'+i+1)), filepath.Join(d, n)); err != nil {
						t.Fatal(err)
					}
				}
			}
			return "../../fan/la"
		}, "", "pass 10000 entries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			app := linkedApp(t, root, "placeholder")
			link := filepath.Join(root, app, "charts", "sub")
			if err := os.Remove(link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target(t, root), link); err != nil {
				t.Fatal(err)
			}
			tr := loadTree(t, root, Options{})
			for _, s := range tr.Skipped {
				if s.Path == app {
					t.Fatalf("%s skipped: %s", app, s.Reason)
				}
			}
			p := find(t, tr, app)
			pr := problem(p, model.CheckPackageLoad, tc.words)
			if pr == nil || (tc.file != "" && pr.File != tc.file) || !strings.HasPrefix(pr.File, "charts/sub") || pr.Hint == "" {
				t.Fatalf("problems = %+v, want %q at %s", p.Problems, tc.words, tc.file)
			}
			// The clean fixture's packages stay clean (lib/a and lib/b of
			// the cycle are charts with the loop too).
			for _, q := range tr.Packages {
				if q.Path != app && !strings.HasPrefix(q.Path, "packages/extra/lib/") && len(q.Problems) > 0 {
					t.Errorf("%s: unexpected problems %+v", q.Path, q.Problems)
				}
			}
		})
	}
}

// TestCacheKeyCoversLinkedSubchart: the key of a chart changes with a
// byte of a file in a subchart it links to elsewhere in the tree.
func TestCacheKeyCoversLinkedSubchart(t *testing.T) {
	root := fixture.CleanCopy(t)
	app := filepath.Join(root, linkedApp(t, root, "../../lib/sub"))
	before, ok := keyOf(t, root, app, Options{})
	if !ok {
		t.Fatal("the chart is not keyed")
	}
	rewrite(t, filepath.Join(root, "packages/extra/lib/sub/templates/p.yaml"), func(b []byte) []byte {
		return []byte(strings.Replace(string(b), "evil", "evim", 1))
	})
	if after, _ := keyOf(t, root, app, Options{}); after == before {
		t.Fatal("the key did not change with the linked subchart's template")
	}
}

// TestUnfollowedLinkOutsideSubcharts: a dangling directory link that is
// not a subchart nor among templates hides nothing from a chart whose
// templates read no files (it is settled as before, as Cozystack's
// flux-aio manifests link to a directory built later); once a template
// may read files, the chart is held with the link's problem.
func TestUnfollowedLinkOutsideSubcharts(t *testing.T) {
	for _, readsFiles := range []bool{false, true} {
		t.Run(map[bool]string{false: "no file read", true: "a template reads files"}[readsFiles], func(t *testing.T) {
			root := fixture.CleanCopy(t)
			const app = "packages/extra/app"
			write(t, root, app+"/Chart.yaml", []byte("apiVersion: v2\nname: app\nversion: 0.1.0\n"))
			tpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n"
			if readsFiles {
				tpl += "data:\n  a: {{ .Files.Get \"manifests/a.yaml\" | quote }}\n"
			}
			write(t, root, app+"/templates/cm.yaml", []byte(tpl))
			if err := os.Symlink("../../../internal/missing", filepath.Join(root, app, "manifests")); err != nil {
				t.Skipf("symlinks: %v", err)
			}
			tr := loadTree(t, root, Options{})
			skipped := false
			for _, s := range tr.Skipped {
				skipped = skipped || s.Path == app
			}
			if !readsFiles {
				if !skipped || len(tr.Packages) != 5 {
					t.Fatalf("the chart was not settled: %d packages\n%s", len(tr.Packages), summary(tr))
				}
				return
			}
			if skipped {
				t.Fatal("the chart was skipped")
			}
			if pr := problem(find(t, tr, app), model.CheckPackageLoad, "what the chart installs is not known"); pr == nil || pr.File != "manifests" {
				t.Fatalf("problems = %+v", find(t, tr, app).Problems)
			}
		})
	}
}
