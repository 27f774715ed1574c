package remote_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/release"
	"github.com/pinseal/pinseal/pkg/remote"
)

// Attach reads the release artifact of every provider of a loaded tree
// below a prefix and records on the model what it found, for the registry
// checks to judge. Here only the core provider's release was pushed, and
// no key is trusted.
func ExampleAttach() {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	dir, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	prefix, err := artifact.ParsePrefix(artifact.LayoutScheme + dir)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := release.Push(ctx, []string{"../../examples/packages/capi-providers-core"}, release.PushOptions{Prefix: prefix, BuilderVersion: "v0.1.0", Logger: quiet}); err != nil {
		log.Fatal(err)
	}

	tree, err := load.Tree(ctx, "../../examples/packages", load.Options{Workers: 2, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	if err := remote.Attach(ctx, tree, prefix, remote.Options{Logger: quiet}); err != nil {
		log.Fatal(err)
	}
	for _, p := range tree.Packages {
		for _, prov := range p.Providers {
			a := prov.Artifact
			fmt.Printf("%s found: %v, signature: %q\n", prov.ID(), a.Found, a.Signature.Reason)
		}
	}
	// Output:
	// CoreProvider/cluster-api found: true, signature: "no-trusted-keys"
	// InfrastructureProvider/proxmox found: false, signature: ""
}
