// Command builder turns pinned upstream provider manifests into vendored
// YAML, a reproducible gzip blob and a signed OCI artifact.
package main

import (
	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/cli"
	"github.com/pinseal/pinseal/pkg/load"
)

// usageError marks errors that exit with code 2.
type usageError = cli.UsageError

func newRootCmd() *cobra.Command {
	return cli.NewRoot("builder", "Build, push and sign Cluster API provider packages from pinned upstream files", commands()...)
}

func main() {
	// build and push load packages as the verifier does: charts render in
	// a bounded child process, which is this binary in a hidden mode.
	load.MaybeRunRenderChild()
	cli.Main(newRootCmd())
}
