package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/plan"
)

// errSteps makes `builder plan` exit 1 after printing steps.
type errSteps struct{ n int }

func (e errSteps) Error() string { return fmt.Sprintf("%d step(s) to take", e.n) }

// planLong is `builder plan --help`.
var planLong = `Look up the newer releases of every provider under each DIR (default ".") as
` + "`builder outdated`" + ` does, contracts included, and print the ordered steps that
bring the tree to the newest stable releases it can reach, each one
` + "`builder bump`" + ` command to run as printed. A core move comes first when it is
what makes a provider's newer release installable, and only when every
provider of the tree stays served after it. The operator's upgrade rules
bind: no downgrades, the core and kubeadm providers skip at most three
minor versions (so a longer move is several steps), a release whose
metadata.yaml has no series for it is refused. Newer releases no step
reaches are listed as blocked, with the reason.

Each step carries the safety report ` + "`builder bump`" + ` makes (CRD versions no longer
served, contract, images, RBAC, variables, namespaces), from the release's
components and metadata.yaml assets, read through the API as metadata is
(allowed hosts only, digest checked, at most 16 MiB). A release whose report
has a breaking change is blocked with that change as the reason, unless
--allow-breaking: then its step's command carries --allow-breaking too.

Give the tree's root (or every package, the core's included): contracts are
judged against the core provider found under the DIRs.

Exit status: 0 nothing to do, 1 steps exist, 2 usage, or the releases could
not be read.`

func newPlanCmd() *cobra.Command {
	var output string
	var api apiFlags
	var allowBreaking bool
	cmd := &cobra.Command{
		Use:   "plan [DIR...]",
		Short: "Order the `builder bump` steps that bring the providers to the newest stable releases the core can serve",
		Long:  planLong,
		Example: `  builder plan packages/system
  builder plan --output json . | jq -r '.steps[].command'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			check := func(ctx context.Context, dirs []string) (*plan.Plan, error) {
				return plan.FromUpstream(ctx, dirs, plan.Options{AllowBreaking: allowBreaking, Outdated: api.options(cmd.ErrOrStderr())})
			}
			return runLookup(cmd, args, output, check, printPlan, func(pl *plan.Plan) error {
				if len(pl.Steps) > 0 {
					return errSteps{len(pl.Steps)}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "human", "output format: human or json (schema: api/plan.schema.json)")
	addAPIFlags(f, &api, "another host (HOST[:PORT]) release assets may be read from (see `builder outdated --help`); repeatable", "log each API request to stderr")
	f.BoolVar(&allowBreaking, "allow-breaking", false, "plan releases whose safety report has a breaking change (a served CRD version removed without conversion); their commands carry --allow-breaking")
	return cmd
}

func printPlan(w io.Writer, pl *plan.Plan) {
	if pl.Core != nil {
		fmt.Fprintf(w, "core %s %s serves %s\n", pl.Core.Provider, pl.Core.Version, strings.Join(pl.Core.Serves, ", "))
	}
	for i, s := range pl.Steps {
		fmt.Fprintf(w, "%d. %s %s: %s -> %s (%s)\n   why: %s\n   %s\n", i+1, s.Package, s.Provider, s.From, s.To, s.Contract, s.Why, s.Command)
		for _, c := range s.Changes {
			mark := ""
			if c.Breaking {
				mark = " (breaking)"
			}
			fmt.Fprintf(w, "   change %s %s%s: %s\n", c.Kind, c.Object, mark, c.Detail)
		}
	}
	for _, b := range pl.Blocked {
		fmt.Fprintf(w, "blocked %s %s %s: %s\n", b.Package, b.Provider, b.Release, b.Reason)
	}
	for _, b := range pl.Failed {
		fmt.Fprintf(w, "? %s %s: %s\n", b.Package, b.Provider, b.Reason)
	}
	fmt.Fprintf(w, "%d step(s), %d release(s) blocked, %d provider(s) not checked\n", len(pl.Steps), len(pl.Blocked), len(pl.Failed))
}
