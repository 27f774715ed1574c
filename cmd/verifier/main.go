// Command verifier checks that the blob, YAML, ConfigMap name, spec.version,
// pins, registry copy, signature and provenance of provider packages agree.
package main

import (
	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/cli"
	"github.com/pinseal/pinseal/pkg/load"
)

// usageError marks errors that exit with code 2.
type usageError = cli.UsageError

func newRootCmd() *cobra.Command {
	return cli.NewRoot("verifier", "Verify Cluster API provider packages: blobs, YAML, versions, pins, registry copies, signatures", commands()...)
}

func main() {
	// First: the bounded chart-render child is this binary run again.
	load.MaybeRunRenderChild()
	cli.Main(newRootCmd())
}
