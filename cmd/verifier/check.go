package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pinseal/pinseal/internal/app/cli"
	"github.com/pinseal/pinseal/internal/app/crdcache"
	"github.com/pinseal/pinseal/internal/app/pkgcache"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/render"

	"github.com/pinseal/pinseal/internal/app/history"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// checkOptions are the flags of `verifier check`.
type checkOptions struct {
	output     string
	policyFile string
	namespace  string
	workers    int
	maxInflate int64
	listChecks bool
	render     render.Limits
	exclude    []string
	base       string // --base REV: the history gate
	noCache    bool   // --no-cache: load every package and judge every CRD afresh
	// Registry checks (verify.go holds the shared flags).
	registry      string
	allowRegistry []string // --allow-registry: where spec.fetchConfig.oci may be read from
	keys          []string
	plain         bool
	allow         []string // --allow-host: other hosts the registry may send us to
}

// errFindings makes `verifier check` exit 1 (error findings) without being a
// usage error.
type errFindings struct{ n int }

func (e errFindings) Error() string {
	if e.n == 1 {
		return "1 error finding"
	}
	return fmt.Sprintf("%d error findings", e.n)
}

func newCheckCmd() *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [ROOT]",
		Short: "Verify every provider package under ROOT (default .): blobs, YAML, versions, selectors, metadata, pins",
		Long: `Verify every provider package under ROOT (default: the current directory).

Every Helm chart or plain manifest directory holding cluster-api-operator
providers or their ConfigMaps is loaded (charts rendered with Helm, default
values or the policy's values files) and checked by every check the tree
alone answers:
` + wrapIDs(idsNeeding("tree")) + `
oci-source reads spec.fetchConfig.oci as the cluster-api-operator reads
it (what it can parse, and that it fetches the tag spec.version names;
no registry is contacted). --list-checks prints what each check holds.
The policy (built-in policies/default.yaml, or --policy FILE) sets each
check's severity and waivers.

With --registry PREFIX (HOST[:PORT]/PATH, or oci-layout:DIR) every
provider's release artifact PREFIX/<type>-<name>:<spec.version> is read
and the registry checks run too:
` + wrapIDs(idsNeeding("registry", "registry or base")) + `
Signatures are verified with the policy's keys plus each --key FILE, and
its keyless identities (under its trustedRoot and tlog rule), in every form
cosign writes (Sigstore bundles as OCI referrers, legacy .sig/.att images);
the policy's builders are the allowed builder ids. Registry credentials come from the docker config.

A provider with spec.fetchConfig.oci ([http://]HOST[:PORT]/REPO[:TAG]; no
tag means spec.version) is checked against that artifact instead, with the
same checks (one the operator cannot read is oci-source's alone and is
not looked up), but only when HOST is the --registry host or given with
--allow-registry HOST[/PATH] (repeatable; without --registry only such
providers are checked). A provider fetching from another registry is a
registry-digest finding that names the registry; nothing is contacted.

With --base REV the tree is also compared with itself at REV (a branch,
tag, commit or HEAD~N of the git repository holding ROOT, read from its
objects; no git program runs): a provider whose release name is REV's but
whose components or metadata differ is version-reused (clusters that
installed the name never get the change), and one whose release name is
lower than REV's is version-downgrade. A ROOT outside git or a REV that
does not resolve exits 2.

Charts that hold no provider and none of their ConfigMaps, or that do not
render and name no cluster-api-operator group or label, are listed as
skipped (with the reason), never as findings. --exclude GLOB (repeatable)
and the policy's exclude list keep directories out altogether.

Exit status: 0 no error findings, 1 error findings, 2 usage or
configuration error (bad flag, bad policy file, ROOT missing or
holding no provider packages).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{Err: fmt.Errorf("check takes at most one ROOT, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.listChecks {
				return check.WriteMarkdown(cmd.OutOrStdout())
			}
			root := "."
			if len(args) == 1 {
				root = args[0]
			}
			return runCheck(cmd, root, o)
		},
	}
	addCheckFlags(cmd.Flags(), o)
	return cmd
}

// idsNeeding lists the catalog's checks that read one of needs
// (check.Check.Needs), in catalog order.
func idsNeeding(needs ...string) []string {
	var ids []string
	for _, c := range check.Catalog() {
		if slices.Contains(needs, c.Needs()) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// wrapIDs lays check IDs out as indented lines of at most 74 columns.
func wrapIDs(ids []string) string {
	var b strings.Builder
	line := " "
	for i, id := range ids {
		word := " " + id
		if i < len(ids)-1 {
			word += ","
		}
		if len(line)+len(word) > 74 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += word
	}
	return b.String() + line + "\n"
}

// addCheckFlags adds the flags of `verifier check`.
func addCheckFlags(f *pflag.FlagSet, o *checkOptions) {
	f.StringVarP(&o.output, "output", "o", string(report.FormatHuman), "output format: human, json, sarif or github")
	f.StringVar(&o.policyFile, "policy", "", "policy file (default: the built-in policies/default.yaml)")
	f.StringVar(&o.namespace, "namespace", "", "namespace of packages that name none (default \"default\")")
	f.IntVar(&o.workers, "workers", 0, "packages loaded at once (default: number of CPUs)")
	f.BoolVar(&o.listChecks, "list-checks", false, "print the check catalog (Markdown) and exit")
	f.BoolVar(&o.noCache, "no-cache", false, "load every package and judge every CRD afresh: neither read nor write what is kept in $XDG_CACHE_HOME/pinseal")
	f.Int64Var(&o.maxInflate, "max-inflate", blob.DefaultLimit, "stop inflating a blob past this many bytes (a gzip bomb is a finding)")
	f.StringArrayVar(&o.exclude, "exclude", nil, "do not enter directories under ROOT matching `GLOB` (a path.Match pattern of slash paths relative to ROOT, e.g. packages/apps/*); repeatable; added to the policy's exclude list")
	f.StringVar(&o.base, "base", "", "also compare every provider with the same tree at git revision `REV` (branch, tag, commit, HEAD~1): a release name whose bytes changed is version-reused, a lower one version-downgrade")
	f.StringVar(&o.registry, "registry", "", "also compare each provider with its release artifact under PREFIX (HOST[:PORT]/PATH or oci-layout:DIR) and verify its signature and provenance")
	f.StringArrayVar(&o.allowRegistry, "allow-registry", nil, "registry HOST[:PORT] (or repository prefix HOST[:PORT]/PATH) that providers' spec.fetchConfig.oci may be read from (the --registry host is allowed already); repeatable; turns the registry checks on for those providers")
	addKeyFlags(f, &o.keys, &o.plain, &o.allow)
	addRenderFlags(f, &o.render)
}

// addRenderFlags adds the chart render bounds.
func addRenderFlags(f *pflag.FlagSet, r *render.Limits) {
	f.DurationVar(&r.Timeout, "render-timeout", render.DefaultTimeout, "stop rendering a chart after this long (a package-load finding names the template)")
	f.Int64Var(&r.MaxMemory, "render-max-memory", render.DefaultMaxMemory, "stop rendering a chart that takes more than this many bytes of memory")
	f.Int64Var(&r.MaxOutput, "render-max-output", render.DefaultMaxOutput, "stop rendering a chart whose rendered manifests pass this many bytes")
}

// checkRender refuses render bounds that are not positive.
func checkRender(r render.Limits) error {
	if r.Timeout <= 0 || r.MaxMemory <= 0 || r.MaxOutput <= 0 {
		return usageError{Err: errors.New("--render-timeout, --render-max-memory and --render-max-output must be positive")}
	}
	return nil
}

// tuneGC gives a one-shot check a lazier garbage collector: the heap may
// grow to 2.3 times what is live (GOGC=130). Lazier still costs memory
// over the peak-RSS targets (120 MiB at 100 real-shaped provider
// packages, 256 MiB at 1,000), as what is live grows with the packages
// the model holds while judging CRDs allocates much: at 17e4ccb on 100
// packages GOGC=150 peaks at 124–125 MiB for 3.9–4.0 s of CPU, 130 at
// 117–118 MiB for 4.0, 110 at 109–110 MiB for 4.2–4.3; on 1,000 packages
// 150 peaks at 269–278 MiB, 130 at 238 MiB for 5 % more CPU.
// It sets no memory limit: a limit below what a check keeps live makes
// the collector run without end, and a fixed 192 MiB limit did so from
// about 150 packages (300 packages: 45 s and 27 s of system time
// returning memory, against 12 s without it). A GOGC or GOMEMLIMIT the
// user sets wins. The service (serve) keeps Go's defaults.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(130)
}

// runCheck is `verifier check ROOT`: the flags checked, the tree verified,
// the report written.
func runCheck(cmd *cobra.Command, root string, o *checkOptions) error {
	tuneGC()
	format, pol, err := outputAndPolicy(o.output, o.policyFile)
	if err != nil {
		return err
	}
	if err := o.validate(root); err != nil {
		return err
	}
	opts, err := o.verifyOptions(pol)
	if err != nil {
		return err
	}
	// Ctrl-C ends the check and kills the render children.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r, err := o.verify(ctx, root, opts)
	if err != nil {
		return err
	}
	if r.Summary.Packages == 0 && r.Summary.Errors == 0 {
		return nothingChecked(cmd, root, r, format)
	}
	return writeReport(cmd, r, format)
}

// validate refuses flags and a ROOT no check can be made of (usage
// errors).
func (o *checkOptions) validate(root string) error {
	if o.workers < 0 || o.maxInflate <= 0 {
		return usageError{Err: errors.New("--workers must be >= 0 and --max-inflate > 0")}
	}
	if err := checkRender(o.render); err != nil {
		return err
	}
	if o.namespace != "" {
		if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
			return usageError{Err: fmt.Errorf("--namespace %q is not a Kubernetes namespace name: %s", o.namespace, strings.Join(errs, "; "))}
		}
	}
	st, err := os.Stat(root)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return usageError{Err: fmt.Errorf("ROOT %s: %w (give the root directory of a tree of packages)", root, err)}
	}
	if !st.IsDir() {
		return usageError{Err: fmt.Errorf("ROOT %s is not a directory (give the root directory of a tree of packages)", root)}
	}
	for _, g := range o.exclude {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" {
			return usageError{Err: fmt.Errorf("--exclude %q is not a path pattern relative to ROOT (e.g. packages/apps/*)", g)}
		}
	}
	return nil
}

// verifyOptions are what the flags and the policy ask of the
// verification (the registry checks with --registry).
func (o *checkOptions) verifyOptions(pol *policy.Policy) (verify.Options, error) {
	opts := verify.Options{
		Options: load.Options{
			Exclude:   o.exclude,
			Namespace: o.namespace,
			Limit:     o.maxInflate,
			Workers:   o.workers,
			Render:    o.render,
		},
		Policy: pol,
	}
	var err error
	opts.Registry, err = registryOf(pol, o)
	return opts, err
}

// verify checks the tree at root with render children of its own, closed
// before it returns (so that their CPU time and memory count in this
// process's, for time(1)), the --base comparison and the caches, which
// it saves once the tree was checked. A tree that cannot be checked at
// all is a usage error, not a findings result.
func (o *checkOptions) verify(ctx context.Context, root string, opts verify.Options) (*report.Report, error) {
	opts.Sandbox = render.New(nil)
	defer opts.Sandbox.Close()
	c := openCaches(o.noCache, slog.Default())
	if c.crd != nil {
		opts.CRDMemo = c.crd
	}
	// One CRD judge for the tree and its base: a CRD both hold is judged
	// once.
	opts.CRDs = check.NewCRDJudge(opts.CRDMemo)
	if o.base != "" {
		base, err := history.Base(ctx, root, o.base, history.BaseOptions{Verify: opts})
		if err != nil {
			return nil, usageError{Err: fmt.Errorf("--base: %w", err)}
		}
		opts.Extra = append(opts.Extra, history.Checks(base)...)
	}
	c.use(&opts)
	_, r, err := verify.Run(ctx, root, opts)
	if err != nil {
		return nil, usageError{Err: err}
	}
	c.save()
	return r, nil
}

// nothingChecked is the exit of a check that found no provider package
// and no error: a CI gate pointed at the wrong directory must not pass on
// nothing (exit 2), even when a tree-wide warning was found (an unpinned
// download in a script); a machine-readable format still gets its
// document, with why each chart was skipped, and the human one the
// warnings.
func nothingChecked(cmd *cobra.Command, root string, r *report.Report, format report.Format) error {
	err := fmt.Errorf("ROOT %s holds no provider packages: nothing was checked (give the root of a tree of Helm charts or manifest directories with cluster-api-operator providers or their ConfigMaps)", root)
	if format != report.FormatHuman || len(r.Findings) > 0 {
		if werr := report.Write(cmd.OutOrStdout(), r, format, report.Options{Rules: check.Rules()}); werr != nil {
			return werr
		}
	} else if reasons := skipReasons(r.Skipped, 10); reasons != "" {
		err = fmt.Errorf("%w; skipped:\n%s", err, reasons)
	}
	return usageError{Err: err}
}

// skipReasons lists up to n skipped charts with their reasons, one a line.
func skipReasons(skipped []report.Skipped, n int) string {
	var b strings.Builder
	for i, s := range skipped {
		if i == n {
			fmt.Fprintf(&b, "  ... and %d more (--output json lists each)\n", len(skipped)-n)
			break
		}
		fmt.Fprintf(&b, "  %s: %s\n", s.Path, s.Reason)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeReport names the settings of r's hints by the command's flags,
// writes r to the command's output in format and returns errFindings when
// r has findings that count.
func writeReport(cmd *cobra.Command, r *report.Report, format report.Format) error {
	r.NameSettings(cli.SettingNames(cmd, settingFlags))
	out := cmd.OutOrStdout()
	if err := report.Write(out, r, format, report.Options{Color: colorFor(out), Rules: check.Rules()}); err != nil {
		return err
	}
	if r.ExitCode() != 0 {
		return errFindings{r.Summary.Errors}
	}
	return nil
}

// colorFor reports whether w is a terminal that wants colour (NO_COLOR
// unset, TERM not dumb).
func colorFor(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// caches are what `verifier check` keeps across runs in the user's cache
// directory ($XDG_CACHE_HOME/pinseal): the loaded packages and
// components-apply's CRD verdicts. Either is nil when off.
type caches struct {
	pkgs *pkgcache.Store
	crd  *crdcache.Cache
	log  *slog.Logger
}

// openCaches opens the caches, none with --no-cache or when there is no
// cache directory; a cache file not believed is logged at debug level.
func openCaches(off bool, log *slog.Logger) caches {
	c := caches{log: log}
	if off {
		return c
	}
	dir, err := crdcache.Dir()
	if err != nil {
		log.Debug("no cache", "err", err)
		return c
	}
	build := crdcache.Build()
	c.pkgs = pkgcache.Open(filepath.Join(dir, "packages"), build, log)
	c.crd = crdcache.Open(dir, build)
	if why := c.crd.Ignored(); why != "" {
		log.Debug("the CRD verdict cache was ignored", "why", why)
	}
	return c
}

// use has the verification read and fill the caches.
func (c caches) use(opts *verify.Options) {
	if c.pkgs != nil {
		opts.Cache = c.pkgs
	}
	if c.crd != nil {
		opts.CRDMemo = c.crd
	}
}

// save writes the CRD verdicts and trims the package cache to its bound;
// a failure is a warning (the caches are an optimisation).
func (c caches) save() {
	if c.crd != nil {
		if err := c.crd.Save(); err != nil {
			c.log.Warn("the CRD verdict cache was not written", "err", err)
		}
	}
	if c.pkgs != nil {
		if err := c.pkgs.Trim(pkgcache.DefaultMaxBytes); err != nil {
			c.log.Warn("the package cache was not trimmed", "err", err)
		}
	}
}
