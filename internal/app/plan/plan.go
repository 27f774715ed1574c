// Package plan orders the `builder bump` steps that bring a tree of
// provider packages to the newest stable releases it can reach.
//
// It starts from what internal/app/outdated finds (every newer stable release of
// every provider, with the contract its own metadata.yaml declares) and
// keeps every provider of the tree served by the core at every step, the
// way the cluster-api-operator and the clusterctl library it bundles
// judge an upgrade:
//
//   - no downgrades: only releases newer than the pinned one are steps
//     (cluster-api-operator v0.28.0 internal/controller/preflight_checks.go,
//     checkProviderVersion, refuses a lower major.minor);
//   - the core and the kubeadm bootstrap and control plane providers skip
//     at most three minor versions from v1.10.0 on (cluster-api v1.12.10
//     and v1.14.0 cmd/clusterctl/client/cluster/upgrader.go, doUpgrade), so
//     a longer move is several steps;
//   - a release whose metadata.yaml has no series for it is refused
//     (upgrader.go, getProviderContractByVersion: "does not match any
//     release series");
//   - a provider's release must implement a contract the core serves, and
//     a core release must still serve every provider that stays
//     (upgrader.go, createCustomPlan, which the operator's
//     internal/controller/phase_lifecycle.go Upgrade reaches through
//     ApplyCustomPlan). Which contracts a core serves is operator.Contracts.
//
// A core move comes first when it is what makes a provider's newer release
// installable, and only when every provider stays served after it.
// Releases no step reaches are listed as blocked, with the reason.
//
// Each step carries the safety report `builder bump` makes for it
// (changes.Compare of the release before and after the step, safety.go).
// A release whose report is breaking, whose components the package's
// patches do not fit, or whose components asset fails the API's digest
// would make the printed command fail, so it is blocked (a breaking one
// only without Options.AllowBreaking) and the plan is made again without
// it.
package plan

import (
	"context"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/pkg/changes"
)

// Step is one `builder bump` command.
type Step struct {
	// Package is the package directory as the command takes it.
	Package  string `json:"package"`
	Provider string `json:"provider"` // Kind/name
	From     string `json:"from"`     // upstream version before the step
	To       string `json:"to"`       // upstream version after it
	// Contract is the contract of To's series.
	Contract string `json:"contract"`
	// Why says why this release, and why at this point of the plan.
	Why string `json:"why"`
	// Command is the `builder bump` command line, to run as printed.
	Command string `json:"command"`
	// Changes is the step's bump safety report (changes.Compare of the
	// release before and after it, as `builder bump` reports it); absent
	// when it could not be made (why says why).
	Changes []changes.Change `json:"changes,omitzero"`
}

// Blocked is a newer stable release no step reaches.
type Blocked struct {
	Package  string `json:"package"`
	Provider string `json:"provider"`
	Release  string `json:"release"`
	Reason   string `json:"reason"`
}

// Plan is the ordered steps and what they leave behind.
type Plan struct {
	Steps   []Step    `json:"steps"`
	Blocked []Blocked `json:"blocked"`
	// Core is the core provider the plan keeps every provider served by.
	Core *outdated.Core `json:"core,omitempty"`
	// Failed lists providers whose releases could not be read (the
	// outdated report's errors); they get no step.
	Failed []Blocked `json:"failed,omitempty"`
}

// Options configure FromUpstream.
type Options struct {
	// Outdated configures the releases look-up and the asset downloads.
	Outdated outdated.Options
	// Builder is the command the printed steps start with; "" = "builder".
	Builder string
	// AllowBreaking plans steps whose safety report has a breaking change
	// (their commands carry --allow-breaking); without it such a release
	// is blocked, with the change as the reason.
	AllowBreaking bool
}

// FromUpstream looks up the newer releases of every provider under
// roots, plans the steps, and makes the safety report of each step from
// the release's components and metadata.yaml assets (safety.go). A
// release whose report is breaking is blocked unless AllowBreaking, and
// the plan is made again without it.
func FromUpstream(ctx context.Context, roots []string, opts Options) (*Plan, error) {
	rep, err := outdated.LookUp(ctx, roots, opts.Outdated)
	if err != nil {
		return nil, err
	}
	r, err := newReporter(rep, opts.Outdated)
	if err != nil {
		return nil, err
	}
	reports := map[stepKey]*stepReport{}
	for {
		pl := makePlan(rep, opts, reports)
		todo := pl.unreported(reports)
		if len(todo) == 0 {
			return pl, nil
		}
		// Every round reports at least one step more, of finitely many
		// pairs of releases, so the rounds end.
		for _, k := range todo {
			rp, err := r.report(ctx, k)
			if err != nil {
				return nil, err
			}
			reports[k.stepKey] = rp
		}
	}
}

// Make plans from an outdated report: a pure function of it. It makes no
// safety reports (FromUpstream does).
func Make(rep *outdated.Report, builder string) *Plan {
	return makePlan(rep, Options{Builder: builder}, nil)
}

// makePlan plans from rep and the safety reports made so far: a release
// a report refuses is no step.
func makePlan(rep *outdated.Report, opts Options, reports map[stepKey]*stepReport) *Plan {
	builder := opts.Builder
	if builder == "" {
		builder = "builder"
	}
	w := newWorld(rep)
	w.refuse(reports, opts.AllowBreaking)
	pl := &Plan{Steps: []Step{}, Blocked: []Blocked{}, Core: rep.Core}
	for _, p := range rep.Providers {
		if p.Error != "" {
			pl.Failed = append(pl.Failed, Blocked{Package: dirOf(&p), Provider: p.Provider, Release: p.Version, Reason: p.Error})
		}
	}
	moves := w.best()
	for _, m := range moves {
		pl.Steps = append(pl.Steps, w.step(m, builder, reports[keyOf(m)], opts.AllowBreaking))
	}
	pl.Blocked = w.blocked(moves)
	return pl
}
