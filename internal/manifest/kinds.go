package manifest

import (
	"strings"

	"github.com/pinseal/pinseal/pkg/model"
)

// operatorGroup is the API group of the provider kinds.
const operatorGroup = "operator.cluster.x-k8s.io"

// isProvider reports whether o is a cluster-api-operator provider object.
func IsProvider(o *Object) bool {
	group, _, ok := strings.Cut(o.APIVersion, "/")
	return ok && group == operatorGroup && model.ProviderKinds[o.Kind] != ""
}

// isComponentsConfigMap reports whether o is a ConfigMap holding provider
// components (binaryData.components or data.components).
func IsComponentsConfigMap(o *Object) bool {
	if o.Kind != "ConfigMap" || o.APIVersion != "v1" {
		return false
	}
	return LookupPath(o.Root, "binaryData", "components") != nil || LookupPath(o.Root, "data", "components") != nil
}
