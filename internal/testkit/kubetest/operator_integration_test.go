//go:build integration

package kubetest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/verify"
)

// installTrimmedCRD creates a CRD serving kind in group/version with any
// fields: what the operator's preflight and the components need of a kind
// another product installs (cert-manager's).
func installTrimmedCRD(t *testing.T, w *World, group, version, kind string) {
	t.Helper()
	plural := strings.ToLower(kind) + "s"
	Create(t, w.Dyn, CRDGVR, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"kind": kind, "plural": plural, "singular": strings.ToLower(kind), "listKind": kind + "List"},
			"versions": []any{map[string]any{"name": version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}})
}

// TestRealOperatorInstallsExamples: the real cluster-api-operator, given
// what Helm applies of examples/packages (the namespace, the components
// ConfigMaps and the provider objects, selecting them), installs both
// providers: ProviderInstalled=True, and every CRD and Deployment of the
// components exists in the cluster.
func TestRealOperatorInstallsExamples(t *testing.T) {
	OperatorBinary(t)
	w := &World{Srv: Start(t)}
	w.Dyn = w.Srv.Dynamic(t)
	tree, err := verify.Load(context.Background(), filepath.Join("..", "..", "..", "examples", "packages"), verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	InstallProviderCRDs(t, w.Dyn)
	for _, k := range []string{"Certificate", "Issuer"} {
		installTrimmedCRD(t, w, "cert-manager.io", "v1", k)
	}
	Namespace(t, w.Dyn, NS)
	type installed struct {
		p    *model.Provider
		yaml []byte
	}
	var want []installed
	for _, pkg := range tree.Packages {
		for _, p := range pkg.Providers {
			var cm *model.ConfigMap
			for _, c := range pkg.ConfigMaps {
				if c.Name == p.Version {
					cm = c
				}
			}
			if cm == nil || p.Selector == nil {
				t.Fatalf("%s: no selected ConfigMap %s", pkg.Path, p.Version)
			}
			yamlFile, _ := pkg.Layout.ComponentsYAML(cm)
			gz := readFile(t, filepath.Join(pkg.Dir, pkg.Layout.BlobFile(cm)))
			Create(t, w.Dyn, GVRConfigMap, ConfigMapObject(cm.Name, cm.Labels, cm.Annotations, gz, nil, cm.MetadataRaw))
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": model.OperatorAPIVersion, "kind": p.Kind,
				"spec": map[string]any{"version": p.Version, "fetchConfig": map[string]any{
					"selector": map[string]any{"matchLabels": toAny(p.Selector.MatchLabels)}}},
			}}
			u.SetName(p.Name)
			u.SetNamespace(NS)
			Create(t, w.Dyn, ProviderGVR(p.Kind), u)
			want = append(want, installed{p, readFile(t, filepath.Join(pkg.Dir, yamlFile))})
		}
	}
	w.Srv.StartOperator(t)

	ctx := context.Background()
	for _, in := range want {
		gvr := ProviderGVR(in.p.Kind)
		waitLong(t, in.p.Kind+"/"+in.p.Name+" ProviderInstalled=True", func() error {
			u, err := w.Dyn.Resource(gvr).Namespace(NS).Get(ctx, in.p.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "ProviderInstalled" {
					if m["status"] == "True" {
						return nil
					}
					return fmt.Errorf("ProviderInstalled %v %v: %v", m["status"], m["reason"], m["message"])
				}
			}
			return fmt.Errorf("no ProviderInstalled condition yet (conditions %v)", conds)
		})
		// Every CRD and Deployment of the components is in the cluster.
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(in.yaml)), 1<<20)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); err != nil {
				break
			}
			var gvr schema.GroupVersionResource
			ns := ""
			switch u.GetKind() {
			case "CustomResourceDefinition":
				gvr = CRDGVR
			case "Deployment":
				gvr, ns = GVRDeployment, NS // the operator moves the components into the provider's namespace
			default:
				continue
			}
			ri := w.Dyn.Resource(gvr).Namespace(ns)
			if ns == "" {
				if _, err := w.Dyn.Resource(gvr).Get(ctx, u.GetName(), metav1.GetOptions{}); err != nil {
					t.Errorf("%s %s: the operator did not apply it: %v", u.GetKind(), u.GetName(), err)
				}
				continue
			}
			if _, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{}); err != nil {
				t.Errorf("%s %s/%s: the operator did not apply it: %v", u.GetKind(), ns, u.GetName(), err)
			}
		}
	}
}

// waitLong is WaitFor with the bound an operator install needs on a
// loaded machine (it retries a failed install with backoff): 5 minutes.
func waitLong(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
