package add_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/app/add"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

// Add capmox beside the example tree's core provider (CAPI v1.10.1,
// contract v1beta1), from a stand-in of GitHub's releases API on
// 127.0.0.1 whose newest release declares contract v1beta2.
func Example() {
	tmp, err := os.MkdirTemp("", "add-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "packages")
	if err := fixture.CopyDir("../../../examples/packages/capi-providers-core", filepath.Join(root, "capi-providers-core")); err != nil {
		panic(err)
	}
	comp, err := os.ReadFile("../../../examples/upstream/cluster-api-provider-proxmox/v0.7.7/infrastructure-components.yaml")
	if err != nil {
		panic(err)
	}
	host := releaseapi.Start()
	defer host.Close()
	const repo = "ionos-cloud/cluster-api-provider-proxmox"
	host.Add(repo,
		releaseapi.Release{Tag: "v0.9.1", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.9=v1beta2")}}},
		releaseapi.Release{Tag: "v0.7.7", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}}},
	)

	res, err := add.Add(context.Background(), filepath.Join(root, "capi-providers-infraprovider"), add.Options{
		Provider: "InfrastructureProvider/proxmox", Repo: repo,
		APIURL: host.URL(), AllowHosts: []string{host.ObjectsHost()},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Provider, res.Release, "contract", res.Contract)
	for _, p := range res.PassedOver {
		fmt.Println("passed over:", p.Reason)
	}
	fmt.Println("shaped like", res.Sibling, "pins in", res.Pins, "selector", res.Selector)
	for _, f := range res.Files {
		fmt.Println(f.Path)
	}
	// Output:
	// InfrastructureProvider/proxmox v0.7.7-infraprovider-proxmox contract v1beta1
	// passed over: v0.9.1 needs contract v1beta2; core v1.10.1 serves v1beta1
	// shaped like capi-providers-core pins in pin.yaml selector map[infrastructure-components:cozy infrastructure-provider:proxmox]
	// Chart.yaml
	// .helmignore
	// Makefile
	// pin.yaml
	// files/infrastructure-components.yaml
	// files/metadata.yaml
	// files/components.gz
	// templates/configmaps.yaml
	// templates/providers.yaml
}
