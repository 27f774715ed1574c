package cluster

import "strings"

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
