package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/pkg/release"
	"github.com/pinseal/pinseal/pkg/sign"
)

// commandContext is ctx (Background when a test runs the command without
// one) cancelled on SIGINT or SIGTERM, so an interrupted command stops
// before its next write.
func commandContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// newLogger logs warnings to w, and with --verbose everything from
// verboseLevel up.
func newLogger(w io.Writer, verbose bool, verboseLevel slog.Level) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = verboseLevel
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// writeJSON prints v indented, as every --output json does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// checkOutput refuses an --output that is neither human nor json.
func checkOutput(output string) error {
	if output != "human" && output != "json" {
		return usageError{Err: fmt.Errorf("--output %q: want human or json", output)}
	}
	return nil
}

// apiFlags are the GitHub API flags outdated and plan share.
type apiFlags struct {
	apiURL  string
	allow   []string
	verbose bool
}

// addAPIFlags adds --api-url, --allow-host and --verbose; the help of the
// last two says what the command does with them.
func addAPIFlags(f *pflag.FlagSet, a *apiFlags, allowUsage, verboseUsage string) {
	f.StringVar(&a.apiURL, "api-url", outdated.DefaultAPIURL, "GitHub REST API root (GitHub Enterprise: https://HOST/api/v3)")
	f.StringArrayVar(&a.allow, "allow-host", nil, allowUsage)
	f.BoolVarP(&a.verbose, "verbose", "v", false, verboseUsage)
}

// options are the API options of the flags: the token from GITHUB_TOKEN
// (never a flag), each request logged to stderr with --verbose.
func (a *apiFlags) options(stderr io.Writer) outdated.Options {
	return outdated.Options{
		APIURL:     a.apiURL,
		AllowHosts: a.allow,
		Token:      strings.TrimSpace(os.Getenv(outdated.TokenEnv)),
		Logger:     newLogger(stderr, a.verbose, slog.LevelDebug),
	}
}

// runLookup runs a command that reads the GitHub API for the trees under
// args (default "."): check looks up, the report is printed as --output
// says, and exit turns it into the command's exit error.
func runLookup[R any](cmd *cobra.Command, args []string, output string, check func(context.Context, []string) (R, error), print func(io.Writer, R), exit func(R) error) error {
	if err := checkOutput(output); err != nil {
		return err
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	ctx, stop := commandContext(cmd.Context())
	defer stop()
	rep, err := check(ctx, args)
	if err != nil {
		return usageError{Err: err}
	}
	if output == "json" {
		if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
			return err
		}
	} else {
		print(cmd.OutOrStdout(), rep)
	}
	return exit(rep)
}

// parseSHA256Flags turns the --sha256 KEY=HEX flags into a map, the hex
// lower-cased; want names the form in the error.
func parseSHA256Flags(vals []string, want string) (map[string]string, error) {
	shas := map[string]string{}
	for _, s := range vals {
		i := strings.LastIndex(s, "=")
		if i <= 0 || i == len(s)-1 {
			return nil, usageError{Err: fmt.Errorf("--sha256 %q: want %s", s, want)}
		}
		shas[s[:i]] = strings.ToLower(s[i+1:])
	}
	return shas, nil
}

// loadKey asks for the password of the --key file (COSIGN_PASSWORD or the
// terminal) and starts decrypting the key while the command goes on.
func loadKey(stderr io.Writer, path string) (func() (*sign.PrivateKey, error), error) {
	pw, err := password(stderr, false)
	if err != nil {
		return nil, err
	}
	return release.LoadKeyAsync(path, pw), nil
}

// signFlags are the signing and registry flags push and vendor share.
type signFlags struct {
	key, sigFormat string
	plainHTTP      bool
}

// addSignFlags adds --key, --plain-http and --signature-format; the help
// of the first two says what the command signs and where it pushes.
func addSignFlags(f *pflag.FlagSet, s *signFlags, keyUsage, plainHTTPUsage string) {
	f.StringVar(&s.key, "key", "", keyUsage)
	f.BoolVar(&s.plainHTTP, "plain-http", false, plainHTTPUsage)
	f.StringVar(&s.sigFormat, "signature-format", string(sign.FormatBundle), "how --key stores the signature and provenance: bundle (Sigstore bundles as OCI referrers, cosign v3) or legacy (sha256-<hex>.sig/.att tags, cosign v2)")
}

// format parses --signature-format.
func (s *signFlags) format() (sign.Format, error) {
	format, err := sign.ParseFormat(s.sigFormat)
	if err != nil {
		return "", usageError{Err: fmt.Errorf("--signature-format: %w", err)}
	}
	return format, nil
}
