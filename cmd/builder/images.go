package main

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/report"
)

func newImagesCmd() *cobra.Command {
	var output string
	var maxInflate int64
	cmd := &cobra.Command{
		Use:   "images [DIR...]",
		Short: "List every container image the providers' components run, in the vendored YAML and inside the blobs",
		Long: `For every provider package under each DIR (default "."), list the container
images its releases run: the image of every container, initContainer and
ephemeralContainer of the Deployments, DaemonSets, StatefulSets, ReplicaSets,
Jobs, CronJobs and Pods of the vendored components YAML and of what the
vendored blob inflates to (within the inflate limit), with package, provider,
file and line. A blob that differs from its YAML shows both, and the human
output names the references only one of them holds.

--output list prints each distinct reference once a line, sorted: the input
of a mirroring script (oras copy, crane copy).`,
		Example: `  builder images packages/system
  builder images --output list packages/system | while read -r ref; do crane copy "$ref" "mirror.example/${ref#*/}"; done
  builder images --output json packages/system/capi-providers-core`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "human" && output != "json" && output != "list" {
				return usageError{Err: fmt.Errorf("--output %q: want human, json or list", output)}
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			ctx, stop := commandContext(cmd.Context())
			defer stop()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			rep := &images.Report{Images: []images.Image{}, Unique: []string{}}
			for _, root := range args {
				t, err := load.Tree(ctx, root, load.Options{Logger: quiet, Limit: maxInflate})
				if err != nil {
					return usageError{Err: err}
				}
				if len(t.Packages) == 0 {
					return usageError{Err: fmt.Errorf("%s holds no provider package; give the directory of a package or a tree of them", root)}
				}
				rep.Add(root, t)
			}
			w := cmd.OutOrStdout()
			switch output {
			case "json":
				return writeJSON(w, rep)
			case "list":
				printList(w, cmd.ErrOrStderr(), rep)
				return nil
			}
			printImages(w, rep)
			return nil
		},
	}
	cmd.Flags().Int64Var(&maxInflate, "max-inflate", blob.DefaultLimit, "stop inflating a blob past this many bytes (as verifier check --max-inflate)")
	cmd.Flags().StringVarP(&output, "output", "o", "human", "output format: human, json (schema: api/images.schema.json) or list (one distinct reference a line)")
	return cmd
}

func printImages(w io.Writer, rep *images.Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tPROVIDER\tIMAGE\tWORKLOAD\tWHERE")
	// Every value comes from the files listed: escaped, so a newline or a
	// terminal control in a name cannot forge a line or repaint the screen.
	safe := report.TermSafe
	for _, img := range rep.Images {
		provs := strings.Join(img.Providers, ",")
		if provs == "" {
			provs = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safe(img.Package), safe(provs), safe(img.Ref), safe(img.Workload+"/"+img.Container), safe(img.Where()))
	}
	tw.Flush()
	for _, img := range rep.Mismatches() {
		side, other := "YAML", "blob"
		if img.InBlob {
			side, other = "blob", "YAML"
		}
		fmt.Fprintf(w, "! %s: only the %s holds %s; the %s of release %s does not\n", safe(img.Where()), side, safe(img.Ref), other, safe(img.Release))
	}
	printUnread(w, rep)
	fmt.Fprintf(w, "%d image references, %d distinct\n", len(rep.Images), len(rep.Unique))
}

// printUnread names the workload documents whose images are not listed
// for sure (image-ref's findings).
func printUnread(w io.Writer, rep *images.Report) {
	for _, u := range rep.Unread {
		where := u.File + ":" + strconv.Itoa(u.Line)
		if u.InBlob {
			where += " (inflated)"
		}
		fmt.Fprintf(w, "! %s: images not listed for sure: %s\n", report.TermSafe(where), report.TermSafe(u.Why))
	}
}

// printList prints each distinct reference once a line. References are
// valid image references (internal/images lists no other), so none holds
// a newline or a control byte; one that did would not be printed. What is
// not listed for sure goes to stderr, the list stays a list.
func printList(w, errw io.Writer, rep *images.Report) {
	for _, ref := range rep.Unique {
		if images.ValidRef(ref) == nil {
			fmt.Fprintln(w, ref)
		}
	}
	printUnread(errw, rep)
}
