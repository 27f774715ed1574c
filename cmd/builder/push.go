package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/release"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
)

// pushOptions are the flags of `builder push`.
type pushOptions struct {
	to      string
	policy  string
	sign    signFlags
	tlog    bool
	format  sign.Format
	json    bool
	verbose bool
}

func newPushCmd() *cobra.Command {
	o := &pushOptions{}
	cmd := &cobra.Command{
		Use:   "push [DIR...] --to PREFIX",
		Short: "Push each provider release of the packages as a reproducible OCI artifact, signed and attested with --key",
		Long:  pushLong,
		Example: `  builder push examples/packages/* --to oci-layout:out/oci
  COSIGN_PASSWORD=... builder push packages/system/capi-providers-* --to ghcr.io/acme/capi --key cosign.key
  builder push . --to 127.0.0.1:5000/capi --plain-http`,
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix, err := o.validate()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			return runPush(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, prefix, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.to, "to", "", "where to push: HOST[:PORT]/PATH or oci-layout:DIR")
	f.StringVar(&o.policy, "policy", "", "verification policy whose severities and waivers decide which offline findings refuse a provider (default: the built-in policies/default.yaml)")
	addSignFlags(f, &o.sign, "cosign private key to sign and attest with (password in $COSIGN_PASSWORD)", "talk plain HTTP to the registry (a loopback registry)")
	f.BoolVar(&o.tlog, "tlog", false, "also upload to a transparency log (not supported: refused before anything is pushed, saying how to do it with cosign)")
	f.BoolVar(&o.json, "json", false, "print the results as JSON")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log each step to stderr")
	return cmd
}

// pushLong is the help text of `builder push`.
const pushLong = `Push one OCI artifact per provider release of each package DIR (default ".")
to repository PREFIX/<type>-<name> with tag = release. PREFIX is
HOST[:PORT]/PATH for a registry or oci-layout:DIR for OCI image layout
directories (one per repository).

No pin file is needed: without a pin.yaml, the releases are what the verifier
sees in the package (one per provider object, release = spec.version, its
ConfigMap's blob and the vendored YAML and metadata the package layout pairs
with it); with one, the files its pins name. The package's offline checks
gate the push: a provider with error findings (under --policy, else the
built-in policy; waived findings do not count) is refused, its findings are
printed, and no tag is written for it.

The artifact holds components.gz (the vendored blob, byte for byte),
metadata.yaml and components.yaml (the raw YAML, which every
cluster-api-operator release with fetchConfig.oci support installs for every
kind); the same package always gives the same digest.
A release tag that already holds other content is refused (releases are
immutable); the same content is left alone. A failed push never writes or
moves a tag; run it again to complete it.

With --key (from ` + "`builder keygen`" + ` or ` + "`cosign generate-key-pair`" + `; password in
$COSIGN_PASSWORD) the manifest digest is signed and a SLSA provenance v1
attestation of the pinned sources is attached, both stored as cosign stores
them, without a transparency log, before the release tag is written. With
--signature-format bundle (the default) they are Sigstore bundles (v0.3,
DSSE) attached to the artifact as OCI referrers, as cosign v3 writes them
(through the registry's referrers API, or the sha256-<hex> referrers tag
on a registry without it); with legacy they are cosign v2's
sha256-<hex>.sig and .att images, for old cosign readers. A
wrong password or a refused signature leaves no unsigned release tag. An existing valid signature or attestation
by the same key is not repeated. Registry credentials come from the docker
config and its credential helpers.

Exit status: 0 pushed (or already there), 1 a release failed or was refused, 2 usage.`

// validate checks the flags before anything is pushed, returning the
// parsed --to.
func (o *pushOptions) validate() (artifact.Prefix, error) {
	if o.to == "" {
		return artifact.Prefix{}, usageError{Err: errors.New("--to PREFIX is required (HOST[:PORT]/PATH or oci-layout:DIR)")}
	}
	prefix, err := artifact.ParsePrefix(o.to)
	if err != nil {
		return artifact.Prefix{}, usageError{Err: err}
	}
	if o.format, err = o.sign.format(); err != nil {
		return artifact.Prefix{}, err
	}
	if o.tlog && o.sign.key == "" {
		return artifact.Prefix{}, usageError{Err: errors.New("--tlog needs --key")}
	}
	if o.sign.key != "" {
		// A key that is not there fails before anything is pushed.
		if err := sign.CheckKeyFile(o.sign.key); err != nil {
			return artifact.Prefix{}, usageError{Err: fmt.Errorf("--key %w", err)}
		}
	}
	if o.tlog {
		// Refused before anything is pushed, so no unsigned tag is left.
		return artifact.Prefix{}, fmt.Errorf("--tlog: %w; nothing was pushed", errTLogUnsupported)
	}
	if o.policy != "" {
		if _, err := policy.Load(o.policy); err != nil {
			return artifact.Prefix{}, usageError{Err: fmt.Errorf("--policy: %w", err)}
		}
	}
	return prefix, nil
}

// errTLogUnsupported refuses --tlog: pinseal signs offline with a key and
// uploads nothing to a transparency log; the message says how to log the
// pushed digest with cosign instead.
var errTLogUnsupported = errors.New("transparency log upload is not supported: pinseal signs offline with a key (verify it with `cosign verify --key cosign.pub --insecure-ignore-tlog REPO@DIGEST`); to also log to Rekor, run `cosign sign --key cosign.key REPO@DIGEST` on the pushed digest")

// pushResult is one release's outcome, as printed with --json.
type pushResult = release.PushResult

func runPush(ctx context.Context, stdout, stderr io.Writer, o *pushOptions, prefix artifact.Prefix, dirs []string) error {
	ctx, stop := commandContext(ctx)
	defer stop()
	opts := release.PushOptions{
		Prefix:         prefix,
		Registry:       artifact.Options{PlainHTTP: o.sign.plainHTTP, Retries: fetch.DefaultRetries},
		Sign:           sign.Options{Format: o.format},
		BuilderVersion: version.Version,
		Logger:         newLogger(stderr, o.verbose, slog.LevelInfo),
		OnResult: func(r pushResult) {
			if r.Error != "" {
				fmt.Fprintln(stderr, "builder:", r.Error)
			}
			if !o.json && !r.PackageError() {
				printPush(stdout, r)
			}
		},
	}
	if o.sign.key != "" {
		var err error
		if opts.Key, err = loadKey(stderr, o.sign.key); err != nil {
			return err
		}
	}
	if o.policy != "" {
		var err error
		if opts.Policy, err = policy.Load(o.policy); err != nil {
			return err
		}
	}
	results, err := release.Push(ctx, dirs, opts)
	var ke *sign.KeyError
	if errors.As(err, &ke) {
		return err
	}
	if o.json {
		if results == nil {
			results = []pushResult{}
		}
		if err := writeJSON(stdout, results); err != nil {
			return err
		}
	}
	return err
}

func printPush(w io.Writer, r pushResult) {
	if r.Skipped != "" {
		fmt.Fprintf(w, "%-11s %s %s: %s\n", "skipped", r.Package, r.Provider, r.Skipped)
		return
	}
	if len(r.Refused) > 0 {
		fmt.Fprintf(w, "%-11s %s %s: not pushed, no tag written\n", "refused", r.Package, r.Provider)
		printFindings(w, "", r.Refused)
		printFindings(w, "warning ", r.Warnings)
		return
	}
	if r.Error != "" {
		fmt.Fprintf(w, "%-11s %s %s\n", "failed", r.Package, r.Release)
		return
	}
	note := ""
	if r.Built != "" {
		note = "  # same content as this build (" + r.Built + ")"
	}
	fmt.Fprintf(w, "%-11s %s%s\n", r.Status, r.Reference, note)
	if r.Signature != nil {
		fmt.Fprintf(w, "  signature   %-8s %s\n", r.Signature.Status, r.Signature.Where())
	}
	if r.Attestation != nil {
		fmt.Fprintf(w, "  provenance  %-8s %s\n", r.Attestation.Status, r.Attestation.Where())
	}
	if r.Reencoded != "" {
		fmt.Fprintf(w, "  components.gz is the reproducible encoding (gzip -9 -n) of the YAML, not %s, whose header is not reproducible; `builder build` writes the same bytes there\n", r.Reencoded)
	}
	printFindings(w, "warning ", r.Warnings)
}

// printFindings prints findings of a push result, each with its fix.
func printFindings(w io.Writer, prefix string, fs []report.Finding) {
	for _, f := range fs {
		loc := f.File
		if loc != "" && f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, f.Line)
		}
		fmt.Fprintf(w, "  %-20s %s %s\n", prefix+f.Check, loc, f.Message)
		if f.Hint != "" {
			fmt.Fprintf(w, "  %-20s fix: %s\n", "", f.Hint)
		}
	}
}
