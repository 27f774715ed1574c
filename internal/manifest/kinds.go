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

// isComponentsConfigMap reports whether o is a ConfigMap holding provider
// components (binaryData.components or data.components).
func IsComponentsConfigMap(o *Object) bool {
	if o.Kind != "ConfigMap" || o.APIVersion != "v1" {
		return false
	}
	return LookupPath(o.Root, "binaryData", "components") != nil || LookupPath(o.Root, "data", "components") != nil
}
