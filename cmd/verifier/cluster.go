package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/cluster"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// clusterOptions are the flags of `verifier cluster`.
type clusterOptions struct {
	kubeconfig, context string
	tree                string
	output, policyFile  string
	maxInflate          int64
	render              render.Limits
	registry            string
	allowRegistry       []string
	keys                []string
	plain               bool
	allow               []string
	timeout             time.Duration
}

func newClusterCmd() *cobra.Command {
	o := &clusterOptions{}
	cmd := &cobra.Command{
		Use:   "cluster [--kubeconfig FILE] [--context NAME] [--tree ROOT] [--registry PREFIX]",
		Short: "Check what a live cluster's cluster-api-operator installed against the tree and the registry (read-only)",
		Long: `Check a live cluster, read-only (get and list only): every provider object
of the seven cluster-api-operator kinds in all namespaces, the ConfigMaps
their selectors match, the operator's copies of fetchConfig.oci artifacts,
the providers' Deployments and the CRDs.

  cluster-installed  spec.version is status.installedVersion, no condition
                     is False, and (with --tree) it is the tree's release
  cluster-configmap  the selector matches exactly one ConfigMap, and (with
                     --tree) it is the tree's rendered ConfigMap of the same
                     release: else stale, or edited in place
  cluster-oci        the operator's copy of a fetchConfig.oci release holds
                     what the registry's tag holds now, and the artifact
                     verifies as verifier verify verifies it
  cluster-workload   the Deployments run the images the installed
                     components name
  cluster-crd        the CRDs serve and store what the components say

Without --tree only the cluster-side and registry checks run. A
fetchConfig.oci registry is contacted only when it is the --registry host
or given with --allow-registry. Credentials come from the kubeconfig file
alone. Each finding names the context and namespace (its package) and the
object.

Exit status: 0 no error findings, 1 error findings, 2 usage error or a
cluster that could not be read (unreachable, credentials refused).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCluster(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, then ~/.kube/config)")
	f.StringVar(&o.context, "context", "", "kubeconfig context (default: its current context)")
	f.StringVar(&o.tree, "tree", "", "tree `ROOT` whose packages the cluster should run")
	f.StringVarP(&o.output, "output", "o", string(report.FormatHuman), "output format: human, json, sarif or github")
	f.StringVar(&o.policyFile, "policy", "", "policy file (default: the built-in policies/default.yaml)")
	f.Int64Var(&o.maxInflate, "max-inflate", blob.DefaultLimit, "stop inflating compressed components past this many bytes")
	f.DurationVar(&o.timeout, "request-timeout", cluster.DefaultTimeout, "bound on each request to the API server")
	f.StringVar(&o.registry, "registry", "", "registry PREFIX (HOST[:PORT]/PATH) whose host fetchConfig.oci artifacts may be read from")
	f.StringArrayVar(&o.allowRegistry, "allow-registry", nil, "another registry HOST[:PORT] (or HOST[:PORT]/PATH) fetchConfig.oci artifacts may be read from; repeatable")
	addKeyFlags(f, &o.keys, &o.plain, &o.allow)
	addRenderFlags(f, &o.render)
	return cmd
}

func runCluster(cmd *cobra.Command, o *clusterOptions) error {
	format, pol, err := outputAndPolicy(o.output, o.policyFile)
	if err != nil {
		return err
	}
	if o.maxInflate <= 0 || o.timeout <= 0 {
		return usageError{Err: errors.New("--max-inflate and --request-timeout must be positive")}
	}
	if err := checkRender(o.render); err != nil {
		return err
	}
	opts := cluster.Options{
		Access:   cluster.Access{Kubeconfig: o.kubeconfig, Context: o.context, Timeout: o.timeout},
		Registry: artifact.Options{PlainHTTP: o.plain, AllowedHosts: o.allow, Retries: fetch.DefaultRetries},
		Policy:   pol,
		Limit:    o.maxInflate,
	}
	if o.registry != "" {
		prefix, err := artifact.ParsePrefix(o.registry)
		if err != nil {
			return usageError{Err: fmt.Errorf("--registry: %w", err)}
		}
		opts.Allow = allowed(prefix, o.allowRegistry)
	} else {
		opts.Allow = o.allowRegistry
	}
	for _, h := range o.allowRegistry {
		if err := verify.ValidAllowEntry(h); err != nil {
			return usageError{Err: fmt.Errorf("--allow-registry: %w", err)}
		}
	}
	if opts.Keys, err = loadKeys(o.keys); err != nil {
		return usageError{Err: err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.tree != "" {
		t, err := verify.Load(ctx, o.tree, verify.Options{Options: load.Options{Limit: o.maxInflate, Render: o.render}, Policy: pol})
		if err != nil {
			return usageError{Err: fmt.Errorf("--tree: %w", err)}
		}
		opts.Tree = t
	}
	r, err := cluster.Verify(ctx, opts)
	if err != nil {
		// Nothing could be checked: not a findings result.
		return usageError{Err: err}
	}
	return writeReport(cmd, r, format)
}
