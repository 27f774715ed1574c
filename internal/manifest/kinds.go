package manifest

import (
	"strings"

	"github.com/pinseal/pinseal/pkg/model"
)

// operatorGroup is the API group of the provider kinds.
const operatorGroup = "operator.cluster.x-k8s.io"

// IsProvider reports whether o is a cluster-api-operator provider object
// or a Rancher Turtles CAPIProvider (which the checks see as the operator
// kind of its spec.type).
func IsProvider(o *Object) bool {
	group, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return false
	}
	switch group {
	case operatorGroup:
		return model.ProviderKinds[o.Kind] != ""
	case model.TurtlesAPIGroup:
		return o.Kind == model.CAPIProviderKind
	}
	return false
}

// IsClusterctlConfig reports whether o is Rancher Turtles' clusterctl
// config: the clusterctl-config ConfigMap with its clusterctl.yaml, or a
// ClusterctlConfig (turtles-capi.cattle.io), whose provider URLs override
// where Turtles downloads a CAPIProvider with no spec.fetchConfig from.
func IsClusterctlConfig(o *Object) bool {
	if o.Kind == "ConfigMap" && o.APIVersion == "v1" {
		return o.Name == model.ClusterctlConfigName && LookupPath(o.Root, "data", "clusterctl.yaml") != nil
	}
	group, _, _ := strings.Cut(o.APIVersion, "/")
	return group == model.TurtlesAPIGroup && o.Kind == "ClusterctlConfig"
}

// Kept reports whether the loader keeps o: a provider, a components
// ConfigMap or a Turtles clusterctl config.
func Kept(o *Object) bool {
	return IsProvider(o) || IsComponentsConfigMap(o) || IsClusterctlConfig(o)
}

// isComponentsConfigMap reports whether o is a ConfigMap holding provider
// components (binaryData.components or data.components).
func IsComponentsConfigMap(o *Object) bool {
	if o.Kind != "ConfigMap" || o.APIVersion != "v1" {
		return false
	}
	return LookupPath(o.Root, "binaryData", "components") != nil || LookupPath(o.Root, "data", "components") != nil
}
