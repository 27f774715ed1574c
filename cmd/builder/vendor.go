package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/vendor"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/sign"
)

// vendorOptions are the flags of `builder vendor`.
type vendorOptions struct {
	provider, apiURL, toOCI, output     string
	values, sha256, allowHosts, mirrors []string
	tofu, verbose                       bool
	sign                                signFlags
	timeout                             time.Duration
	retries                             int
	maxBytes                            int64
}

func newVendorCmd() *cobra.Command {
	o := &vendorOptions{}
	cmd := &cobra.Command{
		Use:   "vendor DIR [--provider Kind/name] [--to-oci PREFIX --values FILE]",
		Short: "Vendor a provider the operator downloads at install time into a pinned ConfigMap package, or push it as a signed artifact",
		Long: `For a provider of the chart DIR whose bytes nothing holds (no spec.fetchConfig:
the cluster-api-operator resolves it through clusterctl's built-in provider
list; or spec.fetchConfig.url), download what the operator would: the
components file and metadata.yaml of exactly the release spec.version names.

Each file is pinned by SHA-256: --sha256 URL=HEX (or FILE=HEX), else the
release's published checksums file or the asset digest the releases API
gives (they must agree), else, only with --trust-on-first-use, the
download's own (printed). A file whose bytes do not match is refused.

Requests go only to github.com, api.github.com, GitHub's download storage,
the --api-url host and --allow-host hosts (a mirror, a redirect target):
any other is refused before anything is sent to it. Downloads are bounded
by --timeout and --max-bytes. The API token comes from GITHUB_TOKEN.

Then, without --to-oci, write a ConfigMap package into DIR: the vendored
YAML and metadata, the reproducible blob builder build writes, pin.yaml, a
ConfigMap named after the release with its own selector label, and
spec.fetchConfig.selector on the provider (the template edited in place).
The result is rendered and checked before anything is written.

With --to-oci PREFIX, push a signed artifact with provenance (--key, as
builder push) to the reference the chart's own spec.fetchConfig.oci names
when rendered with --values (the platform's registry value), which must be
under PREFIX, and record the pins and vendored files in DIR.

A failed download, a wrong digest or a failed push leaves DIR unchanged.

Exit status: 0 vendored, 1 a download, digest, check or push failed, 2 usage.`,
		Example: `  builder vendor packages/system/capi-providers-core
  builder vendor packages/system/capi-providers-bootstrap --provider BootstrapProvider/talos --sha256 bootstrap-components.yaml=<hex> --sha256 metadata.yaml=<hex>
  COSIGN_PASSWORD=... builder vendor packages/system/capi-providers-core --to-oci registry.example.com/capi --values platform-values.yaml --key cosign.key`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := o.vendorOptions(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runVendor(cmd.Context(), cmd.OutOrStdout(), o, args[0], opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.provider, "provider", "", "Kind/name of the provider to vendor (needed when several providers of DIR download their release)")
	f.StringArrayVar(&o.values, "values", nil, "values file to render the chart with (the platform's, e.g. its registry value): --to-oci pushes to the spec.fetchConfig.oci it then names; a ConfigMap package must hold with it too; repeatable")
	f.StringArrayVar(&o.sha256, "sha256", nil, "URL=HEX or FILE=HEX: the SHA-256 of a file (repeatable)")
	f.BoolVar(&o.tofu, "trust-on-first-use", false, "take the SHA-256 of a file the release publishes none for from the download itself (printed)")
	f.StringVar(&o.apiURL, "api-url", vendor.DefaultAPIURL, "GitHub API root (GitHub Enterprise: https://HOST/api/v3); its host is allowed")
	f.StringArrayVar(&o.allowHosts, "allow-host", nil, "another HOST[:PORT] requests may go to (a mirror, a redirect target); repeatable")
	f.StringArrayVar(&o.mirrors, "mirror", nil, "FROM=TO: fetch URLs starting with FROM from TO instead (repeatable; also "+fetch.MirrorsEnv+"); pins keep the upstream URL; TO's host must be allowed")
	f.DurationVar(&o.timeout, "timeout", fetch.DefaultTimeout, "time limit of one request")
	f.IntVar(&o.retries, "retries", fetch.DefaultRetries, "retries of a failed download")
	f.Int64Var(&o.maxBytes, "max-bytes", fetch.DefaultMaxBytes, "largest file downloaded")
	f.StringVar(&o.toOCI, "to-oci", "", "push to the chart's spec.fetchConfig.oci reference, which must be under PREFIX (HOST[:PORT][/PATH]), instead of writing a ConfigMap")
	addSignFlags(f, &o.sign, "cosign private key to sign and attest the pushed artifact with (password in $COSIGN_PASSWORD)", "talk plain HTTP to the registry (also when the chart's reference starts with http://)")
	f.StringVar(&o.output, "output", "human", "output format: human or json (schema: api/vendor.schema.json)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log each step to stderr")
	return cmd
}

// vendorOptions turns the flags into the library's options; errors are
// usage errors.
func (o *vendorOptions) vendorOptions(stderr io.Writer) (vendor.Options, error) {
	var opts vendor.Options
	if err := checkOutput(o.output); err != nil {
		return opts, err
	}
	if o.toOCI == "" && o.sign.key != "" {
		return opts, usageError{Err: errors.New("--key signs what --to-oci pushes: give --to-oci PREFIX, or drop --key")}
	}
	shas, err := parseSHA256Flags(o.sha256, "URL=HEX or FILE=HEX")
	if err != nil {
		return opts, err
	}
	ms, err := fetch.ParseMirrors(o.mirrors, os.Getenv(fetch.MirrorsEnv))
	if err != nil {
		return opts, usageError{Err: err}
	}
	format, err := o.sign.format()
	if err != nil {
		return opts, err
	}
	opts = vendor.Options{
		Provider: o.provider, Values: o.values, SHA256: shas, TrustOnFirstUse: o.tofu,
		APIURL: o.apiURL, Token: strings.TrimSpace(os.Getenv(vendor.TokenEnv)),
		AllowHosts: o.allowHosts, Mirrors: ms, MaxBytes: o.maxBytes, Timeout: o.timeout, Retries: o.retries,
		ToOCI:          o.toOCI,
		Registry:       artifact.Options{PlainHTTP: o.sign.plainHTTP, Retries: fetch.DefaultRetries},
		Sign:           sign.Options{Format: format},
		BuilderVersion: version.Version,
		Logger:         newLogger(stderr, o.verbose, slog.LevelInfo),
	}
	if o.sign.key != "" {
		if fi, err := os.Stat(o.sign.key); err != nil || fi.IsDir() {
			if err == nil {
				err = errors.New("is a directory")
			}
			return opts, usageError{Err: fmt.Errorf("--key %s: %w (make a key pair with `builder keygen` or `cosign generate-key-pair`)", o.sign.key, err)}
		}
		if opts.Key, err = loadKey(stderr, o.sign.key); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

func runVendor(ctx context.Context, stdout io.Writer, o *vendorOptions, dir string, opts vendor.Options) error {
	ctx, stop := commandContext(ctx)
	defer stop()
	res, err := vendor.Vendor(ctx, dir, opts)
	if errors.Is(err, vendor.ErrWhichProvider) {
		return usageError{Err: err} // the command line did not say which: a usage error
	}
	if err != nil {
		return err
	}
	if o.output == "json" {
		return writeJSON(stdout, res)
	}
	printVendor(stdout, res)
	return nil
}

func printVendor(w io.Writer, r *vendor.Result) {
	fmt.Fprintf(w, "%s %s (%s: %s)\n", r.Provider, r.Release, r.Source, r.Repository)
	for _, d := range r.Digests {
		if d.From == bump.FromTOFU {
			fmt.Fprintf(w, "  TRUSTED ON FIRST USE: %s sha256:%s (compare with the release's published checksums)\n", d.URL, d.SHA256)
			continue
		}
		fmt.Fprintf(w, "  pinned %s sha256:%s (%s)\n", d.URL, d.SHA256, d.From)
	}
	switch r.Form {
	case vendor.FormOCI:
		signed := "unsigned"
		if r.Signed {
			signed = "signed and attested"
		}
		fmt.Fprintf(w, "  pushed %s (tag %s), %s\n", r.Reference, r.Tag, signed)
	default:
		keys := make([]string, 0, len(r.Selector))
		for k, v := range r.Selector {
			keys = append(keys, k+"="+v)
		}
		sort.Strings(keys)
		fmt.Fprintf(w, "  ConfigMap %s, selected by %s\n", r.ConfigMap, strings.Join(keys, ","))
	}
	for _, f := range r.Files {
		fmt.Fprintf(w, "  wrote %s\n", f)
	}
}
