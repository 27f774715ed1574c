package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
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
	rc         rest.Interface
	snap       *Snapshot
	maxObjects int
	maxPages   int
	maxBytes   int64
}

// List reads what the checks need from the cluster cfg reaches, named
// context in findings: every provider object of the seven kinds in all
// namespaces, the ConfigMaps their selectors match and the operator's
// stores of their releases, the Deployments of their namespaces and the
// CRDs. Only get and list are used. A read the credentials are not
// allowed is recorded (Snapshot.Forbidden); any other failure (the API
// server unreachable, credentials refused, a list past its bounds) is the
// error.
func List(ctx context.Context, cfg *rest.Config, context string) (*Snapshot, error) {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.ContentType = "application/json"
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", context, err)
	}
	l := &lister{rc: rc, snap: &Snapshot{Context: context, Server: cfg.Host, CRDs: map[string]*CRD{}},
		maxObjects: DefaultMaxObjects, maxPages: DefaultMaxPages, maxBytes: DefaultMaxListBytes}
	for _, kind := range operator.Kinds() {
		if err := l.providers(ctx, kind); err != nil {
			return nil, err
		}
	}
	if err := l.capiProviders(ctx); err != nil {
		return nil, err
	}
	l.snap.Providers, l.snap.Mirrors = mirrors(l.snap.Providers)
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

// listPath is the API path of gvr's objects in namespace ns ("" for all).
func listPath(gvr schema.GroupVersionResource, ns string) string {
	p := "/api/" + gvr.Version
	if gvr.Group != "" {
		p = "/apis/" + gvr.Group + "/" + gvr.Version
	}
	if ns != "" {
		p += "/namespaces/" + url.PathEscape(ns)
	}
	return p + "/" + gvr.Resource
}

// list calls fn for every object of gvr in namespace ns ("" for all)
// matching selector, page by page, with a decoder positioned at the
// object (fn decodes it). A forbidden list is recorded for check and ends
// without error; a resource the server does not have (the provider CRDs
// are not installed) lists nothing. A list is bounded in objects, pages
// (an empty page with a continue token counts) and bytes across its pages.
func (l *lister) list(ctx context.Context, gvr schema.GroupVersionResource, ns, selector, check string, fn func(*json.Decoder) error) error {
	page := int64(PageSize)
	if gvr == gvrCRD {
		// A CRD with its schemas can weigh a megabyte.
		page = CRDPageSize
	}
	seen, pages := 0, 0
	read := &countingBudget{left: l.maxBytes}
	cont := ""
	for {
		if pages++; pages > l.maxPages {
			return fmt.Errorf("cluster %s: listing %s took more than %d pages (%d objects so far): not read further; the API server keeps answering with a continue token", l.snap.Context, resourceName(gvr, ns), l.maxPages, seen)
		}
		req := l.rc.Get().AbsPath(listPath(gvr, ns)).Param("limit", strconv.FormatInt(page, 10)).SetHeader("Accept", "application/json")
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		if cont != "" {
			req = req.Param("continue", cont)
		}
		body, err := req.Stream(ctx)
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
		read.r = body
		cont, err = decodeList(read, func(dec *json.Decoder) error {
			if seen++; seen > l.maxObjects {
				return fmt.Errorf("more than %d %s: not read further", l.maxObjects, resourceName(gvr, ns))
			}
			return fn(dec)
		})
		body.Close()
		switch {
		case read.over:
			return fmt.Errorf("cluster %s: listing %s read more than %d bytes across its pages: not read further", l.snap.Context, resourceName(gvr, ns), l.maxBytes)
		case err != nil:
			return fmt.Errorf("cluster %s (%s): list %s: %w", l.snap.Context, l.snap.Server, resourceName(gvr, ns), err)
		case cont == "":
			return nil
		}
	}
}

// countingBudget reads r within what is left of a list's byte bound.
type countingBudget struct {
	r    io.Reader
	left int64
	over bool
}

func (c *countingBudget) Read(p []byte) (int, error) {
	if c.left <= 0 {
		c.over = true
		return 0, errors.New("list byte bound passed")
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
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
	return l.list(ctx, providerResource(kind), "", "", CheckInstalled, func(dec *json.Decoder) error {
		var pj providerJSON
		if err := dec.Decode(&pj); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		l.snap.Providers = append(l.snap.Providers, pj.provider(kind))
		return nil
	})
}

// gvrCAPIProvider is Rancher Turtles' provider resource.
var gvrCAPIProvider = schema.GroupVersionResource{Group: model.TurtlesAPIGroup, Version: "v1alpha1", Resource: "capiproviders"}

// capiProviders reads the Turtles CAPIProviders of all namespaces (none
// where the CRD is not installed), each as the operator kind its
// spec.type names; one of a type Turtles does not know installs nothing
// and is left out.
func (l *lister) capiProviders(ctx context.Context) error {
	// Asked only where the API server serves the group (discovery, which
	// every authenticated user may read): a cluster without Turtles
	// needs no permission on it.
	err := l.rc.Get().AbsPath("/apis/"+gvrCAPIProvider.Group+"/"+gvrCAPIProvider.Version).SetHeader("Accept", "application/json").Do(ctx).Error()
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil && !apierrors.IsForbidden(err):
		return fmt.Errorf("cluster %s (%s): discovery of %s: %w", l.snap.Context, l.snap.Server, gvrCAPIProvider.GroupVersion(), err)
	}
	return l.list(ctx, gvrCAPIProvider, "", "", CheckInstalled, func(dec *json.Decoder) error {
		var pj providerJSON
		if err := dec.Decode(&pj); err != nil {
			return fmt.Errorf("%s: %w", model.CAPIProviderKind, err)
		}
		if p, ok := pj.capiProvider(); ok {
			l.snap.Providers = append(l.snap.Providers, p)
		}
		return nil
	})
}

// mirrors splits the operator objects a CAPIProvider owns and that carry
// its kind, namespace and name (what Turtles before v0.22 created from
// it: rancher/turtles internal/sync/provider_sync.go and core.go's
// setOwnerReference before commit 5b6d2c97) from the providers, each tied
// to its CAPIProvider.
func mirrors(all []*Provider) (providers, mirrored []*Provider) {
	for _, p := range all {
		if p.Owner == "" || p.Object != "" {
			providers = append(providers, p)
			continue
		}
		i := slices.IndexFunc(all, func(c *Provider) bool {
			return c.Object == p.Owner && c.Kind == p.Kind && c.Namespace == p.Namespace && c.Name == p.Name
		})
		if i < 0 {
			providers = append(providers, p)
			continue
		}
		p.MirrorOf = all[i]
		mirrored = append(mirrored, p)
	}
	return providers, mirrored
}

// configMaps reads the ConfigMaps p's selector matches (asking the API
// server with the selector, as the operator does) and the operator's
// stores of p's release.
func (l *lister) configMaps(ctx context.Context, p *Provider) error {
	add := func(to *[]*ConfigMap) func(*json.Decoder) error {
		return func(dec *json.Decoder) error {
			var cj configMapJSON
			if err := dec.Decode(&cj); err != nil {
				return fmt.Errorf("ConfigMap: %w", err)
			}
			*to = append(*to, cj.configMap())
			return nil
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

func (l *lister) deployments(ctx context.Context, ns string) error {
	return l.list(ctx, gvrDeployment, ns, "", CheckWorkload, func(dec *json.Decoder) error {
		var d deploymentJSON
		if err := dec.Decode(&d); err != nil {
			return fmt.Errorf("Deployment: %w", err)
		}
		dep := &Deployment{Namespace: d.Metadata.Namespace, Name: d.Metadata.Name, Replicas: d.Spec.Replicas}
		for _, c := range d.Spec.Template.Spec.Containers {
			dep.Containers = append(dep.Containers, Container{Name: c.Name, Image: c.Image})
		}
		l.snap.Deployments = append(l.snap.Deployments, dep)
		return nil
	})
}

func (l *lister) crds(ctx context.Context) error {
	return l.list(ctx, gvrCRD, "", "", CheckCRD, func(dec *json.Decoder) error {
		var c crdJSON
		if err := dec.Decode(&c); err != nil {
			return fmt.Errorf("CustomResourceDefinition: %w", err)
		}
		crd := &CRD{Name: c.Metadata.Name}
		for _, v := range c.Spec.Versions {
			crd.Versions = append(crd.Versions, CRDVersion{Name: v.Name, Served: v.Served, Storage: v.Storage})
		}
		l.snap.CRDs[c.Metadata.Name] = crd
		return nil
	})
}
