package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/app/cluster"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// ClusterSourceConfig is a live cluster scanned like a tree: what its
// cluster-api-operator installed, against a tree and the registries
// (internal/app/cluster; docs/cluster.md). Credentials come from files only: the
// kubeconfig, or the pod's service account with inCluster.
type ClusterSourceConfig struct {
	// Kubeconfig is the kubeconfig file (or set InCluster).
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// InCluster reads the cluster the service runs in with its service
	// account (the chart's clusterAccess ClusterRole).
	InCluster bool `json:"inCluster,omitempty"`
	// Context is the kubeconfig context; "" means its current context.
	Context string `json:"context,omitempty"`
	// Tree is the tree the cluster should run: the name of a path
	// source, of a git source (its checkout at the commit of its newest
	// successful scan), or a directory. "": only the cluster-side and
	// registry checks run.
	Tree string `json:"tree,omitempty"`
}

// ClusterEngine is an Engine that also checks live clusters.
type ClusterEngine interface {
	CheckCluster(ctx context.Context, opts ClusterCheckOptions) (*report.Report, error)
}

// ClusterCheckOptions tune a cluster check.
type ClusterCheckOptions struct {
	Access cluster.Access
	// Tree is the directory of the tree to compare with; "" for none.
	Tree string
	// Policy is the parsed policy; nil means the default policy.
	Policy *policy.Policy
}

// CheckCluster implements ClusterEngine: the cluster is read and checked
// exactly as `verifier cluster` does; fetchConfig.oci artifacts are read
// only from the config's registries.
func (e VerifyEngine) CheckCluster(ctx context.Context, opts ClusterCheckOptions) (*report.Report, error) {
	pol := orDefault(opts.Policy)
	co := cluster.Options{Access: opts.Access, Allow: e.Allow, Registry: e.Registry, Policy: pol}
	if opts.Tree != "" {
		t, err := verify.Load(ctx, opts.Tree, verify.Options{Options: load.Options{Render: e.Render, Sandbox: e.Sandbox}, Policy: pol})
		if err != nil {
			return nil, err
		}
		co.Tree = t
	}
	return named(cluster.Verify(ctx, co))
}

// checkCluster scans a cluster source.
func (s *Server) checkCluster(ctx context.Context, name string) (*report.Report, error) {
	src := s.sources[name]
	ce, ok := s.engine.(ClusterEngine)
	if !ok {
		return nil, fmt.Errorf("source %s: this engine does not check clusters", name)
	}
	pol, _, err := s.sourcePolicy(name)
	if err != nil {
		return nil, err
	}
	cl := src.Cluster
	tree, err := s.clusterTreeDir(ctx, name, cl.Tree)
	if err != nil {
		return nil, err
	}
	rep, err := ce.CheckCluster(ctx, ClusterCheckOptions{
		Access: cluster.Access{Kubeconfig: cl.Kubeconfig, Context: cl.Context, InCluster: cl.InCluster},
		Tree:   tree,
		Policy: pol,
	})
	return rep, configHint(err, src.Policy)
}

// clusterTree is the directory a cluster source's tree names: a path
// source's path, else the directory itself.
func (c *Config) clusterTree(tree string) string {
	for _, s := range c.Sources {
		if s.Name == tree && s.Path != "" {
			return s.Path
		}
	}
	return tree
}

// validateCluster checks a cluster source: one of kubeconfig (a readable
// file) or inCluster, no path or git beside it, and a tree that is a path
// or git source or a directory.
func (c *Config) validateCluster(where string, s SourceConfig) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	cl := s.Cluster
	if s.Path != "" || s.Git != nil || s.Registry != "" {
		bad("%s: a cluster source takes no path, git or registry (fetchConfig.oci artifacts are read from the config's registries)", where)
	}
	switch {
	case (cl.Kubeconfig == "") == !cl.InCluster:
		bad("%s.cluster: give kubeconfig (a file) or inCluster: true, not both", where)
	case cl.Kubeconfig != "":
		if fi, err := os.Stat(cl.Kubeconfig); err != nil || !fi.Mode().IsRegular() {
			bad("%s.cluster.kubeconfig %s: not a readable file", where, cl.Kubeconfig)
		}
	}
	if cl.Tree == "" {
		return errs
	}
	for _, o := range c.Sources {
		if o.Name == cl.Tree {
			if o.Path == "" && o.Git == nil {
				bad("%s.cluster.tree %q: source %q is not a path or git source", where, cl.Tree, o.Name)
			}
			return errs
		}
	}
	if fi, err := os.Stat(cl.Tree); err != nil || !fi.IsDir() {
		bad("%s.cluster.tree %q: neither the name of a path or git source nor a directory", where, cl.Tree)
	}
	return errs
}

// resolveClusterPaths makes a cluster source's files absolute (relative
// to base, the config file's directory); a tree that names a source stays
// a name.
func (c *Config) resolveClusterPaths(base string, cl *ClusterSourceConfig) {
	if cl.Kubeconfig != "" && !filepath.IsAbs(cl.Kubeconfig) {
		cl.Kubeconfig = filepath.Join(base, cl.Kubeconfig)
	}
	if cl.Tree == "" || filepath.IsAbs(cl.Tree) {
		return
	}
	for _, s := range c.Sources {
		if s.Name == cl.Tree {
			return
		}
	}
	cl.Tree = filepath.Join(base, cl.Tree)
}
