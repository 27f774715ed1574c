package changes_test

import (
	"fmt"
	"log"

	"github.com/pinseal/pinseal/pkg/changes"
)

// Compare reads two releases of a provider's components and metadata and
// lists what changes for the clusters running them. Here a release drops
// a served CRD version with no conversion webhook (breaking), moves its
// image, reads Secrets and needs a new variable.
func ExampleCompare() {
	before := changes.Release{Version: "v0.7.7", Components: []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: proxmoxclusters.infrastructure.cluster.x-k8s.io
spec:
  versions:
  - {name: v1alpha1, served: true, storage: true}
---
kind: ClusterRole
metadata:
  name: capmox-manager-role
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
---
kind: Deployment
metadata:
  name: capmox-controller-manager
  namespace: capmox-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7
`)}
	after := changes.Release{Version: "v0.8.0", Components: []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: proxmoxclusters.infrastructure.cluster.x-k8s.io
spec:
  versions:
  - {name: v1alpha1, served: false, storage: false}
  - {name: v1alpha2, served: true, storage: true}
---
kind: ClusterRole
metadata:
  name: capmox-manager-role
rules:
- {apiGroups: [""], resources: [configmaps, secrets], verbs: [get]}
---
kind: Deployment
metadata:
  name: capmox-controller-manager
  namespace: capmox-system
spec:
  template:
    spec:
      containers:
      - name: manager
        image: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.8.0
        env:
        - {name: PROXMOX_TOKEN, value: "${PROXMOX_TOKEN}"}
`)}
	cs, err := changes.Compare(before, after, changes.Options{Served: []string{"v1beta1"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range cs {
		fmt.Printf("%s %s breaking=%v\n  %s\n", c.Kind, c.Object, c.Breaking, c.Detail)
	}
	// Output:
	// crd-version-removed CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io breaking=true
	//   version v1alpha1 is no longer served (still served: v1alpha2) and there is no conversion webhook: objects stored and clients written as v1alpha1 fail
	// crd-storage-changed CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io breaking=false
	//   storage version v1alpha1 -> v1alpha2: objects stored as v1alpha1 stay so until rewritten (status.storedVersions)
	// image-changed Deployment/capmox-controller-manager breaking=false
	//   container manager: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7 -> ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.8.0
	// rbac-widened ClusterRole/capmox-manager-role breaking=false
	//   allows get on secrets; Secrets included: the provider can now reach credentials
	// variable-added ${PROXMOX_TOKEN} breaking=false
	//   new variable without a default: give it in the provider's spec.configSecret, or the operator cannot install the components
}
