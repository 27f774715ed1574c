package check_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/manifest"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// loadExamples loads examples/packages, the tree `make demo` builds, its
// CRDs judged as it loads (as verify.Run does).
func loadExamples(t *testing.T) *model.Tree {
	t.Helper()
	return loadExamplesWith(t, check.NewCRDJudge(nil))
}

func loadExamplesWith(t *testing.T, judge load.CRDJudge) *model.Tree {
	t.Helper()
	tree, err := load.Tree(context.Background(), filepath.Join("..", "..", "examples", "packages"), load.Options{CRDs: judge})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// redChecks runs every built-in check and returns the IDs with findings.
func redChecks(tree *model.Tree, external []string) (ids []string, fs []report.Finding) {
	in := check.NewInput(tree)
	for _, c := range check.Builtin(nil, external) {
		got := c.Run(in)
		if len(got) > 0 {
			ids = append(ids, c.ID)
		}
		if c.ID == check.ComponentsApply {
			fs = got
		}
	}
	return ids, fs
}

// editCRD rewrites the first CRD of the package at pkgPath with edit and
// judges it again (the model keeps verdicts, not the CRDs' text).
func editCRD(t *testing.T, tree *model.Tree, pkgPath string, edit func(map[string]any)) string {
	t.Helper()
	p := pkgOf(tree, pkgPath)
	for i, o := range p.Applied {
		if o.CRD == nil {
			continue
		}
		rejudge(t, p, i, edit)
		return o.Name
	}
	t.Fatalf("no CRD in %s", pkgPath)
	return ""
}

// rejudge reads the document of p.Applied[i] (a CRD) from its file,
// edits it as JSON and sets the verdict on it to the judge's.
func rejudge(t *testing.T, p *model.Package, i int, edit func(map[string]any)) {
	t.Helper()
	o := p.Applied[i]
	data, err := os.ReadFile(filepath.Join(p.Dir, filepath.FromSlash(o.File)))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range manifest.SplitDocs(data) {
		obj, _ := manifest.ParseDoc(d, o.File)
		if obj == nil || obj.Kind != "CustomResourceDefinition" || obj.Name != o.Name {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(manifest.JSON(obj.Root), &v); err != nil {
			t.Fatal(err)
		}
		edit(v)
		js, _ := json.Marshal(v)
		p.Applied[i].CRD = check.NewCRDJudge(nil).Judge([32]byte{}, o, js)
		return
	}
	t.Fatalf("%s: no CRD %s", o.File, o.Name)
}

func version0(v map[string]any) map[string]any {
	return v["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
}

// TestComponentsApply: the examples' components are all the API server
// accepts; each kind of refusal turns components-apply red, and no other
// check, with the API server's message naming the object and the field.
func TestComponentsApply(t *testing.T) {
	clean, _ := redChecks(loadExamples(t), nil)
	if slices.Contains(clean, check.ComponentsApply) {
		_, fs := redChecks(loadExamples(t), nil)
		t.Fatalf("components-apply red on the examples: %v", fs)
	}
	core, infra := "capi-providers-core", "capi-providers-infraprovider"
	for _, tc := range []struct {
		name     string
		mutate   func(*testing.T, *model.Tree) string // returns the object's name
		external []string
		want     []string // in the finding's message
	}{
		{"non-structural schema", func(t *testing.T, tr *model.Tree) string {
			return editCRD(t, tr, core, func(v map[string]any) {
				props := version0(v)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
				delete(props["spec"].(map[string]any), "type")
			})
		}, nil, []string{"properties[spec].type: Required value"}},
		{"no storage version", func(t *testing.T, tr *model.Tree) string {
			return editCRD(t, tr, infra, func(v map[string]any) { version0(v)["storage"] = false })
		}, nil, []string{"spec.versions: Invalid value", "must have exactly one version marked as storage version"}},
		{"unserved kind", func(t *testing.T, tr *model.Tree) string {
			p := pkgOf(tr, infra)
			p.Applied = append(p.Applied, model.AppliedObject{Release: p.Applied[0].Release, APIVersion: "monitoring.coreos.com/v1",
				Kind: "ServiceMonitor", Name: "capmox-metrics", Location: model.Location{File: "files/infrastructure-components.yaml", Line: 9}})
			return "capmox-metrics"
		}, nil, []string{`ServiceMonitor "capmox-metrics" (monitoring.coreos.com/v1): no API the cluster has serves this kind`}},
		{"removed API version", func(t *testing.T, tr *model.Tree) string {
			p := pkgOf(tr, infra)
			p.Applied = append(p.Applied, model.AppliedObject{Release: p.Applied[0].Release, APIVersion: "policy/v1beta1",
				Kind: "PodDisruptionBudget", Name: "capmox-pdb", Location: model.Location{File: "files/infrastructure-components.yaml", Line: 9}})
			return "capmox-pdb"
		}, nil, []string{"Kubernetes stopped serving policy/v1beta1"}},
		{"core's kind served to another release", func(t *testing.T, tr *model.Tree) string {
			p := pkgOf(tr, infra)
			p.Applied = append(p.Applied, model.AppliedObject{Release: p.Applied[0].Release, APIVersion: "cluster.x-k8s.io/v1beta1",
				Kind: "ClusterClass", Name: "quick-start"})
			return ""
		}, nil, nil},
		{"external kind the policy names", func(t *testing.T, tr *model.Tree) string {
			p := pkgOf(tr, infra)
			p.Applied = append(p.Applied, model.AppliedObject{Release: p.Applied[0].Release, APIVersion: "monitoring.coreos.com/v1",
				Kind: "ServiceMonitor", Name: "capmox-metrics"})
			return ""
		}, []string{"monitoring.coreos.com/v1/ServiceMonitor"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := loadExamples(t)
			name := tc.mutate(t, tree)
			ids, fs := redChecks(tree, tc.external)
			if tc.want == nil {
				if !slices.Equal(ids, clean) {
					t.Fatalf("red checks %v, want %v (clean): %v", ids, clean, fs)
				}
				return
			}
			if want := append(slices.Clone(clean), check.ComponentsApply); !slices.Equal(ids, want) {
				t.Fatalf("red checks %v, want %v", ids, want)
			}
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1: %v", len(fs), fs)
			}
			msg := fs[0].Message
			for _, w := range append(tc.want, name) {
				if !strings.Contains(msg, w) {
					t.Errorf("finding %q lacks %q", msg, w)
				}
			}
			if fs[0].File == "" || fs[0].Hint == "" {
				t.Errorf("finding has no file or hint: %+v", fs[0])
			}
		})
	}
}

func pkgOf(tree *model.Tree, path string) *model.Package {
	for _, p := range tree.Packages {
		if p.Path == path {
			return p
		}
	}
	return nil
}

// TestComponentsApplyOldExamples: the core release as the examples had
// it before their CRDs were made structural (spec and status untyped in
// every CRD) is refused CRD by CRD, with the message the real API server
// gave (issue "What the API server would refuse").
func TestComponentsApplyOldExamples(t *testing.T) {
	tree := loadExamples(t)
	p := pkgOf(tree, "capi-providers-core")
	var n int
	for i, o := range p.Applied {
		if o.CRD == nil {
			continue
		}
		rejudge(t, p, i, func(v map[string]any) {
			props := version0(v)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
			delete(props["spec"].(map[string]any), "type")
			delete(props["status"].(map[string]any), "type")
		})
		n++
	}
	_, fs := redChecks(tree, nil)
	if len(fs) != n {
		t.Fatalf("%d findings for %d CRDs: %v", len(fs), n, fs)
	}
	want := `properties[spec].type: Required value: must not be empty for specified object fields`
	if !strings.Contains(fs[0].Message, want) || !strings.Contains(fs[0].Message, `CustomResourceDefinition "clusters.cluster.x-k8s.io"`) {
		t.Errorf("finding %q lacks the API server's message %q", fs[0].Message, want)
	}
}
