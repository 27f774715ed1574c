//go:build integration

package cluster

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

	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/operator"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// world is a real API server holding what Helm and the
// cluster-api-operator would have written for the example tree: the core
// provider installed from the tree's ConfigMap, the infrastructure
// provider from the signed registry artifact of its release (copied into
// the operator's store ConfigMap), and both providers' CRDs and
// Deployments.
type world struct {
	srv    *kubetest.APIServer
	dyn    dynamic.Interface
	root   string
	tree   *model.Tree
	prefix artifact.Prefix
	key    *sign.PrivateKey
	rels   map[string]remotetest.Release
	// oci is the infrastructure provider's spec.fetchConfig.oci.
	oci string
}

const ns = "cozy-cluster-api"

var (
	gvrCM  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDep = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{srv: kubetest.Start(t)}
	w.dyn = w.srv.Dynamic(t)
	w.root = remotetest.Tree(t)
	w.prefix = remotetest.Registry(t)
	w.key = remotetest.Key(t)
	w.rels = remotetest.Publish(t, w.root, w.prefix, remotetest.Both(w.key))
	tree, err := verify.Load(context.Background(), w.root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.tree = tree
	kubetest.InstallProviderCRDs(t, w.dyn)
	kubetest.Namespace(t, w.dyn, ns)
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

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// installSelected writes the tree's ConfigMap of p (as Helm does) and p
// as the operator leaves it once installed, with its components.
func (w *world) installSelected(t *testing.T, pkg *model.Package, p *model.Provider) {
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
	gz := read(t, filepath.Join(pkg.Dir, blobFile))
	kubetest.Create(t, w.dyn, gvrCM, configMap(cm.Name, cm.Labels, cm.Annotations, gz, nil, cm.MetadataRaw))
	w.provider(t, p, map[string]any{"selector": map[string]any{"matchLabels": toAny(p.Selector.MatchLabels)}})
	w.components(t, read(t, filepath.Join(pkg.Dir, yamlFile)))
}

// installOCI writes p as installing from its registry artifact, and the
// operator's store of that artifact.
func (w *world) installOCI(t *testing.T, pkg *model.Package, p *model.Provider) {
	t.Helper()
	rel := w.rels[p.Version]
	w.oci = "http://" + rel.Repo.Name() // the fixture registry is plain HTTP
	w.provider(t, p, map[string]any{"oci": w.oci})
	name := p.Type() + "-" + p.Name + "-" + p.Version
	kubetest.CreateAs(t, w.dyn, gvrCM, configMap(name, operator.StoreLabels(p.Type(), p.Name, p.Version), nil, nil, rel.YAML, rel.Metadata), "cluster-api-operator")
	w.components(t, rel.YAML)
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// configMap is a ConfigMap in ns with gz in binaryData.components or yaml
// in data.components.
func configMap(name string, labels, annotations map[string]string, gz, yaml, metadata []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	u.SetName(name)
	u.SetNamespace(ns)
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
func (w *world) provider(t *testing.T, p *model.Provider, fetch map[string]any) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": model.OperatorAPIVersion, "kind": p.Kind,
		"spec": map[string]any{"version": p.Version, "fetchConfig": fetch},
	}}
	u.SetName(p.Name)
	u.SetNamespace(ns)
	gvr := kubetest.ProviderGVR(p.Kind)
	created := kubetest.CreateAs(t, w.dyn, gvr, u, "cluster-api-operator")
	created.Object["status"] = map[string]any{
		"installedVersion": p.Version,
		"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "", "message": "",
			"lastTransitionTime": "2026-01-01T00:00:00Z"}},
	}
	if _, err := w.dyn.Resource(gvr).Namespace(ns).UpdateStatus(context.Background(), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// components creates the CRDs and Deployments of a components stream,
// the Deployments in ns (as the operator does).
func (w *world) components(t *testing.T, stream []byte) {
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
			kubetest.Create(t, w.dyn, kubetest.CRDGVR, u)
		case "Deployment":
			u.SetNamespace(ns)
			kubetest.CreateAs(t, w.dyn, gvrDep, u, "cluster-api-operator")
		}
	}
}

// run checks the world's cluster against its tree with the admin
// kubeconfig.
func (w *world) run(t *testing.T) []string {
	t.Helper()
	return w.runAs(t, w.srv.Kubeconfig, w.tree)
}

func (w *world) runAs(t *testing.T, kubeconfig string, tree *model.Tree) []string {
	t.Helper()
	r, err := Run(context.Background(), Options{
		Access: Access{Kubeconfig: kubeconfig},
		Tree:   tree,
		Allow:  []string{w.prefix.Host},
		Keys:   []*sign.PublicKey{w.key.Public()},
	})
	if err != nil {
		t.Fatalf("cluster check: %v", err)
	}
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Check+" "+f.Package+" "+f.Provider+": "+f.Message)
	}
	return out
}
