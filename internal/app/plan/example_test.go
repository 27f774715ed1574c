package plan_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/app/plan"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/pkg/bump"
)

// FromUpstream reads the newer releases of every provider of a tree,
// each with the contract its own metadata.yaml declares, and orders the
// bumps. Here a stand-in of GitHub's releases API lists a Cluster API v1.11.1, whose
// series moved to v1beta2 (still serving v1beta1), and a capmox v0.9.1
// that needs v1beta2: the core moves first, then capmox. Each step
// carries the bump safety report of its release's components.
func ExampleFromUpstream() {
	api := releaseapi.Start()
	defer api.Close()
	release := func(tag, provider, asset string, series ...string) releaseapi.Release {
		comp := upstream(provider)
		comp = bytes.ReplaceAll(comp, []byte(":v1.10.1"), []byte(":"+tag))
		comp = bytes.ReplaceAll(comp, []byte(":v0.7.7"), []byte(":"+tag))
		return releaseapi.Release{Tag: tag, Files: []releaseapi.File{
			{Name: asset, Data: comp},
			{Name: "metadata.yaml", Data: releaseapi.Metadata(series...)},
		}}
	}
	api.Add("kubernetes-sigs/cluster-api", release("v1.11.1", "cluster-api", "core-components.yaml", "1.10=v1beta1", "1.11=v1beta2"))
	api.Add("ionos-cloud/cluster-api-provider-proxmox",
		release("v0.9.1", "proxmox", "infrastructure-components.yaml", "0.9=v1beta2"),
		release("v0.7.8", "proxmox", "infrastructure-components.yaml", "0.7=v1beta1"))

	pl, err := plan.FromUpstream(context.Background(), []string{fixture.Root()}, plan.Options{
		Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range pl.Steps {
		fmt.Printf("%s %s -> %s: %s\n", s.Provider, s.From, s.To, s.Why)
		for _, c := range s.Changes {
			fmt.Printf("  %s %s: %s\n", c.Kind, c.Object, c.Detail)
		}
	}
	fmt.Println(len(pl.Blocked), "blocked,", len(pl.Failed), "not checked")
	// Output:
	// CoreProvider/cluster-api v1.10.1 -> v1.11.1: core first: v1.11.1 serves v1beta2, v1beta1, which InfrastructureProvider/proxmox v0.9.1 (v1beta2) needs; every provider of the tree stays served
	//   contract-changed metadata.yaml: release series 1.11 declares contract v1beta2 (1.10 declared v1beta1)
	//   image-changed Deployment/cluster-api-controller-manager: container manager: registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1 -> registry.k8s.io/cluster-api/cluster-api-controller:v1.11.1
	// InfrastructureProvider/proxmox v0.7.7 -> v0.9.1: newest release the core v1.11.1 serves (contract v1beta2)
	//   contract-changed metadata.yaml: release series 0.9 declares contract v1beta2 (0.7 declared v1beta1)
	//   image-changed Deployment/proxmox-controller-manager: container manager: ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.7.7 -> ghcr.io/ionos-cloud/cluster-api-provider-proxmox:v0.9.1
	// 0 blocked, 5 not checked
}

// upstream is the components file the fixture's provider name vendors,
// as upstream releases it (before the package's patches).
func upstream(name string) []byte {
	for _, p := range fixture.CleanPackages() {
		for _, pr := range p.Providers {
			if pr.Name == name {
				return fixture.Components(pr)
			}
		}
	}
	return nil
}

// Make plans from an outdated report alone, with no network: a release
// whose contract no reachable core serves is blocked, with the reason.
func ExampleMake() {
	yes := true
	rep := &outdated.Report{
		Core: &outdated.Core{Provider: "CoreProvider/cluster-api", Version: "v1.10.1", Contract: "v1beta1", Serves: []string{"v1beta1"}},
		Providers: []outdated.Provider{
			{Provider: "CoreProvider/cluster-api", Root: "packages/system", Package: "capi-providers-core", Version: "v1.10.1", Contract: "v1beta1"},
			{Provider: "InfrastructureProvider/proxmox", Root: "packages/system", Package: "capi-providers-infraprovider", Version: "v0.7.7", Contract: "v1beta1",
				Newer: []outdated.Release{
					{Tag: "v0.9.1", Contract: "v1beta2"},
					{Tag: "v0.7.8", Contract: "v1beta1", Compatible: &yes},
				}},
		},
	}
	// Without pins (Target) a provider gets no step: these pin no source
	// the bump would download.
	for i := range rep.Providers {
		rep.Providers[i].Target = &bump.Target{Version: rep.Providers[i].Version}
	}
	pl := plan.Make(rep, "")
	for _, s := range pl.Steps {
		fmt.Println(strings.Join(strings.Fields(s.Command)[:9], " "))
	}
	for _, b := range pl.Blocked {
		fmt.Printf("blocked %s: %s\n", b.Release, b.Reason)
	}
	// Output:
	// builder bump packages/system/capi-providers-infraprovider --provider InfrastructureProvider/proxmox --to v0.7.8 --tree packages/system
	// blocked v0.9.1: v0.9.1 needs contract v1beta2; core v1.10.1 (the newest the plan reaches) serves v1beta1
}
