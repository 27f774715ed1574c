package cli

import (
	"errors"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/report"
)

// Hint says what to do about a library error in terms of this command's
// flags: libraries return sentinels and typed errors without naming any
// interface, and each interface (the CLI here, the service for its config)
// adds its own hint.
type Hint struct {
	// Err is the sentinel the hint is for (matched with errors.Is).
	Err error
	// Text is appended to the error: "<error>; <Text>".
	Text string
}

// RegistryHints are the hints of the registry client's errors, for every
// command with --plain-http.
var RegistryHints = []Hint{
	{Err: http.ErrSchemeMismatch, Text: "if it is a loopback registry, pass --plain-http"},
	{Err: artifact.ErrURLScheme, Text: "for a plain HTTP registry, drop the scheme and pass --plain-http"},
}

// hinted is an error with the CLI's hint appended; it unwraps to the
// error, so usage errors stay usage errors.
type hinted struct {
	err  error
	hint string
}

func (h hinted) Error() string { return h.err.Error() + "; " + h.hint }
func (h hinted) Unwrap() error { return h.err }

// WithHints appends the hint of each sentinel err matches.
func WithHints(err error, hints []Hint) error {
	if err == nil {
		return nil
	}
	for _, h := range hints {
		if errors.Is(err, h.Err) {
			err = hinted{err: err, hint: h.Text}
		}
	}
	return err
}

// AddHints makes every command under root return its errors WithHints.
func AddHints(root *cobra.Command, hints ...Hint) *cobra.Command {
	for _, c := range root.Commands() {
		AddHints(c, hints...)
	}
	if run := root.RunE; run != nil {
		root.RunE = func(cmd *cobra.Command, args []string) error {
			return WithHints(run(cmd, args), hints)
		}
	}
	if args := root.Args; args != nil {
		root.Args = func(cmd *cobra.Command, a []string) error {
			return WithHints(args(cmd, a), hints)
		}
	}
	return root
}

// SettingFlag names a report setting (report.Setting) by a flag.
type SettingFlag struct {
	// Flag is the flag, without dashes. A command without it does not
	// name the setting.
	Flag string
	// Name is how a hint names the setting; "" means "--Flag".
	Name string
}

// SettingNames are the names of the settings a finding's hint may ask to
// change, as cmd sets them: for report.Report.NameSettings. Libraries name
// a setting in words only; each interface says how it is set there.
func SettingNames(cmd *cobra.Command, flags map[report.Setting]SettingFlag) map[report.Setting]string {
	names := make(map[report.Setting]string, len(flags))
	for s, f := range flags {
		if cmd.Flags().Lookup(f.Flag) == nil {
			continue
		}
		names[s] = f.Name
		if f.Name == "" {
			names[s] = "--" + f.Flag
		}
	}
	return names
}
