package load_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/pinseal/pinseal/pkg/load"
)

// Tree loads every provider package under a root into the model the
// checks read: charts rendered, blobs inspected, pins read. What is wrong
// inside the tree is a problem on the model, not an error.
func ExampleTree() {
	tree, err := load.Tree(context.Background(), "../../examples/packages", load.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range tree.Packages {
		for _, prov := range p.Providers {
			fmt.Println(p.Path, prov.ID(), prov.Version)
		}
	}
	fmt.Println("core package:", tree.Core.Path)
	// Output:
	// capi-providers-core CoreProvider/cluster-api v1.10.1-core
	// capi-providers-infraprovider InfrastructureProvider/proxmox v0.7.7-infraprovider-proxmox
	// core package: capi-providers-core
}
