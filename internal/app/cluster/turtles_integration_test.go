//go:build integration

package cluster

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/verify"
)

// turtlesWorld is a real API server with Turtles' CAPIProvider CRD (the
// chart's own, testdata/turtles) holding what the Turtles fixture tree's
// core makes once installed: the components ConfigMap the chart writes,
// the core CAPIProvider with the spec.version Turtles sets and the
// status the embedded operator leaves, and the components' Deployment.
type turtlesWorld struct {
	srv  *kubetest.APIServer
	dyn  dynamic.Interface
	tree *model.Tree
}

const turtlesNS = fixture.TurtlesCoreNamespace

func newTurtlesWorld(t *testing.T) *turtlesWorld {
	t.Helper()
	w := &turtlesWorld{srv: kubetest.Start(t)}
	w.dyn = w.srv.Dynamic(t)
	crd, err := os.ReadFile("testdata/turtles/capiprovider-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range docs(t, crd) {
		kubetest.Create(t, w.dyn, kubetest.CRDGVR, u)
	}
	kubetest.WaitFor(t, "the CAPIProvider CRD served", func() error {
		_, err := w.dyn.Resource(gvrCAPIProvider).List(context.Background(), metav1.ListOptions{})
		return err
	})
	root := t.TempDir()
	if err := fixture.WriteTurtles(root); err != nil {
		t.Fatal(err)
	}
	w.tree, err = verify.Load(context.Background(), root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kubetest.Namespace(t, w.dyn, turtlesNS)
	for _, u := range docs(t, []byte(fixture.TurtlesCoreConfigMap(fixture.TurtlesBlob()))) {
		kubetest.CreateAs(t, w.dyn, kubetest.GVRConfigMap, u, "helm")
	}
	for _, u := range docs(t, fixture.TurtlesComponents()) {
		if u.GetKind() == "Deployment" {
			kubetest.CreateAs(t, w.dyn, kubetest.GVRDeployment, u, "rancher-turtles")
		}
	}
	w.capiProvider(t, "cluster-api", "core", fixture.TurtlesCoreVersion, fixture.TurtlesCoreVersion, map[string]any{
		"managed-by.turtles.cattle.io": "true", "provider.cluster.x-k8s.io/name": "cluster-api", "provider.cluster.x-k8s.io/type": "core",
	})
	return w
}

// docs are the YAML documents of b as objects.
func docs(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// capiProvider writes a CAPIProvider as Turtles leaves it once installed:
// spec.version set, status.installedVersion and Ready.
func (w *turtlesWorld) capiProvider(t *testing.T, name, typ, version, installed string, labels map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": model.TurtlesAPIVersion, "kind": model.CAPIProviderKind,
		"spec": map[string]any{"name": name, "type": typ, "version": version,
			"fetchConfig": map[string]any{"selector": map[string]any{"matchLabels": labels}}},
	}}
	u.SetName(name)
	u.SetNamespace(turtlesNS)
	created := kubetest.CreateAs(t, w.dyn, gvrCAPIProvider, u, "rancher-turtles")
	w.setStatus(t, created, installed)
}

func (w *turtlesWorld) setStatus(t *testing.T, u *unstructured.Unstructured, installed string) {
	t.Helper()
	u.Object["status"] = map[string]any{
		"installedVersion": installed,
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Installed", "message": "",
			"lastTransitionTime": "2026-01-01T00:00:00Z"}},
	}
	if _, err := w.dyn.Resource(gvrCAPIProvider).Namespace(turtlesNS).UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (w *turtlesWorld) run(t *testing.T) []string {
	t.Helper()
	r, err := Verify(context.Background(), Options{Access: Access{Kubeconfig: w.srv.Kubeconfig}, Tree: w.tree})
	if err != nil {
		t.Fatalf("cluster check: %v", err)
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Check+" "+f.Package+" "+f.Provider+": "+f.Message)
	}
	return out
}

// edit changes the core CAPIProvider with fn (spec and status), then
// returns a function that puts it back.
func (w *turtlesWorld) edit(t *testing.T, fn func(u *unstructured.Unstructured)) (undo func()) {
	t.Helper()
	ctx := context.Background()
	res := w.dyn.Resource(gvrCAPIProvider).Namespace(turtlesNS)
	orig, err := res.Get(ctx, "cluster-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := orig.DeepCopy()
	fn(u)
	status := u.Object["status"]
	u, err = res.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = status
	if _, err := res.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return func() {
		cur, err := res.Get(ctx, "cluster-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		back := orig.DeepCopy()
		back.SetResourceVersion(cur.GetResourceVersion())
		back, err = res.Update(ctx, back, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		back.Object["status"] = orig.Object["status"]
		if _, err := res.UpdateStatus(ctx, back, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIntegrationTurtlesCAPIProvider: verifier cluster reads live
// CAPIProviders as the operator kind of their spec.type. The Turtles core
// as the chart and Turtles leave it is clean (the tree's core has no
// spec.version: Turtles sets it); a spec.version lagging the ConfigMap
// the selector matches and a selector matching nothing are each exactly
// one cluster-configmap finding naming the CAPIProvider; undone, clean
// again.
func TestIntegrationTurtlesCAPIProvider(t *testing.T) {
	w := newTurtlesWorld(t)
	clean := func(t *testing.T) {
		t.Helper()
		if fs := w.run(t); len(fs) != 0 {
			t.Fatalf("want no findings, got:\n%s", strings.Join(fs, "\n"))
		}
	}
	one := func(t *testing.T, id string, want ...string) {
		t.Helper()
		fs := w.run(t)
		if len(fs) != 1 || !strings.HasPrefix(fs[0], id+" ") {
			t.Fatalf("want one %s finding, got %d:\n%s", id, len(fs), strings.Join(fs, "\n"))
		}
		for _, s := range want {
			if !strings.Contains(fs[0], s) {
				t.Errorf("finding does not say %q:\n%s", s, fs[0])
			}
		}
	}
	clean(t)

	t.Run("spec.version lags the ConfigMap", func(t *testing.T) {
		undo := w.edit(t, func(u *unstructured.Unstructured) {
			unstructured.SetNestedField(u.Object, "v1.12.0", "spec", "version")
			unstructured.SetNestedField(u.Object, "v1.12.0", "status", "installedVersion")
		})
		one(t, CheckConfigMap, "CoreProvider/cluster-api", "CAPIProvider cluster-api", "core-cluster-api-v1.13.3 (release v1.13.3)", `spec.version is "v1.12.0"`)
		undo()
		clean(t)
	})

	t.Run("selector matches nothing", func(t *testing.T) {
		undo := w.edit(t, func(u *unstructured.Unstructured) {
			unstructured.SetNestedField(u.Object, "kore", "spec", "fetchConfig", "selector", "matchLabels", "provider.cluster.x-k8s.io/type")
		})
		one(t, CheckConfigMap, "CoreProvider/cluster-api", "CAPIProvider cluster-api", "matches no ConfigMap")
		undo()
		clean(t)
	})

	// Turtles before v0.22 created an operator object from each
	// CAPIProvider, owned by it; a copy it stopped syncing is named.
	t.Run("operator copy out of step", func(t *testing.T) {
		kubetest.InstallProviderCRDs(t, w.dyn)
		owner, err := w.dyn.Resource(gvrCAPIProvider).Namespace(turtlesNS).Get(context.Background(), "cluster-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec, _, _ := unstructured.NestedMap(owner.Object, "spec")
		delete(spec, "name")
		delete(spec, "type")
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": model.OperatorAPIVersion, "kind": "CoreProvider", "spec": spec}}
		u.SetName("cluster-api")
		u.SetNamespace(turtlesNS)
		u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: model.TurtlesAPIVersion, Kind: model.CAPIProviderKind, Name: "cluster-api", UID: owner.GetUID()}})
		gvr := kubetest.ProviderGVR("CoreProvider")
		kubetest.CreateAs(t, w.dyn, gvr, u, "rancher-turtles")
		clean(t) // a copy in step is no second provider
		cp, err := w.dyn.Resource(gvr).Namespace(turtlesNS).Get(context.Background(), "cluster-api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		unstructured.SetNestedField(cp.Object, "v1.12.0", "spec", "version")
		if _, err := w.dyn.Resource(gvr).Namespace(turtlesNS).Update(context.Background(), cp, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		one(t, CheckInstalled, "which Turtles created from CoreProvider cattle-capi-system/cluster-api (CAPIProvider cluster-api)", `spec.version "v1.12.0", the CAPIProvider's "v1.13.3"`)
	})
}
