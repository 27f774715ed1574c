// Command builder turns pinned upstream provider manifests into vendored
// YAML, a reproducible gzip blob and a signed OCI artifact.
package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/cli"
	"github.com/pinseal/pinseal/internal/app/vendor"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/sign"
)

// usageError marks errors that exit with code 2.
type usageError = cli.UsageError

func newRootCmd() *cobra.Command {
	return cli.AddHints(cli.NewRoot("builder", "Build, push and sign Cluster API provider packages from pinned upstream files", commands()...), slices.Concat(cli.RegistryHints, hints)...)
}

// hints say what to do about library errors with the builder's flags.
var hints = []cli.Hint{
	{Err: fetch.ErrOffline, Text: "run once without --offline to fill the download cache"},
	{Err: fetch.ErrTooLarge, Text: "raise --max-bytes only if the file really is that big"},
	{Err: sign.ErrKeyExists, Text: "choose another --output-key-prefix"},
	{Err: bump.ErrNoDigest, Text: "pass --sha256 URL=<hex> (from the release's published checksums), or --trust-on-first-use to take the digest of what is downloaded now"},
	{Err: bump.ErrWhichProvider, Text: "say which with --provider Kind/name"},
	{Err: vendor.ErrWhichProvider, Text: "say which with --provider Kind/name"},
}

func main() {
	// build and push load packages as the verifier does: charts render in
	// a bounded child process, which is this binary in a hidden mode.
	render.MaybeRunChild()
	cli.Main(newRootCmd())
}
