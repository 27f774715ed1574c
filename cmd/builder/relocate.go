package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/pinseal/pinseal/internal/app/relocate"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/pin"
)

func newRelocateCmd() *cobra.Command {
	var maps []string
	var provider string
	var dryRun, asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "relocate DIR --map FROM=TO [--map FROM=TO...]",
		Short: "Move a package's images to a mirror prefix, in the vendored YAML and the blob together",
		Long: `Rewrite the image of every workload container of the package's components
whose reference is FROM, or continues it with /, : or @, to start with TO
instead (the longest FROM wins), in the vendored YAML and inside the blob
together: the blob becomes the reproducible gzip of the new YAML, byte for
byte what builder build writes. Nothing else in the files changes.

A package with a pin.yaml records the relocation there (relocate:), so
builder build and builder bump apply it again and the verifier reverses it
before comparing the components file with its pin. A --map whose FROM is
already recorded replaces that entry. A package without pins is relocated
in place (its blob is rebuilt from the relocated YAML).

Running it again changes nothing. The files are staged, then renamed under
the bump journal: a failed or killed run leaves the package as it was
(builder build and builder bump roll a killed one back).`,
		Example: `  builder relocate packages/system/capi-providers-core --map registry.k8s.io/cluster-api=mirror.example:5000/capi
  builder relocate DIR --map registry.k8s.io=mirror.example/k8s --map gcr.io/kubebuilder=mirror.example/kubebuilder --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rs pin.Relocations
			for _, m := range maps {
				r, err := relocate.ParseMap(m)
				if err != nil {
					return usageError{Err: err}
				}
				rs = append(rs, r)
			}
			if len(rs) == 0 {
				return usageError{Err: fmt.Errorf("give at least one --map FROM=TO")}
			}
			ctx, stop := commandContext(cmd.Context())
			defer stop()
			dir := args[0]
			if restored, err := bump.Recover(dir); err != nil {
				return err
			} else if len(restored) > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "builder: %s: restored %d files left by an interrupted bump or relocation\n", dir, len(restored))
			}
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			if verbose {
				log = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			}
			res, err := relocate.Package(ctx, dir, relocate.Options{Maps: rs, Provider: provider, DryRun: dryRun, Log: log, Commit: journaled})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return writeJSON(w, res)
			}
			printRelocation(w, res, dryRun)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&maps, "map", nil, "FROM=TO: move images under the prefix FROM to TO (repeatable)")
	cmd.Flags().StringVar(&provider, "provider", "", "relocate only this provider's release (Kind/name, e.g. CoreProvider/cluster-api)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would change; write nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log each step")
	return cmd
}

// journaled commits with the bump journal.
func journaled(dir string, files []relocate.File) error {
	ws := make([]bump.Write, len(files))
	for i, f := range files {
		ws[i] = bump.Write{Path: f.Path, Data: f.Data}
	}
	return bump.Commit(dir, ws)
}

func printRelocation(w io.Writer, res *relocate.Result, dryRun bool) {
	for _, img := range res.Images {
		where := fmt.Sprintf("%s:%d", img.File, img.Line)
		if img.InBlob {
			where += " (inflated)"
		}
		fmt.Fprintf(w, "%s: %s -> %s\n", where, img.From, img.To)
	}
	verb := "wrote"
	if dryRun {
		verb = "would write"
	}
	switch {
	case len(res.Files) == 0:
		fmt.Fprintf(w, "%s: already relocated; nothing to write\n", res.Dir)
	default:
		fmt.Fprintf(w, "%s: %s %v\n", res.Dir, verb, res.Files)
	}
	if !res.Recorded {
		fmt.Fprintln(w, "note: the package has no pin.yaml, so the relocation is not recorded; builder build keeps it (it rebuilds the blobs from the relocated YAML)")
	}
}
