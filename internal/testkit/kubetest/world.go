package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// World is a real API server holding what Helm and the
// cluster-api-operator would have written for the example tree: the core
// provider installed from the tree's ConfigMap, the infrastructure
// provider from the signed registry artifact of its release (copied into
// the operator's store ConfigMap), and both providers' CRDs and
// Deployments.
type World struct {
	Srv    *APIServer
	Dyn    dynamic.Interface
	Root   string // the tree's copy
	Tree   *model.Tree
	Prefix artifact.Prefix // the registry the tree's releases are in
	Key    *sign.PrivateKey
	Rels   map[string]remotetest.Release // by release
	// OCI is the infrastructure provider's spec.fetchConfig.oci.
	OCI string
}

// NS is the namespace of the example packages.
const NS = "cozy-cluster-api"

var (
	GVRConfigMap  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	GVRDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// NewWorld starts an API server and writes into it what the example
// tree (a copy, published signed to an in-process registry) makes once
// Helm applied it and the operator installed it.
func NewWorld(t *testing.T) *World {
	t.Helper()
	w := &World{Srv: Start(t)}
	w.Dyn = w.Srv.Dynamic(t)
	w.Root = remotetest.CopyExamples(t)
	w.Prefix = remotetest.Registry(t)
	w.Key = remotetest.Key(t)
	w.Rels = remotetest.Publish(t, w.Root, w.Prefix, remotetest.Both(w.Key))
	tree, err := verify.Load(context.Background(), w.Root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Tree = tree
	InstallProviderCRDs(t, w.Dyn)
	Namespace(t, w.Dyn, NS)
	for _, pkg := range tree.Packages {
		for _, p := range pkg.Providers {
			switch p.Kind {
			case "CoreProvider":
				w.installSelected(t, pkg, p)
			default:
				w.installOCI(t, pkg, p)
			}
		}
	}
	return w
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// installSelected writes the tree's ConfigMap of p (as Helm does) and p
// as the operator leaves it once installed, with its components.
func (w *World) installSelected(t *testing.T, pkg *model.Package, p *model.Provider) {
	t.Helper()
	var cm *model.ConfigMap
	for _, c := range pkg.ConfigMaps {
		if c.Name == p.Version {
			cm = c
		}
	}
	if cm == nil {
		t.Fatalf("%s: no ConfigMap %s in the tree", pkg.Path, p.Version)
	}
	blobFile := pkg.Layout.BlobFile(cm)
	yamlFile, _ := pkg.Layout.ComponentsYAML(cm)
	gz := readFile(t, filepath.Join(pkg.Dir, blobFile))
	Create(t, w.Dyn, GVRConfigMap, ConfigMapObject(cm.Name, cm.Labels, cm.Annotations, gz, nil, cm.MetadataRaw))
	w.provider(t, p, map[string]any{"selector": map[string]any{"matchLabels": toAny(p.Selector.MatchLabels)}})
	w.components(t, readFile(t, filepath.Join(pkg.Dir, yamlFile)))
}

// installOCI writes p as installing from its registry artifact, and the
// operator's store of that artifact.
func (w *World) installOCI(t *testing.T, pkg *model.Package, p *model.Provider) {
	t.Helper()
	rel := w.Rels[p.Version]
	w.OCI = "http://" + rel.Repo.Name() // the fixture registry is plain HTTP
	w.provider(t, p, map[string]any{"oci": w.OCI})
	name := p.Type() + "-" + p.Name + "-" + p.Version
	CreateAs(t, w.Dyn, GVRConfigMap, ConfigMapObject(name, operator.StoreLabels(p.Type(), p.Name, p.Version), nil, nil, rel.YAML, rel.Metadata), "cluster-api-operator")
	w.components(t, rel.YAML)
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ConfigMapObject is a ConfigMap in NS with gz in binaryData.components or yaml
// in data.components.
func ConfigMapObject(name string, labels, annotations map[string]string, gz, yaml, metadata []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	u.SetNamespace(NS)
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	data := map[string]any{"metadata": string(metadata)}
	if gz != nil {
		u.Object["binaryData"] = map[string]any{"components": base64.StdEncoding.EncodeToString(gz)}
	} else {
		data["components"] = string(yaml)
	}
	u.Object["data"] = data
	return u
}

// provider writes p with fetchConfig, then its status as the operator
// leaves it after installing spec.version.
func (w *World) provider(t *testing.T, p *model.Provider, fetch map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": model.OperatorAPIVersion, "kind": p.Kind,
		"spec": map[string]any{"version": p.Version, "fetchConfig": fetch},
	}}
	u.SetName(p.Name)
	u.SetNamespace(NS)
	gvr := ProviderGVR(p.Kind)
	created := CreateAs(t, w.Dyn, gvr, u, "cluster-api-operator")
	created.Object["status"] = map[string]any{
		"installedVersion": p.Version,
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "", "message": "",
			"lastTransitionTime": "2026-01-01T00:00:00Z"}},
	}
	if _, err := w.Dyn.Resource(gvr).Namespace(NS).UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// components creates the CRDs and Deployments of a components stream,
// the Deployments in NS (as the operator does).
func (w *World) components(t *testing.T, stream []byte) {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil || obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "CustomResourceDefinition":
			Create(t, w.Dyn, CRDGVR, trimCRD(u))
		case "Deployment":
			u.SetNamespace(NS)
			CreateAs(t, w.Dyn, GVRDeployment, u, "cluster-api-operator")
		}
	}
}

// trimCRD keeps what the checks compare of a CRD (its names, scope and
// versions with served and storage) and gives each version a schema that
// takes any fields: the example components' CRDs are cut short and are
// not structural, which the API server refuses.
func trimCRD(u *unstructured.Unstructured) *unstructured.Unstructured {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	versions, _, _ := unstructured.NestedSlice(spec, "versions")
	var vs []any
	for _, v := range versions {
		m := v.(map[string]any)
		vs = append(vs, map[string]any{"name": m["name"], "served": m["served"], "storage": m["storage"],
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
	}
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"spec": map[string]any{"group": spec["group"], "names": spec["names"], "scope": spec["scope"], "versions": vs},
	}}
	out.SetName(u.GetName())
	return out
}
