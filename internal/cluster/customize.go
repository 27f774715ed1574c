package cluster

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Override is what a provider object asks the operator to change in one
// Deployment of its components: spec.deployment, or
// spec.additionalDeployments[name].deployment. Only the fields the
// workload check compares are kept (spec.manager sets flags and args,
// which it does not compare).
type Override struct {
	// Replicas is deployment.replicas; nil when unset.
	Replicas *int64
	// Images are deployment.containers[].imageUrl by container name.
	Images map[string]string
}

// overrideOf reads the override at path (a "deployment" map) of u.
func overrideOf(u *unstructured.Unstructured, path ...string) Override {
	var o Override
	if r, ok, _ := unstructured.NestedInt64(u.Object, append(path, "replicas")...); ok {
		o.Replicas = &r
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, append(path, "containers")...)
	for _, c := range cs {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		img, ok := m["imageUrl"].(string)
		if !ok || name == "" {
			continue
		}
		if o.Images == nil {
			o.Images = map[string]string{}
		}
		o.Images[name] = img
	}
	return o
}

// overridesOf reads spec.deployment and spec.additionalDeployments of a
// provider object into p.
func overridesOf(p *Provider, u *unstructured.Unstructured) {
	p.Deployment = overrideOf(u, "spec", "deployment")
	add, _, _ := unstructured.NestedMap(u.Object, "spec", "additionalDeployments")
	for name := range add {
		if p.Additional == nil {
			p.Additional = map[string]Override{}
		}
		p.Additional[name] = overrideOf(u, "spec", "additionalDeployments", name, "deployment")
	}
}

// overrideFor is the override the operator applies to the components'
// Deployment named dep when the components hold n Deployments, modelled
// on cluster-api-operator v0.28.0, internal/controller/component_customizer.go:
// customizeObjectsFn applies spec.deployment to the only Deployment, or,
// when there are several, to those named "ca*-controller-manager"
// (isMultipleDeployments, isProviderManagerDeploymentName); any other
// Deployment gets spec.additionalDeployments[its name] or nothing.
// customizeDeploymentSpec then sets replicas and, through
// customizeContainer, each named container's imageUrl; spec.manager
// (customizeManagerContainer) runs after it but sets no image.
func overrideFor(p *Provider, dep string, n int) (Override, string) {
	if n > 1 && !(strings.HasPrefix(dep, "ca") && strings.HasSuffix(dep, "-controller-manager")) {
		return p.Additional[dep], "spec.additionalDeployments[" + dep + "].deployment"
	}
	return p.Deployment, "spec.deployment"
}
