package main

import "github.com/spf13/cobra"

// commands lists the subcommands; each lives in its own file.
func commands() []*cobra.Command {
	return []*cobra.Command{
		newAddCmd(),
		newBuildCmd(),
		newBumpCmd(),
		newOutdatedCmd(),
		newPlanCmd(),
		newImagesCmd(),
		newRelocateCmd(),
		newPushCmd(),
		newKeygenCmd(),
		newVendorCmd(),
	}
}
