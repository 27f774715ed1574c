package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pinseal/pinseal/pkg/sign"
)

func newKeygenCmd() *cobra.Command {
	var prefix string
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Generate a cosign key pair (PREFIX.key encrypted, PREFIX.pub) for signing pushed artifacts",
		Long: `Generate an ECDSA P-256 key pair in cosign's format, as
` + "`cosign generate-key-pair`" + ` does: PREFIX.key (mode 0600, encrypted with the
password) and PREFIX.pub. Existing files are never overwritten.

The password comes from $COSIGN_PASSWORD (it may be set to the empty string),
else it is asked for twice on the terminal.`,
		Example: `  builder keygen
  COSIGN_PASSWORD=... builder keygen --output-key-prefix ci/pinseal`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{Err: fmt.Errorf("keygen takes no arguments (got %q): use --output-key-prefix", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			pw, err := password(cmd.ErrOrStderr(), true)
			if err != nil {
				return err
			}
			keyPath, pubPath, err := sign.WriteKeyPair(prefix, pw)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "private key written to %s\npublic key written to %s\n", keyPath, pubPath)
			return nil
		},
	}
	cmd.Flags().StringVar(&prefix, "output-key-prefix", "cosign", "write PREFIX.key and PREFIX.pub")
	return cmd
}

// password returns $COSIGN_PASSWORD or asks for it on the terminal (twice
// when confirm). Without either it fails rather than guess.
func password(prompt io.Writer, confirm bool) ([]byte, error) {
	if pw, ok := sign.Password(); ok {
		return pw, nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return nil, errors.New("no key password: set " + sign.PasswordEnv + " (it may be empty: " + sign.PasswordEnv + "= builder ...)")
	}
	fmt.Fprint(prompt, "Enter password for private key: ")
	pw, err := term.ReadPassword(fd)
	fmt.Fprintln(prompt)
	if err != nil {
		return nil, fmt.Errorf("read password: %w", err)
	}
	if confirm {
		fmt.Fprint(prompt, "Enter password for private key again: ")
		again, err := term.ReadPassword(fd)
		fmt.Fprintln(prompt)
		if err != nil {
			return nil, fmt.Errorf("read password: %w", err)
		}
		if !bytes.Equal(pw, again) {
			return nil, errors.New("passwords do not match")
		}
	}
	return pw, nil
}
