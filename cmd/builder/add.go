package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/add"
	"github.com/pinseal/pinseal/internal/app/outdated"
)

// addOptions are the flags of `builder add`.
type addOptions struct {
	provider, repo, version, apiURL, output string
	allowHosts                              []string
	dryRun, allowBreaking, verbose          bool
}

func newAddCmd() *cobra.Command {
	o := &addOptions{}
	cmd := &cobra.Command{
		Use:   "add DIR --provider Kind/name --github OWNER/REPO [--version vX.Y.Z]",
		Short: "Write a new provider package, pinned and shaped like the packages beside it",
		Long: `Write a new provider package at DIR (which must not exist) for an upstream
release on GitHub.

The release: without --version, the newest stable release whose contract
(its metadata.yaml) the core provider of the tree serves; the newer ones
passed over are printed with the reason. With --version, a release the core
does not serve is refused unless --allow-breaking. Its components and
metadata.yaml are read through the releases API (the API's host, GitHub's
download hosts when the API is GitHub's, --allow-host hosts; nothing else)
and pinned by SHA-256, the API's asset digest checked where it gives one.

The shape follows a sibling provider package (one in DIR's parent): pins
in pin.yaml or in Makefile variables, Chart.yaml, .helmignore, template
names, the release-name convention and the namespace; with no sibling, the
layout of examples/. The ConfigMap is named after the release, which is
spec.version, with the compressed annotation and a selector label of the
provider's own; values.yaml documents the variables the components need
for spec.configSecret. The tree's core is never added twice.

The package is staged beside DIR, checked as verifier check does, and
renamed into place: it appears whole or not at all.

Exit status: 0 added, 1 refused (no served release, a missing asset, a host
not allowed, DIR exists, a second core), 2 usage.`,
		Example: `  builder add packages/system/capi-providers-infraprovider-proxmox --provider InfrastructureProvider/proxmox --github ionos-cloud/cluster-api-provider-proxmox
  builder add packages/system/capi-providers-ipam --provider IPAMProvider/in-cluster --github kubernetes-sigs/cluster-api-ipam-provider-in-cluster --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			opts := add.Options{
				Provider: o.provider, Repo: o.repo, Version: o.version, AllowBreaking: o.allowBreaking, DryRun: o.dryRun,
				APIURL: o.apiURL, Token: strings.TrimSpace(os.Getenv(outdated.TokenEnv)), AllowHosts: o.allowHosts,
				Logger: newLogger(cmd.ErrOrStderr(), o.verbose, slog.LevelDebug),
			}
			if err := opts.Validate(); err != nil {
				return usageError{Err: err}
			}
			return runAdd(cmd.Context(), cmd.OutOrStdout(), o, args[0], opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.provider, "provider", "", "Kind/name of the new provider (InfrastructureProvider/proxmox)")
	f.StringVar(&o.repo, "github", "", "OWNER/REPO of its GitHub releases")
	f.StringVar(&o.version, "version", "", "the release to add (default: the newest stable release whose contract the core serves)")
	f.BoolVar(&o.allowBreaking, "allow-breaking", false, "add a --version whose contract the tree's core does not serve")
	f.StringVar(&o.apiURL, "api-url", outdated.DefaultAPIURL, "GitHub API root (GitHub Enterprise: https://HOST/api/v3); its host is allowed")
	f.StringArrayVar(&o.allowHosts, "allow-host", nil, "another HOST[:PORT] release assets may be read from (a redirect target); repeatable")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the files and their digests; write nothing")
	f.StringVar(&o.output, "output", "human", "output format: human or json (schema: api/add.schema.json)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log each request to stderr")
	return cmd
}

func runAdd(ctx context.Context, stdout io.Writer, o *addOptions, dir string, opts add.Options) error {
	ctx, stop := commandContext(ctx)
	defer stop()
	res, err := add.Add(ctx, dir, opts)
	if err != nil {
		return err
	}
	if o.output == "json" {
		return writeJSON(stdout, res)
	}
	add.PrintHuman(stdout, res)
	return nil
}
