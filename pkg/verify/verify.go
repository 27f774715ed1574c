// Package verify is the verification engine the verifier CLI and HTTP
// service share.
//
// It is the verification engine the CLI (`verifier check`) and
// the HTTP service share: a pipeline of explicit steps, composed by Run,
// that loads a tree of provider packages (Load), attaches each provider's
// release artifact when the registry checks are asked for
// (Registry.Attach), runs the checks over the in-memory model and applies
// the policy (Evaluate), and returns the tree and a *report.Report.
//
// Extending it: checks that need inputs beyond the tree are passed as
// Options.Extra — pure functions over the tree that close over whatever
// their caller fetched before calling Run. A caller that builds the model
// itself (e.g. from an OCI artifact, for `verifier verify REF`) calls
// Evaluate instead of Run.
package verify

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"runtime/debug"
	"slices"
	"sort"
	"time"

	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// Options tune a verification. The zero value verifies with the built-in
// policy, the loader's defaults and the current time.
type Options struct {
	// Options are the loader's (namespace, inflate limit, workers, render
	// bounds, excluded directories, logger); Load adds the policy's
	// exclude list and values files to them.
	load.Options

	// Policy decides severities and waivers; nil means policy.Default().
	Policy *policy.Policy
	// Now decides waiver expiry; zero means time.Now().
	Now time.Time

	// Extra checks run after the built-in ones. An extra check with the ID
	// of a built-in check replaces it. Their IDs should be in the catalog
	// (check.Catalog) so policies can set their severity; others default to
	// error.
	Extra []check.Check

	// OnlyExtra runs the Extra checks (and the registry checks) alone,
	// not the built-in ones: for a caller that keeps the built-in checks'
	// results of an earlier run over the same tree (the service
	// re-scanning an unchanged commit).
	OnlyExtra bool

	// Registry, when set, adds the registry checks: Run attaches every
	// provider's release artifact to the loaded tree (Registry.Attach) and
	// Evaluate runs the checks that judge it. Without it those checks are
	// not run, and not reported.
	Registry *Registry

	// Tool names the program in the report; zero means verifier and this
	// build's version.
	Tool report.Tool

	// CRDMemo, when set, keeps components-apply's judgement of each CRD
	// across runs (the verifier keeps one in the user's cache directory):
	// Load judges the CRDs as the packages load with
	// check.NewCRDJudge(CRDMemo), unless load.Options.CRDs is set.
	CRDMemo check.CRDMemo
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

func (o Options) policy() *policy.Policy {
	if o.Policy != nil {
		return o.Policy
	}
	return policy.Default()
}

// Run verifies the tree under root: Load, then (with opts.Registry)
// Registry.Attach, then Evaluate. It returns the tree as loaded and the
// report on it. The error is non-nil only when the tree cannot be loaded
// at all (root missing or not a directory, ctx ended) or the registry
// cannot be read; everything wrong inside the tree is a finding.
func Run(ctx context.Context, root string, opts Options) (*model.Tree, *report.Report, error) {
	t, err := Load(ctx, root, opts)
	if err != nil {
		return nil, nil, err
	}
	if opts.Registry != nil {
		if err := opts.Registry.Attach(ctx, t, opts.Logger); err != nil {
			return nil, nil, fmt.Errorf("verify %s: %w", root, err)
		}
	}
	r, err := Evaluate(ctx, t, opts)
	if err != nil {
		return nil, nil, err
	}
	r.Root = root
	return t, r, nil
}

// Load loads the tree under root with opts' load options, plus the
// policy's exclude list (before opts.Exclude) and values files. Its CRDs
// are judged as their packages load by opts.CRDs, else by
// check.NewCRDJudge(opts.CRDMemo): one judge given to several loads
// judges a CRD they share once.
func Load(ctx context.Context, root string, opts Options) (*model.Tree, error) {
	start := time.Now()
	lo := opts.Options
	if lo.CRDs == nil {
		lo.CRDs = check.NewCRDJudge(opts.CRDMemo)
	}
	if opts.Policy != nil {
		lo.Exclude = append(slices.Clone(opts.Policy.Exclude), opts.Exclude...)
		lo.Values = slices.Clone(lo.Values)
		for _, v := range opts.Policy.ValuesFiles() {
			lo.Values = append(lo.Values, load.ValuesFiles{Package: v.Package, Files: v.Files})
		}
	}
	t, err := load.Tree(ctx, root, lo)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", root, err)
	}
	if opts.Policy != nil {
		markFixtures(t, opts.Policy.Fixtures)
	}
	opts.logger().Debug("tree loaded", "root", root, "packages", len(t.Packages), "elapsed", time.Since(start))
	return t, nil
}

// markFixtures marks the packages at or below a policy fixtures: pattern.
func markFixtures(t *model.Tree, globs []string) {
	for _, pkg := range t.Packages {
		for dir := pkg.Path; dir != "." && dir != "/" && dir != ""; dir = path.Dir(dir) {
			if slices.ContainsFunc(globs, func(g string) bool { ok, _ := path.Match(g, dir); return ok }) {
				pkg.Fixture = true
				break
			}
		}
	}
}

// Checks returns the checks a verification with opts runs: the built-in
// ones, then the extras and the registry checks (an extra replaces a
// built-in with its ID).
func Checks(opts Options) []check.Check {
	extra := opts.Extra
	if opts.Registry != nil {
		extra = append(slices.Clone(extra), opts.Registry.checks...)
	}
	var out []check.Check
	for _, c := range check.Builtin(opts.policy().MovingTags, opts.policy().ExternalKinds) {
		if opts.OnlyExtra {
			break
		}
		if slices.ContainsFunc(extra, func(x check.Check) bool { return x.ID == c.ID }) {
			continue
		}
		out = append(out, c)
	}
	for _, x := range extra {
		if x.Run != nil {
			out = append(out, x)
		}
	}
	return out
}

// Evaluate runs the checks over an already loaded tree and applies the
// policy. It does no I/O.
func Evaluate(ctx context.Context, t *model.Tree, opts Options) (*report.Report, error) {
	pol := opts.policy()
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	tool := opts.Tool
	if tool.Name == "" {
		tool = report.Tool{Name: "verifier", Version: version.Version}
	}

	in := check.NewInput(t)
	var findings []report.Finding
	for _, c := range Checks(opts) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		// package-load passes the loader's problems through under their own
		// check IDs, so it always runs; the policy filters what is off.
		if c.ID != model.CheckPackageLoad && !pol.Enabled(c.ID) {
			continue
		}
		start := time.Now()
		fs := runCheck(c, in, opts.logger())
		opts.logger().Debug("check ran", "check", c.ID, "findings", len(fs), "elapsed", time.Since(start))
		findings = append(findings, fs...)
	}
	findings = pol.Apply(findings, now)
	sortFindings(findings)

	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		Tool:          tool,
		Root:          t.Root,
		Findings:      findings,
		Packages:      summaries(in),
	}
	for _, s := range t.Skipped {
		r.Skipped = append(r.Skipped, report.Skipped{Path: s.Path, Reason: s.Reason})
	}
	r.Tally()
	return r, nil
}

// runCheck runs one check; a panic becomes an error finding of that check
// instead of ending the run.
func runCheck(c check.Check, in *check.Input, log *slog.Logger) (fs []report.Finding) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("check panicked", "check", c.ID, "panic", r, "stack", string(debug.Stack()))
			fs = append(fs, report.Finding{
				Check:   c.ID,
				Package: ".",
				Message: fmt.Sprintf("internal error in check %s: %v; its result is unknown", c.ID, r),
				Hint:    "report this as a pinseal bug with the tree attached",
			})
		}
	}()
	return c.Run(in)
}

// Summaries lists the packages and providers of the tree, with the
// ConfigMap each provider's selector picks and where each provider's
// bytes come from (check.Source).
func Summaries(t *model.Tree) []report.PackageSummary {
	return summaries(check.NewInput(t))
}

func summaries(in *check.Input) []report.PackageSummary {
	t, ix := in.Tree, in.Index
	out := make([]report.PackageSummary, 0, len(t.Packages))
	for _, pkg := range t.Packages {
		ps := report.PackageSummary{Path: pkg.Path, Namespace: pkg.Namespace, Providers: []report.ProviderSummary{}}
		if ps.Path == "" {
			ps.Path = "."
		}
		for _, p := range pkg.Providers {
			src := check.Source(ix, pkg, p)
			s := report.ProviderSummary{Kind: p.Kind, Name: p.Name, Version: p.Version, Artifact: p.Artifact.Pinned(), Source: &src,
				Object: p.Object, Namespace: check.Namespace(pkg, p.Namespace)}
			if p.File != "" {
				s.File = path.Join(ps.Path, p.File)
			}
			if m, ok := ix.Select(pkg, p).Picked(p.Version); ok {
				s.ConfigMap = m.ConfigMap.Name
			}
			ps.Providers = append(ps.Providers, s)
		}
		for _, cm := range pkg.ConfigMaps {
			f := cm.File
			if f != "" && ps.Path != "." {
				f = ps.Path + "/" + f
			}
			ps.ConfigMaps = append(ps.ConfigMaps, report.ConfigMapSummary{Name: cm.Name, Namespace: cm.Namespace, File: f})
		}
		out = append(out, ps)
	}
	return out
}

// SortFindings orders findings as a report lists them (see sortFindings).
func SortFindings(fs []report.Finding) { sortFindings(fs) }

// sortFindings orders findings by package, provider, catalog order of the
// check, file, line and message.
func sortFindings(fs []report.Finding) {
	order := map[string]int{}
	for i, id := range check.IDs() {
		order[id] = i
	}
	rank := func(id string) int {
		if i, ok := order[id]; ok {
			return i
		}
		return len(order)
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if ra, rb := rank(a.Check), rank(b.Check); ra != rb {
			return ra < rb
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Message < b.Message
	})
}
