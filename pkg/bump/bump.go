// Package bump moves one provider of a package to a new upstream release.
//
// It does so in one atomic, verified step: every place the version lives (pin.yaml,
// Makefile version variables and literal URLs and digests, a Dockerfile
// ARG VERSION=, the ConfigMap name, spec.version, the version label, the
// values.yaml keys the templates read) changes together with the vendored
// files and the blob.
//
// Everything is staged in a copy of the package: fetch (SHA-256 verified:
// the digest comes from the caller, a published checksums file or, only
// when asked, trust on first use), text edits, the build (pkg/build: patches,
// reproducible blob), then the offline checks on the staged package
// against the rest of the tree (blob-yaml, configmap-version, pin-version,
// pin-digest, metadata-series, contract, selector-*), compared with the
// same checks on the tree before the bump: a finding the bump introduces,
// or one about what it changes (the bumped provider, a file it rewrites),
// refuses it; one that was there before and that the bump does not touch
// (another provider's blob header) is reported as pre-existing and does
// not block. The safety report (pkg/changes) compares the provider's
// components and metadata before and after: a change that breaks what
// clusters run today (a served CRD version gone without a conversion
// webhook, a contract the core does not serve) refuses the bump unless
// Options.AllowBreaking. Only then are the changed files renamed into place, under a
// journal: a bump killed between two renames is rolled back by the next
// bump (or Recover), so the package ends byte for byte as it was.
package bump

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/pinseal/pinseal/pkg/changes"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// ErrNoDigest is wrapped when a new source URL has no SHA-256: pins are
// never guessed; give it (Options.SHA256, from the release's published
// checksums) or set Options.TrustOnFirstUse.
var ErrNoDigest = errors.New("pins are never guessed: give its SHA-256 from the release's published checksums, or trust the digest of what is downloaded now")

// ErrWhichProvider is wrapped when the package has several providers and
// Options.Provider names none.
var ErrWhichProvider = errors.New("say which provider (Kind/name) to bump")

// Options configure a bump.
type Options struct {
	// Provider is Kind/name of the provider to bump; "" when the package
	// has exactly one.
	Provider string
	// To is the new upstream version (vX.Y.Z).
	To string
	// Release is the new release name (ConfigMap name and spec.version);
	// "" keeps the current suffix: v0.6.12-bootstrap-talos ->
	// v0.6.13-bootstrap-talos.
	Release string
	// SHA256 pins new source URLs (canonical, as written in the pin).
	SHA256 map[string]string
	// TrustOnFirstUse takes the digest of a source without one from the
	// download itself (reported in Result.Digests).
	TrustOnFirstUse bool
	// DryRun does everything but the renames.
	DryRun bool
	// AllowBreaking lets a bump through whose new release breaks what
	// clusters run today (changes.Breaking; see BreakingError).
	AllowBreaking bool
	// Fetcher downloads the sources (its Mirrors apply). Required.
	Fetcher *fetch.Fetcher
	// Tree is the root of the tree whose core provider and namespaces the
	// staged package is checked against; "" means the nearest directory
	// above the package holding .git, else the package alone.
	Tree string
	// Logger receives progress; nil means slog.Default().
	Logger *slog.Logger
}

// Version is one side of a bump.
type Version struct {
	Version string `json:"version"`
	Release string `json:"release"`
}

// Digest is the pin of one new source and where it came from.
type Digest struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	// From: "sha256-flag", "checksums" (a checksums file of the release),
	// "trust-on-first-use", or "unchanged" (a source the bump did not move).
	From string `json:"from"`
}

// Digest origins.
const (
	FromFlag      = "sha256-flag"
	FromChecksums = "checksums"
	FromTOFU      = "trust-on-first-use"
	FromUnchanged = "unchanged"
)

// File is one file a bump changes (or, in a dry run, would change).
type File struct {
	Path      string `json:"path"`                // slash path relative to the package directory
	Kind      string `json:"kind"`                // "text" (edited in place) or "vendored" (built)
	Status    string `json:"status"`              // "modified" or "added"
	OldSHA256 string `json:"oldSha256,omitempty"` // "" for an added file
	NewSHA256 string `json:"newSha256"`
	Diff      string `json:"diff,omitempty"` // unified diff, text files only
}

// Result is what a bump did or, in a dry run, would do.
type Result struct {
	Package  string   `json:"package"`
	Provider string   `json:"provider"`
	From     Version  `json:"from"`
	To       Version  `json:"to"`
	Pins     string   `json:"pins"`               // file the pins are written to
	PinsNote string   `json:"pinsNote,omitempty"` // e.g. a pin.yaml added because the Makefile pins no digest
	Contract string   `json:"contract,omitempty"` // contract of the new release's series
	Digests  []Digest `json:"digests"`
	Files    []File   `json:"files"`
	// Changes are what the new release changes for the clusters running
	// the old one (changes.Compare), breaking ones first.
	Changes []changes.Change `json:"changes"`
	DryRun  bool             `json:"dryRun"`
	// Recovered are files restored from an interrupted bump before this one.
	Recovered []string `json:"recovered,omitempty"`
	// PreExisting are the gate's error findings about the package that
	// were there before the bump and that it does not touch (see gate):
	// they did not block it, and are still there after it.
	PreExisting []report.Finding `json:"preExisting,omitempty"`
}

// RefusedError is a bump stopped by a check on the staged package; nothing
// was changed.
type RefusedError struct {
	Package string
	// Findings are what refuses the bump: introduced by it, or about what
	// it changes.
	Findings []report.Finding
	// PreExisting are findings that were there before and that the bump
	// does not touch: they do not refuse it.
	PreExisting []report.Finding
}

func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bump of %s refused, nothing was changed: the staged package fails %d check(s):", e.Package, len(e.Findings))
	for _, f := range e.Findings {
		writeFinding(&b, f, true)
	}
	if len(e.PreExisting) > 0 {
		fmt.Fprintf(&b, "\nnot counted: %d finding(s) there before the bump that it does not touch:", len(e.PreExisting))
		for _, f := range e.PreExisting {
			writeFinding(&b, f, false)
		}
	}
	return b.String()
}

// writeFinding writes "\n  check provider (file): message; hint".
func writeFinding(b *strings.Builder, f report.Finding, hint bool) {
	fmt.Fprintf(b, "\n  %s", f.Check)
	if f.Provider != "" {
		fmt.Fprintf(b, " %s", f.Provider)
	}
	if f.File != "" {
		fmt.Fprintf(b, " (%s)", f.File)
	}
	fmt.Fprintf(b, ": %s", f.Message)
	if hint && f.Hint != "" {
		fmt.Fprintf(b, "; %s", f.Hint)
	}
}

// Bump moves one provider of the package in dir to opts.To. On error
// nothing in dir has changed.
func Bump(ctx context.Context, dir string, opts Options) (*Result, error) {
	if err := checkOptions(dir, opts); err != nil {
		return nil, err
	}
	b := &bump{dir: dir, opts: opts, log: opts.Logger, quiet: slog.New(slog.DiscardHandler)}
	if b.log == nil {
		b.log = slog.Default()
	}
	if err := b.resolveDir(); err != nil {
		return nil, err
	}
	if err := b.recoverInterrupted(); err != nil {
		return nil, err
	}
	if err := b.selectTarget(ctx); err != nil {
		return nil, err
	}
	if err := b.pinNewSources(); err != nil {
		return nil, err
	}
	if err := b.readChecksums(ctx); err != nil {
		return nil, err
	}
	removeStaleStaging()
	cache, err := os.MkdirTemp("", "pinseal-bump-cache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	b.staged = &fetch.Fetcher{CacheDir: cache, Offline: true, BaseDir: b.real, Logger: b.quiet}
	if err := b.fetchSources(ctx); err != nil {
		return nil, err
	}
	if b.stage, err = os.MkdirTemp("", "pinseal-bump-stage-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(b.stage)
	if err := b.stageEdits(); err != nil {
		return nil, err
	}
	if err := b.buildStaged(ctx); err != nil {
		return nil, err
	}
	if err := b.collectChanges(); err != nil {
		return nil, err
	}
	if err := b.compareReleases(); err != nil {
		return nil, err
	}
	if err := b.checkStaged(ctx); err != nil {
		return nil, err
	}
	if opts.DryRun {
		return b.res, nil
	}
	if err := commit(b.real, b.changes); err != nil {
		return nil, fmt.Errorf("bump %s: %w", dir, err)
	}
	b.log.Info("bumped", "provider", b.prov.ID(), "release", b.newRel, "files", len(b.changes))
	return b.res, nil
}

// bump is one bump as its steps (Bump) fill it in.
type bump struct {
	dir   string // as the caller gave it, for messages
	opts  Options
	log   *slog.Logger
	quiet *slog.Logger

	real string // dir, absolute, symlinks resolved
	res  *Result

	// The tree before the bump, the package, the provider and its layout.
	tree   *model.Tree
	pkg    *model.Package
	prov   *model.Provider
	lay    *Target
	newRel string

	// The new sources with their digests, and the new checksums file.
	srcs []pin.Source
	sums string

	fetcher fetch.Fetcher  // the caller's, rooted at the package
	staged  *fetch.Fetcher // offline, over the cache the sources are put in

	stage     string          // the staging copy of the package
	textPaths map[string]bool // the files edited as text (package-relative)
	changes   []change        // the files the bump writes
}

// checkOptions refuses options that cannot make a bump.
func checkOptions(dir string, opts Options) error {
	if opts.Fetcher == nil {
		return errors.New("bump: Options.Fetcher is nil")
	}
	if !pin.ValidVersion(opts.To) {
		return fmt.Errorf("bump %s: target version %q is not a version like v1.2.3", dir, opts.To)
	}
	if opts.Release != "" && !pin.MatchesRelease(opts.To, opts.Release) {
		return fmt.Errorf("bump %s: release %q is not a release of %s; name it %s or %s-<suffix>", dir, opts.Release, opts.To, opts.To, opts.To)
	}
	for u, h := range opts.SHA256 {
		if !pin.ValidSHA256(h) {
			return fmt.Errorf("bump %s: SHA-256 %s=%s: not 64 lowercase hex digits", dir, u, h)
		}
	}
	return nil
}

// resolveDir finds the package directory the bump writes to.
func (b *bump) resolveDir() error {
	abs, err := filepath.Abs(b.dir)
	if err != nil {
		return err
	}
	if b.real, err = filepath.EvalSymlinks(abs); err != nil {
		return fmt.Errorf("bump %s: %w (give a provider package directory)", b.dir, err)
	}
	b.res = &Result{Package: b.dir, DryRun: b.opts.DryRun, Changes: []changes.Change{}}
	return nil
}

// recoverInterrupted restores the files of a bump killed before it
// finished (its journal is in the package); a dry run refuses instead.
func (b *bump) recoverInterrupted() error {
	if _, err := os.Stat(filepath.Join(b.real, JournalName)); err != nil {
		return nil
	}
	if b.opts.DryRun {
		return fmt.Errorf("bump %s: an interrupted bump left %s; run a bump that is not a dry run (it restores the package first)", b.dir, JournalName)
	}
	var err error
	if b.res.Recovered, err = Recover(b.real); err != nil {
		return fmt.Errorf("bump %s: restoring an interrupted bump: %w", b.dir, err)
	}
	b.log.Warn("restored the files of an interrupted bump", "files", b.res.Recovered)
	return nil
}

// selectTarget loads the tree and finds the package, the provider to bump,
// its layout and the new release's name.
func (b *bump) selectTarget(ctx context.Context) error {
	root := b.opts.Tree
	if root == "" {
		root = findRoot(b.real)
	}
	tree, err := load.Tree(ctx, root, load.Options{Logger: b.quiet})
	if err != nil {
		return fmt.Errorf("bump %s: %w", b.dir, err)
	}
	pkg := findPackage(tree, b.real)
	if pkg == nil {
		return fmt.Errorf("bump %s: not a provider package (no cluster-api-operator provider under %s in the tree %s)", b.dir, b.real, root)
	}
	prov, err := selectProvider(pkg, b.opts.Provider)
	if err != nil {
		return fmt.Errorf("bump %s: %w", b.dir, err)
	}
	lay, err := TargetOf(tree, pkg, prov)
	if err != nil {
		return fmt.Errorf("bump %s: %w", b.dir, err)
	}
	b.tree, b.pkg, b.prov, b.lay = tree, pkg, prov, lay
	b.res.Provider = prov.ID()
	b.res.From = Version{lay.Version, lay.Release}
	newRel := b.opts.Release
	if newRel == "" {
		newRel = b.opts.To + strings.TrimPrefix(lay.Release, lay.Version)
		if !strings.HasPrefix(lay.Release, lay.Version) {
			return fmt.Errorf("bump %s: release %s does not start with its version %s; name the new release", b.dir, lay.Release, lay.Version)
		}
	}
	b.newRel = newRel
	b.res.To = Version{b.opts.To, newRel}
	if b.res.To == b.res.From {
		return fmt.Errorf("bump %s: %s is already at %s (%s)", b.dir, prov.ID(), b.opts.To, newRel)
	}
	b.log.Info("bump", "provider", prov.ID(), "from", lay.Release, "to", newRel)
	return nil
}

func majorMinor(release string) (int, int, bool) {
	var a, b int
	if _, err := fmt.Sscanf(pin.ReleaseVersion(release), "v%d.%d.", &a, &b); err != nil {
		return 0, 0, false
	}
	return a, b, true
}

// findRoot is the nearest directory from dir upwards that holds .git,
// else dir.
func findRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return dir
		}
		d = up
	}
}

func findPackage(t *model.Tree, real string) *model.Package {
	for _, p := range t.Packages {
		d, err := filepath.EvalSymlinks(p.Dir)
		if err != nil {
			d = p.Dir
		}
		if d == real {
			return p
		}
	}
	return nil
}

func selectProvider(pkg *model.Package, want string) (*model.Provider, error) {
	var ids []string
	for _, p := range pkg.Providers {
		ids = append(ids, p.ID())
		if p.ID() == want {
			return p, nil
		}
	}
	switch {
	case want != "":
		return nil, fmt.Errorf("provider %s: the package has no such provider; it has %s", want, strings.Join(ids, ", "))
	case len(pkg.Providers) == 1:
		return pkg.Providers[0], nil
	case len(pkg.Providers) == 0:
		return nil, errors.New("the package defines no provider (only ConfigMaps); bump the package that holds the provider object")
	default:
		return nil, fmt.Errorf("the package has %d providers (%s): %w", len(ids), strings.Join(ids, ", "), ErrWhichProvider)
	}
}
