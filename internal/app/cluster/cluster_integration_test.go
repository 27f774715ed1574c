//go:build integration

package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
	"github.com/pinseal/pinseal/pkg/blob"
)

const (
	coreCM   = "v1.10.1-core"
	coreCRD  = "clusters.cluster.x-k8s.io"
	coreDep  = "capi-controller-manager"
	coreKind = "CoreProvider"
)

func get(t *testing.T, w *world, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := w.Dyn.Resource(kubetest.GVRConfigMap).Namespace(kubetest.NS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// edited is the core ConfigMap's components with one more line: the
// same objects, other bytes.
func edited(t *testing.T, w *world) string {
	t.Helper()
	u := get(t, w, coreCM)
	js, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var cj configMapJSON
	if err := json.Unmarshal(js, &cj); err != nil {
		t.Fatal(err)
	}
	cm := cj.configMap()
	raw, _, err := content(cm, 0)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := blob.CompressBytes(append(raw, []byte("# edited\n")...))
	if err != nil {
		t.Fatal(err)
	}
	return b64(gz)
}

// expect runs the check and wants exactly one finding, of check id, whose
// text holds every one of want.
func expect(t *testing.T, w *world, id string, want ...string) {
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

func clean(t *testing.T, w *world) {
	t.Helper()
	if fs := w.run(t); len(fs) != 0 {
		t.Fatalf("want no findings on the cluster as the tree and registry have it, got:\n%s", strings.Join(fs, "\n"))
	}
}

// TestIntegrationClusterChecks: a cluster holding what the example tree
// and its signed registry artifacts say passes; each planted state makes
// exactly its check go red, and the cluster passes again once it is
// undone. The plants of a ConfigMap edited in place, a lagging installed
// version, a hand-edited image and a moved tag run on the world the real
// operator left instead (kubetest's TestRealOperatorDoor).
func TestIntegrationClusterChecks(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	clean(t, w)
	prov := w.Dyn.Resource(kubetest.ProviderGVR(coreKind)).Namespace(kubetest.NS)
	cms := w.Dyn.Resource(kubetest.GVRConfigMap).Namespace(kubetest.NS)

	t.Run("condition false", func(t *testing.T) {
		u, _ := prov.Get(ctx, "cluster-api", metav1.GetOptions{})
		ready := []any{map[string]any{"type": "Ready", "status": "False", "reason": "ComponentsFetchFailed",
			"message": "config map not found", "lastTransitionTime": "2026-02-03T04:05:06Z"}}
		unstructured.SetNestedSlice(u.Object, ready, "status", "conditions")
		if _, err := prov.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		expect(t, w, CheckInstalled, "condition Ready is False since 2026-02-03T04:05:06Z: ComponentsFetchFailed: config map not found")
		u, _ = prov.Get(ctx, "cluster-api", metav1.GetOptions{})
		ready[0].(map[string]any)["status"] = "True"
		unstructured.SetNestedSlice(u.Object, ready, "status", "conditions")
		if _, err := prov.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		clean(t, w)
	})

	t.Run("same name other content", func(t *testing.T) {
		orig := get(t, w, coreCM)
		u := orig.DeepCopy()
		unstructured.SetNestedField(u.Object, edited(t, w), "binaryData", "components")
		w.recreateCoreCM(t, u, "helm")
		expect(t, w, CheckConfigMap, "is stale", "capi-providers-core/templates/configmaps.yaml") // the tree's file is named
		w.recreateCoreCM(t, orig, "helm")
		clean(t, w)
	})

	t.Run("two matches", func(t *testing.T) {
		other := get(t, w, coreCM).DeepCopy()
		other.SetName("v1.9.0-core")
		other.SetResourceVersion("")
		other.SetUID("")
		other.SetManagedFields(nil)
		kubetest.Create(t, w.Dyn, kubetest.GVRConfigMap, other)
		expect(t, w, CheckConfigMap, "matches 2 ConfigMaps", "v1.10.1-core, v1.9.0-core")
		if err := cms.Delete(ctx, "v1.9.0-core", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		clean(t, w)
	})

	t.Run("image set through the provider's imageUrl", func(t *testing.T) {
		const mirror = "mirror.example/capi/cluster-api-controller:v1.10.1"
		deps := w.Dyn.Resource(kubetest.GVRDeployment).Namespace(kubetest.NS)
		setImage := func(image string) {
			t.Helper()
			u, err := deps.Get(ctx, coreDep, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			cs[0].(map[string]any)["image"] = image
			unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
			if _, err := deps.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		setOverride := func(image string) {
			t.Helper()
			u, err := prov.Get(ctx, "cluster-api", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if image == "" {
				unstructured.RemoveNestedField(u.Object, "spec", "deployment")
			} else {
				unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "manager", "imageUrl": image}}, "spec", "deployment", "containers")
			}
			if _, err := prov.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		u, err := deps.Get(ctx, coreDep, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		orig := cs[0].(map[string]any)["image"].(string)
		// What the operator deploys for a provider with the override set.
		setOverride(mirror)
		setImage(mirror)
		clean(t, w)
		setImage("registry.example/capi:hotfix")
		expect(t, w, CheckWorkload, "Deployment cozy-cluster-api/capi-controller-manager", "registry.example/capi:hotfix",
			"spec.deployment.containers[manager].imageUrl names "+mirror)
		setImage(orig)
		expect(t, w, CheckWorkload, "runs image "+orig, "imageUrl names "+mirror)
		setOverride("")
		clean(t, w)
	})

	t.Run("CRD version missing", func(t *testing.T) {
		crds := w.Dyn.Resource(kubetest.CRDGVR)
		orig, err := crds.Get(ctx, coreCRD, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// An older release's CRD: the release's served v1beta1 is not there.
		old := fresh(orig)
		vs, _, _ := unstructured.NestedSlice(old.Object, "spec", "versions")
		vs[0].(map[string]any)["name"] = "v1alpha4"
		unstructured.SetNestedSlice(old.Object, vs, "spec", "versions")
		w.replaceCRD(t, old)
		expect(t, w, CheckCRD, "CustomResourceDefinition clusters.cluster.x-k8s.io has no version v1beta1", "the cluster has v1alpha4")
		w.replaceCRD(t, fresh(orig))
		clean(t, w)
	})

}

// fresh is a copy of u to create anew.
func fresh(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	c.SetResourceVersion("")
	c.SetUID("")
	c.SetManagedFields(nil)
	c.SetCreationTimestamp(metav1.Time{})
	c.SetGeneration(0)
	delete(c.Object, "status")
	return c
}

// recreateCoreCM deletes the core ConfigMap and creates u as manager.
func (w *world) recreateCoreCM(t *testing.T, u *unstructured.Unstructured, manager string) {
	t.Helper()
	cms := w.Dyn.Resource(kubetest.GVRConfigMap).Namespace(kubetest.NS)
	if err := cms.Delete(context.Background(), coreCM, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.CreateAs(t, w.Dyn, kubetest.GVRConfigMap, fresh(u), manager)
}

// replaceCRD deletes the CRD of u's name, waits until it is gone and
// creates u.
func (w *world) replaceCRD(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	crds := w.Dyn.Resource(kubetest.CRDGVR)
	ctx := context.Background()
	if err := crds.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "CRD "+u.GetName()+" deleted", func() error {
		_, err := crds.Get(ctx, u.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return errStill
	})
	kubetest.Create(t, w.Dyn, kubetest.CRDGVR, u)
}

var errStill = errors.New("not yet")

func gvrRBAC(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestIntegrationClusterForbidden: credentials RBAC does not let list
// ConfigMaps give the permission finding, not a crash.
func TestIntegrationClusterForbidden(t *testing.T) {
	w := newWorld(t)
	role := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": "pinseal-no-configmaps"},
		"rules": []any{
			map[string]any{"apiGroups": []any{"operator.cluster.x-k8s.io"}, "resources": []any{"*"}, "verbs": []any{"get", "list", "watch"}},
			map[string]any{"apiGroups": []any{"apps"}, "resources": []any{"deployments"}, "verbs": []any{"get", "list", "watch"}},
			map[string]any{"apiGroups": []any{"apiextensions.k8s.io"}, "resources": []any{"customresourcedefinitions"}, "verbs": []any{"get", "list", "watch"}},
		},
	}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": "pinseal-no-configmaps"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pinseal-no-configmaps"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "limited"}},
	}}
	kubetest.Create(t, w.Dyn, gvrRBAC("clusterroles"), role)
	kubetest.Create(t, w.Dyn, gvrRBAC("clusterrolebindings"), binding)
	kc := w.Srv.WriteKubeconfig(t, "limited", kubetest.LimitedToken)
	var fs []string
	// RBAC reaches the authorizer's cache within a second or so.
	kubetest.WaitFor(t, "the limited user's role", func() error {
		fs = w.runAs(t, kc, w.Tree)
		for _, f := range fs {
			if strings.Contains(f, "operator.cluster.x-k8s.io") {
				return errStill
			}
		}
		return nil
	})
	var cm, oci bool
	for _, f := range fs {
		switch {
		case strings.HasPrefix(f, CheckConfigMap+" ") && strings.Contains(f, "permission missing: list configmaps in namespace cozy-cluster-api"):
			cm = true
		case strings.HasPrefix(f, CheckOCI+" ") && strings.Contains(f, "permission missing: list configmaps"):
			oci = true
		default:
			t.Errorf("unexpected finding: %s", f)
		}
	}
	if !cm || !oci {
		t.Errorf("want the cluster-configmap and cluster-oci permission findings, got:\n%s", strings.Join(fs, "\n"))
	}
}

// TestIntegrationClusterStopped: a cluster that does not answer is a
// failed check with the reason, not findings.
func TestIntegrationClusterStopped(t *testing.T) {
	srv := kubetest.Start(t)
	srv.Stop()
	start := time.Now()
	_, err := Verify(context.Background(), Options{Access: Access{Kubeconfig: srv.Kubeconfig, Timeout: 5 * time.Second}})
	if err == nil {
		t.Fatal("want an error for a stopped API server")
	}
	if !strings.Contains(err.Error(), "cluster pinseal-test") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error does not name the cluster and the reason: %v", err)
	}
	if d := time.Since(start); timebound.Over(d, 5*time.Second) {
		t.Errorf("took %s to give up with a 5s access timeout", d)
	}
}
