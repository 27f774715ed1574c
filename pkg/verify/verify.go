// Package verify is the verification engine the CLI (`verifier check`) and
// the HTTP service share: load a tree of provider packages, run the checks
// over the in-memory model, apply the policy, and return a *report.Report.
//
// Extending it: checks that need inputs beyond the tree (the registry
// checks registry-digest, version-reused, signature, provenance) are passed
// as Options.Extra — pure functions over the tree that close over whatever
// their caller fetched (registry copies, signatures) before calling Run.
// A caller that builds the model itself (e.g. from an OCI artifact, for
// `verifier verify REF`) calls Evaluate instead of Run.
package verify

import (
	"context"
	"fmt"
	"log/slog"
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

// LoadFunc loads a tree; load.Tree is the default.
type LoadFunc func(ctx context.Context, root string, opts load.Options) (*model.Tree, error)

// Options tune a verification. The zero value verifies with the built-in
// policy, the loader's defaults and the current time.
type Options struct {
	// Load options (see load.Options).
	Namespace string // namespace of packages that name none
	Limit     int64  // inflated size limit per blob (blob.DefaultLimit when <= 0)
	Workers   int    // packages loaded at once (NumCPU when <= 0)
	// Render bounds the rendering of each chart (load.RenderLimits; the
	// zero value: a bounded child process with the default bounds).
	Render load.RenderLimits
	// Exclude are directories under the root not to enter (path.Match
	// patterns relative to it), on top of the policy's exclude list.
	Exclude []string

	// Policy decides severities and waivers; nil means policy.Default().
	Policy *policy.Policy
	// Now decides waiver expiry; zero means time.Now().
	Now time.Time

	// Extra checks run after the built-in ones. An extra check with the ID
	// of a built-in check replaces it. Their IDs should be in the catalog
	// (check.Catalog) so policies can set their severity; others default to
	// error.
	Extra []check.Check

	// OnlyExtra runs the Extra checks alone, not the built-in ones: for a
	// caller that keeps the built-in checks' results of an earlier run over
	// the same tree (the service re-scanning an unchanged commit).
	OnlyExtra bool

	// Load replaces the loader (tests, other sources); nil means load.Tree.
	Load LoadFunc
	// Tool names the program in the report; zero means verifier and this
	// build's version.
	Tool report.Tool
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// Run loads the tree under root and verifies it. The error is non-nil only
// when the tree cannot be loaded at all (root missing or not a directory,
// ctx ended); everything wrong inside the tree is a finding.
func Run(ctx context.Context, root string, opts Options) (*report.Report, error) {
	loadFn := opts.Load
	if loadFn == nil {
		loadFn = load.Tree
	}
	start := time.Now()
	lo := load.Options{
		Namespace: opts.Namespace,
		Limit:     opts.Limit,
		Workers:   opts.Workers,
		Logger:    opts.Logger,
		Render:    opts.Render,
		Exclude:   opts.Exclude,
	}
	if opts.Policy != nil {
		lo.Exclude = append(append([]string(nil), opts.Policy.Exclude...), opts.Exclude...)
		for _, v := range opts.Policy.ValuesFiles() {
			lo.Values = append(lo.Values, load.ValuesFiles{Package: v.Package, Files: v.Files})
		}
	}
	t, err := loadFn(ctx, root, lo)
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", root, err)
	}
	opts.logger().Debug("tree loaded", "root", root, "packages", len(t.Packages), "elapsed", time.Since(start))
	r, err := Evaluate(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	r.Root = root
	return r, nil
}

// Checks returns the checks a verification with opts runs: the built-in
// ones, then the extras (an extra replaces a built-in with its ID).
func Checks(opts Options) []check.Check {
	var out []check.Check
	for _, c := range check.Builtin() {
		if opts.OnlyExtra {
			break
		}
		if slices.ContainsFunc(opts.Extra, func(x check.Check) bool { return x.ID == c.ID }) {
			continue
		}
		if c.ID == check.ImageRef && opts.Policy != nil && len(opts.Policy.MovingTags) > 0 {
			c = check.ImageRefCheck(opts.Policy.MovingTags)
		}
		out = append(out, c)
	}
	for _, x := range opts.Extra {
		if x.Run != nil {
			out = append(out, x)
		}
	}
	return out
}

// Evaluate runs the checks over an already loaded tree and applies the
// policy. It does no I/O.
func Evaluate(ctx context.Context, t *model.Tree, opts Options) (*report.Report, error) {
	pol := opts.Policy
	if pol == nil {
		pol = policy.Default()
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	tool := opts.Tool
	if tool.Name == "" {
		tool = report.Tool{Name: "verifier", Version: version.Version}
	}

	var findings []report.Finding
	for _, c := range Checks(opts) {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		// package-load passes the loader's problems through under their own
		// check IDs, so it always runs; the policy filters what is off.
		if c.ID != check.PackageLoad && !pol.Enabled(c.ID) {
			continue
		}
		start := time.Now()
		fs := runCheck(c, t, opts.logger())
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
		Packages:      Summaries(t),
	}
	for _, s := range t.Skipped {
		r.Skipped = append(r.Skipped, report.Skipped{Path: s.Path, Reason: s.Reason})
	}
	r.Tally()
	return r, nil
}

// runCheck runs one check; a panic becomes an error finding of that check
// instead of ending the run.
func runCheck(c check.Check, t *model.Tree, log *slog.Logger) (fs []report.Finding) {
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
	return c.Run(t)
}

// Summaries lists the packages and providers of the tree, with the
// ConfigMap each provider's selector picks and where each provider's
// bytes come from (check.Source).
func Summaries(t *model.Tree) []report.PackageSummary {
	ix := check.NewIndex(t)
	out := make([]report.PackageSummary, 0, len(t.Packages))
	for _, pkg := range t.Packages {
		ps := report.PackageSummary{Path: pkg.Path, Namespace: pkg.Namespace, Providers: []report.ProviderSummary{}}
		if ps.Path == "" {
			ps.Path = "."
		}
		for _, p := range pkg.Providers {
			src := check.Source(ix, pkg, p)
			s := report.ProviderSummary{Kind: p.Kind, Name: p.Name, Version: p.Version, Artifact: p.Artifact.Pinned(), Source: &src}
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
