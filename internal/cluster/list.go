package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
)

// The check IDs (their catalog entries are pkg/check's).
const (
	CheckInstalled = check.ClusterInstalled
	CheckConfigMap = check.ClusterConfigMap
	CheckOCI       = check.ClusterOCI
	CheckWorkload  = check.ClusterWorkload
	CheckCRD       = check.ClusterCRD
)

var (
	gvrConfigMap  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrCRD        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// providerResource is the resource of a provider kind: its lowercase
// plural (CoreProvider: coreproviders).
func providerResource(kind string) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(model.OperatorAPIVersion)
	return gv.WithResource(strings.ToLower(kind) + "s")
}

// lister reads one cluster, page by page.
type lister struct {
	dyn        dynamic.Interface
	snap       *Snapshot
	maxObjects int
}

// List reads what the checks need from the cluster cfg reaches, named
// context in findings: every provider object of the seven kinds in all
// namespaces, the ConfigMaps their selectors match and the operator's
// stores of their releases, the Deployments of their namespaces and the
// CRDs. Only get and list are used. A read the credentials are not
// allowed is recorded (Snapshot.Forbidden); any other failure (the API
// server unreachable, credentials refused) is the error.
func List(ctx context.Context, cfg *rest.Config, context string) (*Snapshot, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", context, err)
	}
	l := &lister{dyn: dyn, snap: &Snapshot{Context: context, Server: cfg.Host, CRDs: map[string]*CRD{}}, maxObjects: DefaultMaxObjects}
	for _, kind := range operator.Kinds() {
		if err := l.providers(ctx, kind); err != nil {
			return nil, err
		}
	}
	sort.Slice(l.snap.Providers, func(i, j int) bool {
		a, b := l.snap.Providers[i], l.snap.Providers[j]
		return a.Namespace+"\x00"+a.Kind+"\x00"+a.Name < b.Namespace+"\x00"+b.Kind+"\x00"+b.Name
	})
	var namespaces []string
	for _, p := range l.snap.Providers {
		if err := l.configMaps(ctx, p); err != nil {
			return nil, err
		}
		if !slices.Contains(namespaces, p.Namespace) {
			namespaces = append(namespaces, p.Namespace)
		}
	}
	for _, ns := range namespaces {
		if err := l.deployments(ctx, ns); err != nil {
			return nil, err
		}
	}
	if len(l.snap.Providers) > 0 {
		if err := l.crds(ctx); err != nil {
			return nil, err
		}
	}
	return l.snap, nil
}

// list calls fn for every object of gvr in namespace ns ("" for all)
// matching selector, page by page. A forbidden list is recorded for
// check and ends without error; a resource the server does not have
// (the provider CRDs are not installed) lists nothing.
func (l *lister) list(ctx context.Context, gvr schema.GroupVersionResource, ns, selector, check string, fn func(*unstructured.Unstructured) error) error {
	var ri dynamic.ResourceInterface = l.dyn.Resource(gvr)
	if ns != "" {
		ri = l.dyn.Resource(gvr).Namespace(ns)
	}
	page := int64(PageSize)
	if gvr == gvrCRD {
		// A CRD with its schemas can weigh a megabyte.
		page = CRDPageSize
	}
	opts := metav1.ListOptions{Limit: page, LabelSelector: selector}
	seen := 0
	for {
		list, err := ri.List(ctx, opts)
		switch {
		case apierrors.IsForbidden(err):
			l.snap.Forbidden = append(l.snap.Forbidden, Forbidden{Verb: "list", Group: gvr.Group, Resource: gvr.Resource,
				Namespace: ns, Check: check, Message: err.Error()})
			return nil
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("cluster %s (%s): list %s: %w", l.snap.Context, l.snap.Server, resourceName(gvr, ns), err)
		}
		for i := range list.Items {
			if seen++; seen > l.maxObjects {
				return fmt.Errorf("cluster %s: more than %d %s: not read further", l.snap.Context, l.maxObjects, resourceName(gvr, ns))
			}
			if err := fn(&list.Items[i]); err != nil {
				return fmt.Errorf("cluster %s: %s %s/%s: %w", l.snap.Context, gvr.Resource, list.Items[i].GetNamespace(), list.Items[i].GetName(), err)
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// resourceName is "configmaps in namespace NS" or "configmaps in all namespaces".
func resourceName(gvr schema.GroupVersionResource, ns string) string {
	r := gvr.Resource
	if gvr.Group != "" {
		r += "." + gvr.Group
	}
	if ns == "" {
		return r
	}
	return r + " in namespace " + ns
}

func (l *lister) providers(ctx context.Context, kind string) error {
	return l.list(ctx, providerResource(kind), "", "", CheckInstalled, func(u *unstructured.Unstructured) error {
		l.snap.Providers = append(l.snap.Providers, providerOf(kind, u))
		return nil
	})
}

// providerOf reads the fields the checks use from a provider object.
func providerOf(kind string, u *unstructured.Unstructured) *Provider {
	p := &Provider{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	p.Version, _, _ = unstructured.NestedString(u.Object, "spec", "version")
	p.FetchOCI, _, _ = unstructured.NestedString(u.Object, "spec", "fetchConfig", "oci")
	p.FetchURL, _, _ = unstructured.NestedString(u.Object, "spec", "fetchConfig", "url")
	overridesOf(p, u)
	if sel, ok, _ := unstructured.NestedMap(u.Object, "spec", "fetchConfig", "selector"); ok {
		var ls metav1.LabelSelector
		if runtime.DefaultUnstructuredConverter.FromUnstructured(sel, &ls) == nil {
			p.Selector = &model.Selector{MatchLabels: ls.MatchLabels}
			for _, r := range ls.MatchExpressions {
				p.Selector.MatchExpressions = append(p.Selector.MatchExpressions,
					model.Requirement{Key: r.Key, Operator: string(r.Operator), Values: r.Values})
			}
		}
	}
	p.InstalledVersion, _, _ = unstructured.NestedString(u.Object, "status", "installedVersion")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		var mc metav1.Condition
		m, ok := c.(map[string]any)
		if !ok || runtime.DefaultUnstructuredConverter.FromUnstructured(m, &mc) != nil {
			continue
		}
		p.Conditions = append(p.Conditions, Condition{Type: mc.Type, Status: string(mc.Status), Reason: mc.Reason,
			Message: mc.Message, Since: mc.LastTransitionTime.Time})
	}
	return p
}

// configMaps reads the ConfigMaps p's selector matches (asking the API
// server with the selector, as the operator does) and the operator's
// stores of p's release.
func (l *lister) configMaps(ctx context.Context, p *Provider) error {
	add := func(to *[]*ConfigMap) func(*unstructured.Unstructured) error {
		return func(u *unstructured.Unstructured) error {
			cm, err := configMapOf(u)
			if err == nil {
				*to = append(*to, cm)
			}
			return err
		}
	}
	if p.Selector != nil {
		sel, err := layout.Selector(p.Selector)
		if err != nil {
			// The operator cannot use it either: nothing matches
			// (cluster-configmap reports it).
			return nil
		}
		if err := l.list(ctx, gvrConfigMap, p.Namespace, sel.String(), CheckConfigMap, add(&p.Matches)); err != nil {
			return err
		}
	}
	if p.FetchOCI == "" || p.Version == "" {
		return nil
	}
	// The store's type label changed across operator releases; version,
	// name, managed-by and source select it.
	store := operator.StoreLabels("", p.Name, p.Version)
	delete(store, operator.LabelType)
	return l.list(ctx, gvrConfigMap, p.Namespace, labels.SelectorFromSet(store).String(), CheckOCI, add(&p.Stored))
}

// configMapOf reads a ConfigMap's entries and field managers.
func configMapOf(u *unstructured.Unstructured) (*ConfigMap, error) {
	var c corev1.ConfigMap
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
		return nil, err
	}
	cm := &ConfigMap{Namespace: c.Namespace, Name: c.Name, Labels: c.Labels, Annotations: c.Annotations}
	if b, ok := c.BinaryData["components"]; ok {
		cm.Components, cm.ComponentsInBinary = b, true
	} else if s, ok := c.Data["components"]; ok {
		cm.Components = []byte(s)
	}
	if s, ok := c.Data["metadata"]; ok {
		cm.Metadata = []byte(s)
	}
	for _, mf := range c.ManagedFields {
		w := Writer{Manager: mf.Manager, Operation: string(mf.Operation)}
		if mf.Time != nil {
			w.Time = mf.Time.Time
		}
		if mf.FieldsV1 != nil {
			w.Content, w.Labels = ownsFields(mf.FieldsV1.Raw)
		}
		cm.Writers = append(cm.Writers, w)
	}
	return cm, nil
}

// ownsFields reads a managedFields entry's field set (FieldsV1, a JSON
// trie of "f:<name>" keys): whether it owns the components or metadata
// entry, and metadata.labels.
func ownsFields(raw []byte) (content, labels bool) {
	var set map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &set) != nil {
		return false, false
	}
	_, bin := set["f:binaryData"]["f:components"]
	_, data := set["f:data"]["f:components"]
	_, meta := set["f:data"]["f:metadata"]
	_, lab := set["f:metadata"]["f:labels"]
	return bin || data || meta, lab
}

func (l *lister) deployments(ctx context.Context, ns string) error {
	return l.list(ctx, gvrDeployment, ns, "", CheckWorkload, func(u *unstructured.Unstructured) error {
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
			return err
		}
		dep := &Deployment{Namespace: d.Namespace, Name: d.Name}
		if d.Spec.Replicas != nil {
			r := int64(*d.Spec.Replicas)
			dep.Replicas = &r
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			dep.Containers = append(dep.Containers, Container{Name: c.Name, Image: c.Image})
		}
		l.snap.Deployments = append(l.snap.Deployments, dep)
		return nil
	})
}

func (l *lister) crds(ctx context.Context) error {
	return l.list(ctx, gvrCRD, "", "", CheckCRD, func(u *unstructured.Unstructured) error {
		var c apiextv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
			return err
		}
		crd := &CRD{Name: c.Name}
		for _, v := range c.Spec.Versions {
			crd.Versions = append(crd.Versions, CRDVersion{Name: v.Name, Served: v.Served, Storage: v.Storage})
		}
		l.snap.CRDs[c.Name] = crd
		return nil
	})
}
