//go:build integration

package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"

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

// installed is one provider of the example tree as applied to the API
// server, with the components YAML the operator is to install from it.
type installed struct {
	p    *model.Provider
	yaml []byte
}

// applyExamples starts an API server and applies what Helm applies of
// examples/packages: the namespace, the components ConfigMaps and the
// provider objects selecting them (plus the CRDs of the operator and the
// trimmed cert-manager kinds the components use).
func applyExamples(t *testing.T) (*World, []installed) {
	t.Helper()
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
	var want []installed
	for _, pkg := range tree.Packages {
		for _, pr := range pkg.Problems {
			t.Errorf("%s: %s: %s", pkg.Path, pr.Check, pr.Message)
		}
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
	// The example tree is a core and an infrastructure provider; fewer
	// would let the test pass on what it never installed.
	if len(want) != 2 {
		t.Fatalf("examples/packages has %d providers, want 2", len(want))
	}
	return w, want
}

// providerInstalled reports nil once the provider's ProviderInstalled
// condition is True, else what the condition says (the provider in its
// Namespace, else in NS).
func providerInstalled(w *World, p *model.Provider) error {
	ns := p.Namespace
	if ns == "" {
		ns = NS
	}
	u, err := w.Dyn.Resource(ProviderGVR(p.Kind)).Namespace(ns).Get(context.Background(), p.Name, metav1.GetOptions{})
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
	return fmt.Errorf("no ProviderInstalled condition (conditions %v)", conds)
}

// playControllerManager marks every Deployment of the core provider's
// components Available, as kube-controller-manager would once its pods
// ran: the test cluster has neither, and the operator installs no other
// provider before the CoreProvider is Ready, which it copies from its
// Deployment's Available condition.
func playControllerManager(t *testing.T, w *World, in installed) {
	t.Helper()
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(in.yaml)), 1<<20)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s components: %v", in.p.Name, err)
		}
		if u.GetKind() != "Deployment" {
			continue
		}
		ri := w.Dyn.Resource(GVRDeployment).Namespace(NS)
		// The operator may write the Deployment between our read and our
		// write (it re-applies components while it reconciles): a
		// conflict is read again and retried, as a controller would.
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			d, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := time.Now().UTC().Format(time.RFC3339)
			_ = unstructured.SetNestedSlice(d.Object, []any{map[string]any{
				"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
				"lastUpdateTime": now, "lastTransitionTime": now,
			}}, "status", "conditions")
			_, err = ri.UpdateStatus(ctx, d, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("Deployment %s/%s: mark Available: %v", NS, u.GetName(), err)
		}
	}
}

// TestRealOperatorInstallsExamples: the real cluster-api-operator, given
// what Helm applies of examples/packages, installs both providers:
// ProviderInstalled=True, and every CRD and Deployment of the components
// exists in the cluster.
func TestRealOperatorInstallsExamples(t *testing.T) {
	w, want := applyExamples(t)
	w.Srv.StartOperator(t)

	ctx := context.Background()
	for _, in := range want {
		waitLong(t, in.p.Kind+"/"+in.p.Name+" ProviderInstalled=True", func() error { return providerInstalled(w, in.p) })
		if in.p.Kind == "CoreProvider" {
			playControllerManager(t, w, in)
		}
		// Every CRD and Deployment of the components is in the cluster.
		dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(in.yaml)), 1<<20)
		crds, deployments := 0, 0
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s components: %v", in.p.Name, err)
			}
			var gvr schema.GroupVersionResource
			ns := ""
			switch u.GetKind() {
			case "CustomResourceDefinition":
				gvr = CRDGVR
				crds++
			case "Deployment": // the operator moves the components into the provider's namespace
				gvr, ns = GVRDeployment, NS
				deployments++
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
		// Components without a CRD or a Deployment would check nothing.
		if crds == 0 || deployments == 0 {
			t.Errorf("%s components: %d CRDs, %d Deployments; the check needs some of each", in.p.Name, crds, deployments)
		}
	}
}

// TestRealOperatorRefusesAmbiguousSelector: a second ConfigMap matching
// the infrastructure provider's selector (pinseal's selector-unique rule)
// and the real operator refuses to install that provider, saying so in
// its log, while the core provider beside it installs.
func TestRealOperatorRefusesAmbiguousSelector(t *testing.T) {
	w, want := applyExamples(t)
	var core, infra *model.Provider
	for _, in := range want {
		if in.p.Kind == "CoreProvider" {
			core = in.p
		} else {
			infra = in.p
		}
	}
	if core == nil || infra == nil {
		t.Fatalf("examples/packages: want a CoreProvider and another provider, have %v", want)
	}
	ctx := context.Background()
	cm, err := w.Dyn.Resource(GVRConfigMap).Namespace(NS).Get(ctx, infra.Version, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dup := cm.DeepCopy()
	dup.SetName(infra.Version + "-copy")
	dup.SetResourceVersion("")
	dup.SetUID("")
	Create(t, w.Dyn, GVRConfigMap, dup)
	logFile := w.Srv.StartOperator(t)

	waitLong(t, "CoreProvider/"+core.Name+" ProviderInstalled=True", func() error { return providerInstalled(w, core) })
	for _, in := range want {
		if in.p == core {
			playControllerManager(t, w, in)
		}
	}
	const refusal = "multiple ConfigMaps match selector"
	waitLong(t, "the operator's log to say "+strconv.Quote(refusal), func() error {
		b, err := os.ReadFile(logFile)
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), refusal) {
			return errors.New("not yet")
		}
		return nil
	})
	if err := providerInstalled(w, infra); err == nil {
		t.Errorf("%s/%s: ProviderInstalled=True from a selector matching two ConfigMaps", infra.Kind, infra.Name)
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
