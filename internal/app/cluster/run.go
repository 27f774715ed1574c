package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/sign"
	"github.com/pinseal/pinseal/pkg/verify"
)

// Options tune one cluster check.
type Options struct {
	// Access says how the cluster is reached.
	Access Access
	// Tree is the tree the cluster is compared with (pkg/verify's loader
	// reads it with Load and the policy); nil: only the cluster-side and
	// registry checks run.
	Tree *model.Tree
	// Allow are the registries (HOST[:PORT]) or repository prefixes a
	// provider's spec.fetchConfig.oci may be read from; a provider
	// fetching from elsewhere is a cluster-oci finding and is not
	// contacted.
	Allow []string
	// Registry says how registries are reached (plain HTTP, credentials,
	// other hosts they may send the client to).
	Registry artifact.Options
	// Keys are trusted on top of the policy's.
	Keys []*sign.PublicKey
	// Policy decides severities and waivers (policy.Default() when nil).
	Policy *policy.Policy
	// Limit bounds inflating compressed components.
	Limit int64
	// Now decides waiver expiry; zero means time.Now().
	Now time.Time
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
}

// Verify reads the cluster, the registry artifacts its fetchConfig.oci
// providers install from, and checks both against opts.Tree. The error is
// non-nil when the cluster cannot be read at all (unreachable, credentials
// refused, bad kubeconfig); a forbidden read is a finding.
func Verify(ctx context.Context, opts Options) (*report.Report, error) {
	cfg, name, err := opts.Access.Config()
	if err != nil {
		return nil, err
	}
	snap, err := List(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	return Evaluate(ctx, snap, opts)
}

// Evaluate reads the registry side of snap's providers, runs the checks
// and applies the policy.
func Evaluate(ctx context.Context, snap *Snapshot, opts Options) (*report.Report, error) {
	pol := opts.Policy
	if pol == nil {
		pol = policy.Default()
	}
	in := &Input{Snap: snap, Tree: opts.Tree, Limit: opts.Limit, OCI: map[*Provider]*OCIResult{}}
	if pol.Enabled(CheckOCI) {
		for _, p := range snap.Providers {
			if p.FetchOCI != "" {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				in.OCI[p] = fetchOCI(ctx, p, pol, opts)
			}
		}
	}
	var fs []report.Finding
	for _, f := range Findings(in) {
		if pol.Enabled(f.Check) {
			fs = append(fs, f)
		}
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	fs = pol.Apply(fs, now)
	verify.SortFindings(fs)
	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		Tool:          report.Tool{Name: "verifier", Version: version.Version},
		Root:          "cluster " + snap.Context + " (" + snap.Server + ")",
		Findings:      fs,
		Packages:      summaries(in),
	}
	if r.Findings == nil {
		r.Findings = []report.Finding{}
	}
	r.Tally()
	return r, nil
}

// fetchOCI verifies the artifact p installs from, as `verifier verify`
// does, when its registry is allowed.
func fetchOCI(ctx context.Context, p *Provider, pol *policy.Policy, opts Options) *OCIResult {
	src, err := operator.ParseSource(p.FetchOCI, p.Version)
	if err != nil {
		return &OCIResult{Ref: p.FetchOCI, Refused: "the operator cannot read it either: " + err.Error()}
	}
	r := &OCIResult{Ref: src.Ref()}
	if !remote.Allowed(src.Repository, opts.Allow) {
		r.Refused = fmt.Sprintf("registry %s is not one the scan may contact", src.Host)
		return r
	}
	ro := opts.Registry
	ro.PlainHTTP = ro.PlainHTTP || src.PlainHTTP
	rep, a, err := verify.RefArtifact(ctx, r.Ref, verify.RefOptions{Policy: pol, Keys: opts.Keys, Registry: ro,
		Limit: opts.Limit, Now: opts.Now, Logger: opts.Logger})
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Artifact, r.Report = a, rep
	return r
}

// summaries lists the cluster's namespaces as the report's packages, with
// their providers.
func summaries(in *Input) []report.PackageSummary {
	var out []report.PackageSummary
	byPath := map[string]int{}
	for _, p := range in.Snap.Providers {
		path := in.where(p.Namespace)
		i, ok := byPath[path]
		if !ok {
			i = len(out)
			byPath[path] = i
			out = append(out, report.PackageSummary{Path: path, Namespace: p.Namespace, Providers: []report.ProviderSummary{}})
		}
		s := report.ProviderSummary{Kind: p.Kind, Name: p.Name, Version: p.Version}
		if cm := installedFrom(p); cm != nil {
			s.ConfigMap = cm.Name
		}
		if r := in.OCI[p]; r != nil && r.Artifact != nil {
			s.Artifact = r.Artifact.Pinned()
		}
		out[i].Providers = append(out[i].Providers, s)
	}
	if out == nil {
		out = []report.PackageSummary{}
	}
	return out
}
