package model_test

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/model"
)

// A provider is named in findings by its ID, and its releases live in the
// repository its clusterctl type and name give, below a registry prefix.
func ExampleProvider() {
	for _, p := range []*model.Provider{
		{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1"},
		{Kind: "InfrastructureProvider", Name: "proxmox", Version: "v0.7.7"},
		{Kind: "ControlPlaneProvider", Name: "talos", Object: "CAPIProvider/talos-cp"},
	} {
		fmt.Println(p.ID(), p.Type(), p.RepositoryName(), p.Turtles())
	}
	// Output:
	// CoreProvider/cluster-api core core-cluster-api false
	// InfrastructureProvider/proxmox infrastructure infrastructure-proxmox false
	// ControlPlaneProvider/talos control-plane control-plane-talos true
}
