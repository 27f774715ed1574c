package kubetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Config is the admin REST config of s.
func (s *APIServer) Config() *rest.Config {
	return &rest.Config{Host: s.URL, BearerToken: AdminToken, TLSClientConfig: rest.TLSClientConfig{CAData: s.CA}, Timeout: 30 * time.Second}
}

// Dynamic is an admin dynamic client of s.
func (s *APIServer) Dynamic(t testing.TB) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ProviderKinds are the cluster-api-operator's provider kinds.
var ProviderKinds = []string{"CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider",
	"IPAMProvider", "AddonProvider", "RuntimeExtensionProvider"}

// ProviderGVR is the resource of a provider kind.
func ProviderGVR(kind string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "operator.cluster.x-k8s.io", Version: "v1alpha2", Resource: strings.ToLower(kind) + "s"}
}

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallProviderCRDs creates the seven provider kinds' CRDs, trimmed to
// what a test writes (served v1alpha2, any fields, a status subresource),
// and waits until objects of each can be listed.
func InstallProviderCRDs(t testing.TB, d dynamic.Interface) {
	t.Helper()
	ctx := context.Background()
	for _, kind := range ProviderKinds {
		gvr := ProviderGVR(kind)
		crd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": gvr.Resource + "." + gvr.Group},
			"spec": map[string]any{
				"group": gvr.Group, "scope": "Namespaced",
				"names": map[string]any{"kind": kind, "plural": gvr.Resource, "singular": strings.ToLower(kind), "listKind": kind + "List"},
				"versions": []any{map[string]any{
					"name": gvr.Version, "served": true, "storage": true,
					"subresources": map[string]any{"status": map[string]any{}},
					"schema": map[string]any{"openAPIV3Schema": map[string]any{
						"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				}},
			},
		}}
		Create(t, d, CRDGVR, crd)
	}
	for _, kind := range ProviderKinds {
		WaitFor(t, fmt.Sprintf("%s served", kind), func() error {
			_, err := d.Resource(ProviderGVR(kind)).List(ctx, metav1.ListOptions{Limit: 1})
			return err
		})
	}
}

// Create creates obj (in its namespace, if any) with field manager
// "helm", as Helm would have.
func Create(t testing.TB, d dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	return CreateAs(t, d, gvr, obj, "helm")
}

// CreateAs creates obj with field manager manager.
func CreateAs(t testing.TB, d dynamic.Interface, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	t.Helper()
	var ri dynamic.ResourceInterface = d.Resource(gvr)
	if ns := obj.GetNamespace(); ns != "" {
		ri = d.Resource(gvr).Namespace(ns)
	}
	out, err := ri.Create(context.Background(), obj, metav1.CreateOptions{FieldManager: manager})
	if err != nil {
		t.Fatalf("create %s %s/%s: %v", gvr.Resource, obj.GetNamespace(), obj.GetName(), err)
	}
	return out
}

// Namespace creates namespace ns.
func Namespace(t testing.TB, d dynamic.Interface, ns string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

// WaitFor retries fn every 100 ms for up to 3 minutes, failing the test
// with its last error. The bound only ends a wait that will never succeed:
// on a loaded machine the API server's own controllers (a CRD's deletion
// waits for its instances to be cleaned up) took over 30 s.
func WaitFor(t testing.TB, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
