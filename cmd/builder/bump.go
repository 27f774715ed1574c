package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/changes"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// bumpOptions are the flags of `builder bump`.
type bumpOptions struct {
	provider string
	to       string
	release  string
	sha256   []string
	tofu     bool
	dryRun   bool
	breaking bool
	output   string
	tree     string
	mirrors  []string
	cache    string
	timeout  time.Duration
	maxBytes int64
	allow    []string
	retries  int
	verbose  bool
}

func newBumpCmd() *cobra.Command {
	o := &bumpOptions{}
	cmd := &cobra.Command{
		Use:   "bump DIR --to vX.Y.Z",
		Short: "Move a provider to a new upstream release: pins, vendored files, blob, ConfigMap name and spec.version in one verified step",
		Long: `Bump one provider of the package DIR to the upstream release --to. Every
place the version lives changes together: pin.yaml (version, release, source
URLs and SHA-256), Makefile version variables and literal URLs/digests, a
Dockerfile ARG VERSION=, the ConfigMap name, spec.version, the
provider.cluster.x-k8s.io/version label and the values.yaml keys the templates
read it from. The release name keeps its suffix (v0.6.12-bootstrap-talos ->
v0.6.13-bootstrap-talos) unless --release sets it.

Pins are never guessed: each new file's SHA-256 comes from --sha256 URL=HEX or,
only with --trust-on-first-use, from the download itself (printed). Patches
are re-applied, the blob rebuilt, and the offline checks (blob-yaml,
configmap-version, pin-version, pin-digest, metadata-series, contract,
selector-*) run on the staged package in its tree before any file is renamed
into place. A refused, failed or killed bump leaves the package as it was (a
killed one is restored by the next bump).

Every bump (and --dry-run) reports what the new release changes for the
clusters running the old one, comparing the vendored components and
metadata before and after: crd-version-removed, crd-storage-changed,
crd-conversion-removed, contract-changed, image-changed, rbac-widened
(Secrets called out), variable-added (a clusterctl variable without a
default the provider's configSecret must now give), namespace-changed. A
breaking change (a served CRD version gone without a conversion webhook, a
contract the core does not serve) refuses the bump, naming the object and
the version, unless --allow-breaking.

Exit status: 0 bumped (or would bump), 1 refused or failed (nothing changed), 2 usage.`,
		Example: `  builder bump packages/system/capi-providers-bootstrap --provider BootstrapProvider/talos --to v0.6.13 \
      --sha256 https://github.com/siderolabs/cluster-api-bootstrap-provider-talos/releases/download/v0.6.13/bootstrap-components.yaml=<hex> \
      --sha256 https://github.com/siderolabs/cluster-api-bootstrap-provider-talos/releases/download/v0.6.13/metadata.yaml=<hex>
  builder bump packages/system/capi-providers-kubevirt --to v0.1.10 --release v0.1.10-cozystack.0 --trust-on-first-use --dry-run
  builder bump . --to v0.7.8 --mirror https://github.com/=https://artifacts.example.com/github/ --output json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{Err: fmt.Errorf("give exactly one package directory, got %d", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.to == "" {
				return usageError{Err: fmt.Errorf("--to is required: the upstream release to move to, e.g. --to v1.2.3")}
			}
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if o.timeout <= 0 {
				return usageError{Err: fmt.Errorf("--timeout must be positive, got %s", o.timeout)}
			}
			return runBump(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.provider, "provider", "", "Kind/name of the provider to bump (needed when the package has several)")
	f.StringVar(&o.to, "to", "", "upstream release to move to, e.g. v0.6.13")
	f.StringVar(&o.release, "release", "", "new release name (ConfigMap name and spec.version); default: --to plus the current suffix")
	f.StringArrayVar(&o.sha256, "sha256", nil, "URL=HEX: the SHA-256 of a new source (repeatable; URL as written in the pin)")
	f.BoolVar(&o.tofu, "trust-on-first-use", false, "take the SHA-256 of a source without --sha256 from the download itself (printed)")
	f.BoolVar(&o.dryRun, "dry-run", false, "do everything but write: print the diff of each text file and the vendored files that would change")
	f.BoolVar(&o.breaking, "allow-breaking", false, "bump even when the new release breaks what clusters run today (a served CRD version gone without conversion, a contract the core does not serve)")
	f.StringVarP(&o.output, "output", "o", "human", "output format: human or json (schema: api/bump.schema.json)")
	f.StringVar(&o.tree, "tree", "", "root of the tree holding the core provider (default: the nearest directory above DIR with .git)")
	addFetchFlags(f, &o.mirrors, &o.cache, &o.timeout, &o.retries)
	f.Int64Var(&o.maxBytes, "max-bytes", fetch.DefaultMaxBytes, "largest file downloaded (held in memory while it is hashed)")
	f.StringArrayVar(&o.allow, "allow-host", nil, "a host a download may be redirected to, besides the one it was sent to and GitHub's download storage (repeatable)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log each step to stderr")
	return cmd
}

// fetcherFor builds the fetcher of bump and build: flags first, then
// PINSEAL_MIRRORS.
func fetcherFor(mirrors []string, cache string, timeout time.Duration, retries int) (*fetch.Fetcher, error) {
	ms, err := fetch.ParseMirrors(mirrors, os.Getenv(fetch.MirrorsEnv))
	if err != nil {
		return nil, usageError{Err: err}
	}
	return &fetch.Fetcher{CacheDir: cache, Timeout: timeout, Retries: retries, Mirrors: ms}, nil
}

// boundFetcher applies bump's and build's bounds on an upstream to f: the
// largest file, and the hosts a download may be redirected to besides the
// host it was sent to and GitHub's download storage.
func boundFetcher(f *fetch.Fetcher, maxBytes int64, allowHosts []string) {
	f.MaxBytes = maxBytes
	f.RedirectHosts = allowHosts
}

func runBump(ctx context.Context, stdout, stderr io.Writer, o *bumpOptions, dir string) error {
	ctx, stop := commandContext(ctx)
	defer stop()
	fetcher, err := fetcherFor(o.mirrors, o.cache, o.timeout, o.retries)
	if err != nil {
		return err
	}
	boundFetcher(fetcher, o.maxBytes, o.allow)
	shas, err := parseSHA256Flags(o.sha256, "URL=HEX")
	if err != nil {
		return err
	}
	res, err := bump.Bump(ctx, dir, bump.Options{
		Provider: o.provider, To: o.to, Release: o.release, SHA256: shas,
		TrustOnFirstUse: o.tofu, DryRun: o.dryRun, AllowBreaking: o.breaking, Fetcher: fetcher, Tree: o.tree,
		Logger: newLogger(stderr, o.verbose, slog.LevelInfo),
	})
	if err != nil {
		return err
	}
	if o.output == "json" {
		return writeJSON(stdout, res)
	}
	printBump(stdout, res)
	return nil
}

func printBump(w io.Writer, r *bump.Result) {
	verb := "bumped"
	if r.DryRun {
		verb = "would bump"
	}
	for _, f := range r.Recovered {
		fmt.Fprintf(w, "restored %s (left by an interrupted bump)\n", f)
	}
	fmt.Fprintf(w, "%s %s %s: %s -> %s (release %s -> %s)\n", verb, r.Package, r.Provider, r.From.Version, r.To.Version, r.From.Release, r.To.Release)
	if r.Contract != "" {
		fmt.Fprintf(w, "  contract %s\n", r.Contract)
	}
	fmt.Fprintf(w, "  pins in %s\n", r.Pins)
	if r.PinsNote != "" {
		fmt.Fprintf(w, "  note: %s\n", r.PinsNote)
	}
	for _, d := range r.Digests {
		switch d.From {
		case bump.FromTOFU:
			fmt.Fprintf(w, "  TRUSTED ON FIRST USE: %s sha256:%s (compare with the release's published checksums)\n", d.URL, d.SHA256)
		case bump.FromUnchanged:
		default:
			fmt.Fprintf(w, "  pinned %s sha256:%s (%s)\n", d.URL, d.SHA256, d.From)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range r.Files {
		old := f.OldSHA256
		if old == "" {
			old = "(new)"
		} else {
			old = "sha256:" + old[:12]
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s -> sha256:%s\n", f.Status, f.Kind, f.Path, old, f.NewSHA256[:12])
	}
	tw.Flush()
	printChanges(w, r.Changes)
	if len(r.PreExisting) > 0 {
		fmt.Fprintf(w, "  pre-existing: %d error finding(s) of the package were there before the bump and it does not touch them; they did not block it and are still there:\n", len(r.PreExisting))
		printFindings(w, "", r.PreExisting)
	}
	if r.DryRun {
		for _, f := range r.Files {
			if f.Diff != "" {
				fmt.Fprint(w, f.Diff)
			}
		}
	}
}

// printChanges writes the safety report: what the new release changes for
// running clusters, breaking changes first.
func printChanges(w io.Writer, cs []changes.Change) {
	if len(cs) == 0 {
		fmt.Fprintln(w, "  changes for running clusters: none (CRD versions, contract, images, RBAC, variables, namespaces as before)")
		return
	}
	fmt.Fprintf(w, "  changes for running clusters (%d, %d breaking):\n", len(cs), len(changes.Breaking(cs)))
	for _, c := range cs {
		mark := ""
		if c.Breaking {
			mark = "BREAKING "
		}
		fmt.Fprintf(w, "    %s%s %s: %s\n", mark, c.Kind, c.Object, c.Detail)
	}
}

// addFetchFlags adds the download flags bump and outdated share with build.
func addFetchFlags(f *pflag.FlagSet, mirrors *[]string, cache *string, timeout *time.Duration, retries *int) {
	f.StringArrayVar(mirrors, "mirror", nil, "FROM=TO: fetch URLs starting with FROM from TO instead (repeatable; also "+fetch.MirrorsEnv+"); pins keep the upstream URL")
	f.StringVar(cache, "cache", fetch.DefaultCacheDir(), "content-addressed download cache directory")
	f.DurationVar(timeout, "timeout", fetch.DefaultTimeout, "time limit of one download attempt")
	f.IntVar(retries, "retries", fetch.DefaultRetries, "retries of a failed download (connection error, timeout, HTTP 5xx/408/429)")
}
