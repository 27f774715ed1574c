// Package cli holds what the builder and verifier commands share.
//
// That is the exit
// code convention (0 ok, 1 failed, 2 usage) and the root command settings.
package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/profile"
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
// Records of the standard log package (Helm writes its warnings there,
// with a chart's value keys in them) go through slog's text handler on
// stderr, which quotes them: a key with a newline cannot forge a record
// (slog.SetDefault sends the standard log package to the new default).
// A command with its own logger (serve) makes it the default instead.
func Main(root *cobra.Command) {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	stop := profile.FromEnv()
	err := root.Execute()
	stop()
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
