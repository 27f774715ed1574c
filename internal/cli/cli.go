// Package cli holds what the builder and verifier commands share: the exit
// code convention (0 ok, 1 failed, 2 usage) and the root command settings.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/version"
)

// UsageError marks an error that exits with code 2: a bad flag, argument
// or configuration file.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// NewRoot returns a root command with the shared settings: version, no
// usage dump on errors, flag errors as usage errors.
func NewRoot(use, short string, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           use,
		Short:         short,
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	root.AddCommand(cmds...)
	return root
}

// Main runs root and exits: 0 on success, 2 for a UsageError, else 1.
func Main(root *cobra.Command) {
	err := root.Execute()
	if err == nil {
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
	var ue UsageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}
