// Command verifier checks that the blob, YAML, ConfigMap name, spec.version,
// pins, registry copy, signature and provenance of provider packages agree.
package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/cli"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// usageError marks errors that exit with code 2.
type usageError = cli.UsageError

func newRootCmd() *cobra.Command {
	return cli.AddHints(cli.NewRoot("verifier", "Verify Cluster API provider packages: blobs, YAML, versions, pins, registry copies, signatures", commands()...), slices.Concat(cli.RegistryHints, hints)...)
}

// hints say what to do about library errors with the verifier's flags.
var hints = []cli.Hint{
	{Err: verify.ErrNoTrustedKeys, Text: "pass --key cosign.pub, or list public keys under `keys:` (or keyless signers under `identities:`) in the --policy file"},
	{Err: artifact.ErrHostNotAllowed, Text: "to allow a host the registry sends you to, pass --allow-host HOST"},
}

// settingFlags name the settings a finding's hint asks to change by the
// verifier's flags (writeReport appends them to the hint; a command names
// only the flags it has).
var settingFlags = map[report.Setting]cli.SettingFlag{
	report.SettingPlainHTTP:       {Flag: "plain-http"},
	report.SettingAllowRegistry:   {Flag: "allow-registry"},
	report.SettingTrustedKeys:     {Flag: "key", Name: "--key, or `keys:` in the --policy file"},
	report.SettingInflateLimit:    {Flag: "max-inflate"},
	report.SettingRenderTimeout:   {Flag: "render-timeout"},
	report.SettingRenderMaxMemory: {Flag: "render-max-memory"},
	report.SettingRenderMaxOutput: {Flag: "render-max-output"},
}

func main() {
	// First: the bounded chart-render child is this binary run again.
	render.MaybeRunChild()
	useFallbackRoots()
	cli.Main(newRootCmd())
}
