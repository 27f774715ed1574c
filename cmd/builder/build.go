package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// buildOptions are the flags of `builder build`.
type buildOptions struct {
	cache    string
	mirrors  []string
	offline  bool
	timeout  time.Duration
	retries  int
	maxBytes int64
	allow    []string
	dryRun   bool
	json     bool
	verbose  bool
	provider string
}

func newBuildCmd() *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build [DIR...]",
		Short: "Fetch pinned upstream files, verify SHA-256, apply patches, write vendored YAML and the reproducible blob",
		Long: `Build each provider package DIR (default "."): fetch every source its pin.yaml
(or Makefile URL + SHA-256 variables) pins, verify the SHA-256 before anything
is written, apply patches in order, and write the vendored files and the gzip
blob atomically. Files that already hold the right content are not touched;
an existing blob that inflates to exactly the new YAML with a clean header
(e.g. made by GNU gzip -9 -n) is kept. Blobs of the package that no pin
builds (a pin.yaml that lists one of its providers) are rebuilt from their
vendored YAML, as below.

A package that pins no download (no pin.yaml, no URL and SHA-256 variables)
is rebuilt from what it vendors: it is loaded and rendered as the verifier
loads it, and each blob its ConfigMaps carry becomes the reproducible gzip
of the vendored YAML the package layout pairs it with (by pin, content or,
for a YAML edited after its blob was made, name). The YAML is not touched
and nothing is fetched.

A download is redirected only to the host it was sent to, GitHub's
download storage or an --allow-host host; a redirect elsewhere is refused
before anything is sent there.

--provider Kind/name builds that provider's files only: the package's other
providers are neither fetched nor written, so nothing about them (a download
that fails, a patch that no longer applies) stops the build.

Exit status: 0 built, 1 a package failed (nothing of it was changed), 2 usage.`,
		Example: `  builder build examples/packages/capi-providers-infraprovider
  builder build --offline --cache /var/cache/pinseal packages/system/capi-providers-*`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.timeout <= 0 {
				return usageError{Err: fmt.Errorf("--timeout must be positive, got %s", o.timeout)}
			}
			if o.retries < 0 {
				return usageError{Err: fmt.Errorf("--retries must be 0 or more, got %d", o.retries)}
			}
			if len(args) == 0 {
				args = []string{"."}
			}
			return runBuild(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, args)
		},
	}
	f := cmd.Flags()
	addFetchFlags(f, &o.mirrors, &o.cache, &o.timeout, &o.retries)
	f.Int64Var(&o.maxBytes, "max-bytes", fetch.DefaultMaxBytes, "largest file downloaded (held in memory while it is hashed)")
	f.StringArrayVar(&o.allow, "allow-host", nil, "a host a download may be redirected to, besides the one it was sent to and GitHub's download storage (repeatable)")
	f.BoolVar(&o.offline, "offline", false, "use the cache (and file: URLs) only, never the network")
	f.BoolVar(&o.dryRun, "dry-run", false, "fetch, verify, patch and compress, but write nothing; report what would change")
	f.StringVar(&o.provider, "provider", "", "build this provider (Kind/name) of the package only; its other providers are not fetched or written")
	f.BoolVar(&o.json, "json", false, "print the results as JSON")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "log each step to stderr")
	return cmd
}

func runBuild(ctx context.Context, stdout, stderr io.Writer, o *buildOptions, dirs []string) error {
	ctx, stop := commandContext(ctx)
	defer stop()

	fetcher, err := fetcherFor(o.mirrors, o.cache, o.timeout, o.retries)
	if err != nil {
		return err
	}
	fetcher.Offline = o.offline
	boundFetcher(fetcher, o.maxBytes, o.allow)
	interactive := isTerminal(stderr)
	if interactive {
		fetcher.Progress = stderr
	}
	log := newLogger(stderr, o.verbose, slog.LevelInfo)

	var results []*build.Result
	failed := 0
	for _, dir := range dirs {
		// A bump killed between two renames: restore the package first.
		if restored, err := bump.Recover(dir); err != nil {
			failed++
			fmt.Fprintln(stderr, "builder:", err)
			continue
		} else if len(restored) > 0 {
			fmt.Fprintf(stderr, "builder: %s: restored %d files left by an interrupted bump\n", dir, len(restored))
		}
		res, err := build.Build(ctx, dir, build.Options{Fetcher: fetcher, Logger: log, DryRun: o.dryRun, Provider: o.provider})
		if err != nil {
			failed++
			fmt.Fprintln(stderr, "builder:", err)
			if errors.Is(err, context.Canceled) {
				break
			}
			continue
		}
		results = append(results, res)
		if !o.json {
			printResult(stdout, dir, res)
		}
	}
	if o.json {
		if results == nil {
			results = []*build.Result{}
		}
		for _, r := range results {
			if r.Files == nil {
				r.Files = []build.FileResult{} // api/build.schema.json: always a list
			}
		}
		if err := writeJSON(stdout, results); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d packages failed; their files are unchanged", failed, len(dirs))
	}
	return nil
}

func printResult(w io.Writer, dir string, res *build.Result) {
	if res.FromVendored {
		fmt.Fprintf(w, "%s (no pins: each blob rebuilt from its vendored YAML; nothing was fetched)\n", dir)
	} else {
		note := ""
		if len(res.Reused) > 0 {
			note = fmt.Sprintf("; %d fetched, %d vendored files already held their pinned bytes", len(res.Fetched), len(res.Reused))
		}
		fmt.Fprintf(w, "%s (pins from %s%s)\n", dir, res.Pins, note)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range res.Files {
		note := ""
		if f.Note != "" {
			note = "  # " + f.Note
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d bytes\tsha256:%s%s\n", f.Status, f.Path, f.Size, f.SHA256, note)
	}
	tw.Flush()
	for _, r := range res.Removed {
		fmt.Fprintf(w, "  removed  %s  (left by a killed build)\n", r)
	}
}

// isTerminal reports whether w is a terminal (progress goes there only).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
