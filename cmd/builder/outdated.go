package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/outdated"
)

// errOutdated makes `builder outdated` exit 1 after printing its report.
type errOutdated struct{ n int }

func (e errOutdated) Error() string {
	return fmt.Sprintf("%d provider(s) have a newer upstream release", e.n)
}

func newOutdatedCmd() *cobra.Command {
	var output string
	var api apiFlags
	cmd := &cobra.Command{
		Use:   "outdated [DIR...]",
		Short: "List each provider's pinned version and the newer upstream releases on GitHub",
		Long: `For every provider under each DIR (default "."), print the pinned upstream
version and the newer releases of the GitHub repository its pinned URLs
point at (GET /repos/OWNER/REPO/releases, every page). Pre-releases are
listed apart and do not count as outdated; drafts are ignored.

For every newer stable release it reads the release's own metadata.yaml
asset through the API (at most 64 KiB, checked against the digest the API
gives) and reports the contract of its series and whether the tree's core
provider serves it; a "!" line names the newest compatible release when the
newest is not. Assets are read only from the API's host and the hosts
--allow-host names (with the default --api-url also GitHub's asset hosts:
github.com, objects.githubusercontent.com, release-assets.githubusercontent.com).

The token comes from GITHUB_TOKEN when set (never from a flag); --api-url
points at GitHub Enterprise (https://HOST/api/v3) or a mirror of the API.

Exit status: 0 nothing outdated, 1 a provider has a newer stable release,
2 usage, or the releases could not be read (API unreachable, rate limit).`,
		Example: `  builder outdated packages/system
  GITHUB_TOKEN=$(cat ~/.config/gh-token) builder outdated --output json packages/system/capi-providers-*`,
		RunE: func(cmd *cobra.Command, args []string) error {
			check := func(ctx context.Context, dirs []string) (*outdated.Report, error) {
				return outdated.LookUp(ctx, dirs, api.options(cmd.ErrOrStderr()))
			}
			return runLookup(cmd, args, output, check, printOutdated, func(rep *outdated.Report) error {
				if rep.Outdated > 0 {
					return errOutdated{rep.Outdated}
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "human", "output format: human or json")
	addAPIFlags(f, &api, "another host (HOST[:PORT]) release assets may be read from: one the API's asset URLs or their redirects name (GitHub's own asset hosts are allowed with the default --api-url); repeatable", "log each API request (status, rate limit left) to stderr")
	return cmd
}

func printOutdated(w io.Writer, rep *outdated.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tPROVIDER\tPINNED\tNEWER\tPRE-RELEASES")
	for _, p := range rep.Providers {
		tags := func(rs []outdated.Release) string {
			if len(rs) == 0 {
				return "-"
			}
			var s []string
			for _, r := range rs {
				s = append(s, r.Tag)
			}
			if len(s) > 5 {
				s = append(s[:5], fmt.Sprintf("(+%d)", len(rs)-5))
			}
			return strings.Join(s, " ")
		}
		newer := tags(p.Newer)
		if p.Error != "" {
			newer = "?"
		}
		pinned := p.Version
		if pinned == "" {
			pinned = "-" // nothing pinned (downloaded at install time)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Package, p.Provider, pinned, newer, tags(p.PreReleases))
	}
	tw.Flush()
	for i := range rep.Providers {
		p := &rep.Providers[i]
		if p.Error != "" {
			fmt.Fprintf(w, "? %s %s: %s\n", p.Package, p.Provider, p.Error)
		} else if s := rep.Summary(p); s != "" {
			fmt.Fprintf(w, "! %s %s: %s\n", p.Package, p.Provider, s)
		}
	}
	fmt.Fprintf(w, "%d outdated, %d could not be checked, %d providers\n", rep.Outdated, rep.Failed, len(rep.Providers))
}
