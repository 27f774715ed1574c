// Package cluster compares a live cluster with its tree and registry: what
// the cluster-api-operator actually installed (provider objects and their
// status, the ConfigMaps their selectors match, the operator's cache of
// fetchConfig.oci artifacts, the providers' Deployments and the CRDs)
// against the tree's rendered packages and the registry's signed
// artifacts.
//
// The I/O is at the edges: List reads the cluster (read-only, paginated,
// bounded) into a Snapshot of plain data, Verify reads the tree (pkg/verify's
// loader) and the registry artifacts (pkg/verify's artifact verification),
// and the checks (cluster-installed, cluster-configmap, cluster-oci,
// cluster-workload, cluster-crd) are pure functions of those.
package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/pinseal/pinseal/pkg/model"
)

// Snapshot is what one cluster holds that the checks read.
type Snapshot struct {
	// Context names the cluster in findings: the kubeconfig context, or
	// "in-cluster".
	Context string
	// Server is the API server's URL.
	Server    string
	Providers []*Provider // by kind, namespace, name
	// Mirrors are the operator provider objects Rancher Turtles before
	// v0.22 created from each CAPIProvider (owned by it, same kind, name
	// and namespace, spec copied down): checked against their CAPIProvider
	// only, as the CAPIProvider carries the same selector and status.
	Mirrors []*Provider
	// Deployments are those of the providers' namespaces, by namespace
	// and name.
	Deployments []*Deployment
	// CRDs by name.
	CRDs map[string]*CRD
	// Forbidden are the reads the credentials were not allowed: each is a
	// finding naming the missing permission.
	Forbidden []Forbidden
}

// Provider is one cluster-api-operator provider object, or a Rancher
// Turtles CAPIProvider as the operator kind its spec.type names.
type Provider struct {
	Kind, Namespace, Name string
	// Object is "CAPIProvider/<metadata.name>" for a Turtles
	// CAPIProvider, "" for an operator object.
	Object string
	// Owner is the CAPIProvider that owns an operator object
	// ("CAPIProvider/<name>", metadata.ownerReferences), "" for none;
	// MirrorOf is that CAPIProvider once found.
	Owner              string
	MirrorOf           *Provider
	Version            string          // spec.version
	Selector           *model.Selector // spec.fetchConfig.selector; nil when absent
	FetchOCI, FetchURL string
	// Deployment is spec.deployment, Additional
	// spec.additionalDeployments by Deployment name: the customizations
	// the operator applies to the components' Deployments (customize.go).
	Deployment Override
	Additional map[string]Override
	// InstalledVersion is status.installedVersion.
	InstalledVersion string
	Conditions       []Condition
	// Matches are the ConfigMaps of its namespace its selector matches
	// (nil without a selector).
	Matches []*ConfigMap
	// Stored are the ConfigMaps of its namespace labelled as the
	// operator's own store of spec.version (operator.StoreLabels): where
	// a fetchConfig.oci artifact was copied to.
	Stored []*ConfigMap
}

// ID is "Kind/name".
func (p *Provider) ID() string { return p.Kind + "/" + p.Name }

// Ref names the object in messages: "Kind namespace/name", with the
// CAPIProvider it is for Turtles ("CoreProvider cattle-capi-system/cluster-api
// (CAPIProvider cluster-api)").
func (p *Provider) Ref() string {
	s := fmt.Sprintf("%s %s/%s", p.Kind, p.Namespace, p.Name)
	if p.Object != "" {
		s += " (" + strings.Replace(p.Object, "/", " ", 1) + ")"
	}
	return s
}

// Condition is one of the provider's status conditions.
type Condition struct {
	Type, Status, Reason, Message string
	Since                         time.Time // lastTransitionTime
}

// ConfigMap is a ConfigMap as read from the cluster.
type ConfigMap struct {
	Namespace, Name string
	Labels          map[string]string
	Annotations     map[string]string
	// Components is the "components" entry as stored (binaryData decoded,
	// or data); nil when absent.
	Components         []byte
	ComponentsInBinary bool
	// Metadata is data.metadata; nil when absent.
	Metadata []byte
	// Writers are the field managers of the object (metadata.managedFields).
	Writers []Writer
}

// Writer is one field manager of a ConfigMap: who wrote which part, when.
type Writer struct {
	Manager   string
	Operation string // Update or Apply
	Time      time.Time
	// Content: it owns components or metadata (the entries the operator
	// installs from).
	Content bool
	// Labels: it owns metadata.labels (the writer that made the
	// ConfigMap a provider's: Helm, the operator, a GitOps tool).
	Labels bool
}

// Deployment is a Deployment's name, replicas and containers.
type Deployment struct {
	Namespace, Name string
	Replicas        *int64
	Containers      []Container
}

// Container is a container of a pod template.
type Container struct{ Name, Image string }

// CRD is a CustomResourceDefinition's versions.
type CRD struct {
	Name     string
	Versions []CRDVersion
}

// CRDVersion is one version of a CRD.
type CRDVersion struct {
	Name            string
	Served, Storage bool
}

// Forbidden is a read the API server refused for lack of permission.
type Forbidden struct {
	Verb, Group, Resource string
	Namespace             string // "" for all namespaces or a cluster-scoped resource
	// Check is the check that could not run because of it.
	Check string
	// Message is the API server's.
	Message string
}
