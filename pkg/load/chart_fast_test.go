package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/render"
)

// fastTrees are the trees the fast path is compared with the child on:
// the committed fixtures and the generated real and monorepo shapes.
func fastTrees(t *testing.T) map[string]string {
	t.Helper()
	trees := map[string]string{"tree": "../../testdata/tree", "tree-dirty": "../../testdata/tree-dirty"}
	for _, o := range []gentree.Options{{Packages: 4, Size: 64 << 10, Seed: 3, Shape: gentree.Real},
		{Packages: 3, Size: 64 << 10, Seed: 4, Shape: gentree.Monorepo, Others: 6}} {
		root := filepath.Join(t.TempDir(), "tree")
		if _, err := gentree.Generate(root, o); err != nil {
			t.Fatal(err)
		}
		trees[string(o.Shape)] = root
	}
	// Documents the loader does not parse (blanked), and broken ones
	// (their problems placed at template lines).
	mixed := t.TempDir()
	writeBombChart(t, mixed, "mixed", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n---\n"+
		"kind: ConfigMap\nmetadata: [\n---\n# {{ .Chart.Name }}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")
	trees["mixed"] = mixed
	return trees
}

// TestFastPathMatchesChild: every provider chart of the fixtures renders
// on the fast path (no render child starts), and the rendering it answers
// (Helm's output, what the loader parses, the dropped documents'
// problems) and the whole tree loaded are exactly what the render child
// gives.
func TestFastPathMatchesChild(t *testing.T) {
	noFast := testRenderLimits
	noFast.NoFastPath = true
	for name, root := range fastTrees(t) {
		t.Run(name, func(t *testing.T) {
			sb := render.New(nil)
			defer sb.Close()
			fast := loadTree(t, root, Options{Render: testRenderLimits, Sandbox: sb})
			plain := false
			for _, p := range fast.Packages {
				plain = plain || !p.Chart
			}
			// Plain manifests are parsed in a child: count only without.
			// The monorepo shape's other charts are no provider charts;
			// those its templates do not prove free of providers render,
			// in a child when the fast path does not admit them.
			if n := sb.Started(); n != 0 && !plain && name != "monorepo" {
				t.Fatalf("%d render children started; want every chart on the fast path", n)
			}
			child := loadTree(t, root, Options{Render: noFast, Sandbox: sb})
			if sb.Started() == 0 {
				t.Fatal("no render child started with NoFastPath")
			}
			fj, _ := json.Marshal(fast)
			cj, _ := json.Marshal(child)
			if string(fj) != string(cj) || summary(fast) != summary(child) {
				t.Fatalf("the tree loads differently on the fast path:\nfast:\n%s\nchild:\n%s", summary(fast), summary(child))
			}
			charts := 0
			for _, p := range fast.Packages {
				if p.Chart {
					charts++
					compareRenderings(t, sb, p.Dir)
				}
			}
			if charts == 0 {
				t.Fatal("no chart in the tree")
			}
		})
	}
}

// compareRenderings renders the chart in dir on the fast path and in a
// child and compares what they answer.
func compareRenderings(t *testing.T, sb *render.Sandbox, dir string) {
	t.Helper()
	var files []*loader.BufferedFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files = append(files, &loader.BufferedFile{Name: filepath.ToSlash(rel), Data: data})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	const release, ns = "rel", "ns"
	chrt, err := loader.LoadFiles(files)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	vals, prob := render.Values(chrt, map[string]any{}, chartutil.ReleaseOptions{Name: release, Namespace: ns, Revision: 1, IsInstall: true}, true, files)
	if prob != nil {
		t.Fatalf("%s: %s", dir, prob.Message)
	}
	if p := render.Bounded(chrt, vals, testRenderLimits); !p.OK {
		t.Fatalf("%s: not proven: %s", dir, p.Why)
	}
	fast, ok := sb.RenderProven(context.Background(), chrt, vals, files, release, ns, testRenderLimits)
	if !ok {
		t.Fatalf("%s: the fast path did not render", dir)
	}
	child, cprob := sb.Render(context.Background(), render.Chart{Files: files, Values: map[string]any{}, Release: release, Namespace: ns, Limits: testRenderLimits})
	if cprob != nil || child.Err != nil {
		t.Fatalf("%s: the child did not render: %v %v", dir, cprob, child.Err)
	}
	// fmt prints maps sorted, and nil and empty alike (gob answers an
	// empty map or slice as nil).
	for _, part := range []struct {
		what        string
		fast, child any
	}{{"Rendered", fast.Rendered, child.Rendered}, {"Parse", fast.Parse, child.Parse}, {"DocProbs", fast.DocProbs, child.DocProbs}} {
		if f, c := fmt.Sprintf("%+v", part.fast), fmt.Sprintf("%+v", part.child); f != c {
			t.Errorf("%s: %s differs:\nfast:  %.2000s\nchild: %.2000s", dir, part.what, f, c)
		}
	}
	if len(fast.Rendered) == 0 {
		t.Errorf("%s: nothing rendered", dir)
	}
}
