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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/changes"
	"github.com/pinseal/pinseal/pkg/check"
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

// GateChecks are the offline checks the staged package must pass.
var GateChecks = []string{
	model.CheckPackageLoad, check.BlobYAML, check.BlobHeader, model.CheckBlobCorrupt,
	check.ConfigMapVersion, check.CompressedAnnotation, check.PinVersion, model.CheckPinDigest,
	check.MetadataSeries, check.Contract, check.SelectorUnique, check.SelectorSemver,
	check.ImageRelocation,
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

// pinNewSources moves each source URL to the new version and pins it with
// the digest the caller gave; a URL that does not change keeps its pin.
// A digest given for no source is an error.
func (b *bump) pinNewSources() error {
	lay, opts := b.lay, b.opts
	b.srcs = make([]pin.Source, len(lay.Sources))
	used := map[string]bool{}
	for i, s := range lay.Sources {
		ns := s
		ns.URL = replaceTokens(s.URL, lay.Version, opts.To)
		if ns.URL == s.URL && s.SHA256 != "" {
			if h, ok := opts.SHA256[ns.URL]; ok {
				if h != s.SHA256 {
					return fmt.Errorf("bump %s: SHA-256 %s=%s given, but that URL does not change with the version and stays pinned to %s; drop it, or re-pin it with `builder build` after checking the upstream file", b.dir, ns.URL, h, s.SHA256)
				}
				used[ns.URL] = true
			}
			b.res.Digests = append(b.res.Digests, Digest{URL: ns.URL, SHA256: s.SHA256, From: FromUnchanged})
			b.srcs[i] = ns
			continue
		}
		ns.SHA256 = ""
		if h, ok := opts.SHA256[ns.URL]; ok {
			ns.SHA256, used[ns.URL] = h, true
			b.res.Digests = append(b.res.Digests, Digest{URL: ns.URL, SHA256: h, From: FromFlag})
		}
		b.srcs[i] = ns
	}
	for u := range opts.SHA256 {
		if !used[u] {
			var urls []string
			for _, s := range b.srcs {
				urls = append(urls, s.URL)
			}
			return fmt.Errorf("bump %s: a SHA-256 is given for %s, which is not a source of %s %s; its sources are: %s", b.dir, u, b.prov.ID(), opts.To, strings.Join(urls, ", "))
		}
	}
	return nil
}

// readChecksums pins the sources still without a digest from the new
// release's checksums file, when the pin names one; a digest the caller
// gave that the file contradicts is an error.
func (b *bump) readChecksums(ctx context.Context) error {
	b.fetcher = *b.opts.Fetcher
	b.fetcher.BaseDir = b.real
	b.fetcher.Logger = b.quiet
	b.sums = replaceTokens(b.lay.Checksums, b.lay.Version, b.opts.To)
	if b.sums == "" {
		return nil
	}
	data, err := b.fetcher.FetchUnverified(ctx, b.sums)
	if err != nil {
		return fmt.Errorf("bump %s: the pin names a checksums file: %w", b.dir, err)
	}
	sums, err := ParseChecksums(data)
	if err != nil {
		return fmt.Errorf("bump %s: checksums file %s: %w", b.dir, b.sums, err)
	}
	for i := range b.srcs {
		s := &b.srcs[i]
		h, ok := sums[path.Base(s.URL)]
		switch {
		case !ok:
		case s.SHA256 != "" && s.SHA256 != h:
			return fmt.Errorf("bump %s: SHA-256 %s=%s given, but the release's checksums file %s says %s; find out which is right before pinning", b.dir, s.URL, s.SHA256, b.sums, h)
		case s.SHA256 == "":
			s.SHA256 = h
			b.res.Digests = append(b.res.Digests, Digest{URL: s.URL, SHA256: h, From: FromChecksums})
		}
	}
	return nil
}

// put stores data in the staged fetcher's cache under its SHA-256.
func (b *bump) put(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	return h, atomicfile.WriteFile(b.staged.CachePath(h), data, 0o644)
}

// fetchSources downloads every new source, verified against its pin, into
// the staged cache; one still without a digest is taken on first use when
// the caller allows it, else refused (ErrNoDigest).
func (b *bump) fetchSources(ctx context.Context) error {
	for i := range b.srcs {
		s := &b.srcs[i]
		if s.SHA256 == "" {
			if !b.opts.TrustOnFirstUse {
				return fmt.Errorf("bump %s: no SHA-256 for %s: %w", b.dir, s.URL, ErrNoDigest)
			}
			data, err := b.fetcher.FetchUnverified(ctx, s.URL)
			if err != nil {
				return fmt.Errorf("bump %s: %w", b.dir, err)
			}
			if s.SHA256, err = b.put(data); err != nil {
				return err
			}
			b.res.Digests = append(b.res.Digests, Digest{URL: s.URL, SHA256: s.SHA256, From: FromTOFU})
			continue
		}
		b.log.Info("fetch", "url", s.URL)
		data, err := b.fetcher.Fetch(ctx, *s)
		if err != nil {
			return fmt.Errorf("bump %s: %w", b.dir, err)
		}
		if _, err := b.put(data); err != nil {
			return err
		}
	}
	return nil
}

// stageEdits copies the package to the stage and makes the text edits
// there: the pins (pin.yaml, the Makefile's literals, or a new pin.yaml),
// the version variables and the templates.
func (b *bump) stageEdits() error {
	if err := copyDir(b.real, b.stage); err != nil {
		return fmt.Errorf("bump %s: staging a copy: %w", b.dir, err)
	}
	lay, opts, pkg := b.lay, b.opts, b.pkg
	ed := &editSet{dir: b.stage, files: map[string]*textFile{}}
	var added []change
	switch lay.PinSource {
	case pin.SourcePinFile:
		from := pkg.Pins.File.Providers[lay.PinIndex]
		to := from
		to.Version, to.Release, to.Sources, to.Checksums = opts.To, b.newRel, b.srcs, b.sums
		if from.Release == "" {
			to.Release = ""
		}
		if err := ed.editPinFile(lay.PinIndex, &from, &to); err != nil {
			return fmt.Errorf("bump %s: %w", b.dir, err)
		}
		b.res.Pins = pin.FileName
	case pin.SourceMakefile:
		var pairs [][2]string
		for i, s := range lay.Sources {
			pairs = append(pairs, [2]string{s.URL, b.srcs[i].URL}, [2]string{s.SHA256, b.srcs[i].SHA256})
		}
		if err := ed.editLiterals(pkg.Pins, pairs); err != nil {
			return err
		}
		b.res.Pins = "Makefile"
	default:
		data, err := newPinFile(b.prov, opts.To, b.newRel, b.srcs, lay)
		if err != nil {
			return fmt.Errorf("bump %s: %w", b.dir, err)
		}
		added = append(added, change{rel: pin.FileName, data: data})
		b.res.Pins = pin.FileName
		b.res.PinsNote = "added pin.yaml: the package downloads its files without a SHA-256 (the Makefile pins no digest), so the new pins go to a pin.yaml, which `builder build` and `verifier check` read from now on"
	}
	if err := ed.editVersionVars(pkg.Pins, lay.Version, opts.To); err != nil {
		return err
	}
	if err := ed.editTemplates(lay.Release, b.newRel, lay.Version, opts.To); err != nil {
		return err
	}
	b.textPaths = map[string]bool{}
	for _, f := range ed.changedFiles() {
		if f.rel == pin.FileName {
			if _, err := pin.Parse(f.bytes(), pin.FileName); err != nil {
				return fmt.Errorf("bump %s: the edited %s would not validate, nothing was changed: %w", b.dir, pin.FileName, err)
			}
		}
		b.textPaths[f.rel] = true
		if err := os.WriteFile(filepath.Join(b.stage, filepath.FromSlash(f.rel)), f.bytes(), 0o644); err != nil {
			return err
		}
	}
	for _, c := range added {
		b.textPaths[c.rel] = true
		if err := os.WriteFile(filepath.Join(b.stage, filepath.FromSlash(c.rel)), c.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// buildStaged builds the bumped provider only in the stage: another
// provider's files are neither fetched nor rewritten, so nothing about
// them can stop the bump (the gate reports what is wrong with them as
// pre-existing). Its sources are in the staged cache; those a Makefile
// pins beside them come through the caller's fetcher, when they can.
func (b *bump) buildStaged(ctx context.Context) error {
	if set, err := infer.LoadDir(b.stage); err == nil && set.File != nil && set.Source != pin.SourcePinFile {
		for _, p := range set.File.Providers {
			for _, s := range p.Sources {
				if !pin.ValidSHA256(s.SHA256) {
					continue
				}
				if _, err := os.Stat(b.staged.CachePath(s.SHA256)); err == nil {
					continue
				}
				if data, err := b.fetcher.Fetch(ctx, s); err == nil {
					if _, err := b.put(data); err != nil {
						return err
					}
				}
			}
		}
	}
	if _, err := build.Build(ctx, b.stage, build.Options{Fetcher: b.staged, Logger: b.quiet, Provider: b.prov.ID()}); err != nil {
		return fmt.Errorf("bump %s refused, nothing was changed: %w", b.dir, unstage(err, b.stage, b.real))
	}
	return nil
}

// collectChanges lists the files of the stage that differ from the
// package (text edits first, with their diffs, then the vendored files).
func (b *bump) collectChanges() error {
	res := b.res
	err := filepath.WalkDir(b.stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(b.stage, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		old, oerr := os.ReadFile(filepath.Join(b.real, filepath.FromSlash(rel)))
		if oerr == nil && string(old) == string(data) {
			return nil
		}
		f := File{Path: rel, Kind: "vendored", Status: "modified", NewSHA256: hexSHA(data)}
		if oerr != nil {
			f.Status = "added"
		} else {
			f.OldSHA256 = hexSHA(old)
		}
		if b.textPaths[rel] {
			f.Kind = "text"
			f.Diff = unifiedDiff(rel, old, data)
		}
		res.Files = append(res.Files, f)
		b.changes = append(b.changes, change{rel: rel, data: data})
		return nil
	})
	if err != nil {
		return fmt.Errorf("bump %s: %w", b.dir, err)
	}
	sort.SliceStable(res.Files, func(i, j int) bool {
		if res.Files[i].Kind != res.Files[j].Kind {
			return res.Files[i].Kind == "text"
		}
		return res.Files[i].Path < res.Files[j].Path
	})
	return nil
}

// checkStaged runs the offline checks on the staged package, in the tree,
// against the tree before the bump (gate); what it refuses stops the bump.
func (b *bump) checkStaged(ctx context.Context) error {
	changed := map[string]bool{}
	for _, c := range b.changes {
		changed[c.rel] = true
	}
	contract, pre, err := gate(ctx, b.tree, b.pkg, b.stage, b.prov, b.newRel, changed)
	if err != nil {
		return err
	}
	b.res.Contract, b.res.PreExisting = contract, pre
	return nil
}

// unstage names files in an error by their place in the package, not the
// staging copy.
func unstage(err error, stage, real string) error {
	return errors.New(strings.ReplaceAll(err.Error(), stage, real))
}

// gate loads the staged package, puts it in the tree in place of pkg and
// runs the gate checks on the tree before and after the bump. An error
// finding after it refuses the bump when
//
//   - it touches what the bump changes: it is about the bumped provider,
//     or about the whole package and in a file the bump writes (changed,
//     package-relative paths); such a finding is the bump's to fix even if
//     it was there before (a pre-existing blob-header of the bumped
//     provider is gone once its blob is rebuilt; one that stays is not);
//   - or the bump introduced it: the tree before had no finding with the
//     same key (findingKey), in this package or elsewhere (a core bump
//     leaving another package's provider out of contract).
//
// The others were there before and the bump does not touch them (another
// provider's blob header): those of pkg are returned as pre-existing; they
// do not block. It returns the new release's contract.
func gate(ctx context.Context, tree *model.Tree, pkg *model.Package, stage string, prov *model.Provider, newRel string, changed map[string]bool) (string, []report.Finding, error) {
	nt, sp, err := stagedTree(ctx, tree, pkg, stage)
	if err != nil {
		return "", nil, err
	}
	bad, pre := judgeFindings(tree, nt, pkg, stage, prov, changed)
	if len(bad) > 0 {
		return "", nil, &RefusedError{Package: pkg.Path, Findings: bad, PreExisting: pre}
	}
	return newContract(nt, sp, prov, newRel), pre, nil
}

// stagedTree is tree with pkg replaced by the package loaded from its
// staged copy in stage (returned too), under pkg's path and directory.
func stagedTree(ctx context.Context, tree *model.Tree, pkg *model.Package, stage string) (*model.Tree, *model.Package, error) {
	quiet := slog.New(slog.DiscardHandler)
	st, err := load.Tree(ctx, stage, load.Options{Logger: quiet, Namespace: pkg.Namespace})
	if err != nil {
		return nil, nil, err
	}
	var sp *model.Package
	for _, p := range st.Packages {
		if p.Path == "." {
			sp = p
		}
	}
	if sp == nil {
		return nil, nil, &RefusedError{Package: pkg.Path, Findings: []report.Finding{{Check: model.CheckPackageLoad, Severity: report.Error, Package: pkg.Path,
			Message: "the staged package holds no provider any more"}}}
	}
	sp.Path, sp.Dir = pkg.Path, pkg.Dir
	nt := &model.Tree{Root: tree.Root}
	for _, p := range tree.Packages {
		if p == pkg {
			p = sp
		}
		nt.Packages = append(nt.Packages, p)
		if nt.Core == nil && slices.ContainsFunc(p.Providers, func(x *model.Provider) bool { return x.Kind == "CoreProvider" }) {
			nt.Core = p
		}
	}
	return nt, sp, nil
}

// judgeFindings splits the gate findings of the staged tree nt into those
// that block the bump and the pre-existing ones of pkg, as gate says.
func judgeFindings(tree, nt *model.Tree, pkg *model.Package, stage string, prov *model.Provider, changed map[string]bool) (bad, pre []report.Finding) {
	before := map[string]int{}
	for _, f := range gateFindings(tree) {
		before[findingKey(f)]++
	}
	touches := func(f report.Finding) bool {
		if f.Package != pkg.Path {
			return false
		}
		if f.Provider == prov.ID() {
			return true
		}
		rel := f.File
		if pkg.Path != "." {
			rel = strings.TrimPrefix(rel, pkg.Path+"/")
		}
		return f.Provider == "" && f.File != "" && changed[rel]
	}
	for _, f := range gateFindings(nt) {
		// Messages of the staged load name the staging copy.
		f.Message, f.Hint = strings.ReplaceAll(f.Message, stage, pkg.Dir), strings.ReplaceAll(f.Hint, stage, pkg.Dir)
		k := findingKey(f)
		switch {
		case touches(f):
			bad = append(bad, f)
		case before[k] > 0:
			before[k]--
			if f.Package == pkg.Path {
				pre = append(pre, f)
			}
		case f.Package != pkg.Path && f.Check == check.Contract:
			f.Message = "would fall out of contract: " + f.Message
			bad = append(bad, f)
		default:
			bad = append(bad, f)
		}
	}
	return bad, pre
}

// newContract is the contract of release newRel of prov in the staged
// package sp, for the report; "" when its metadata does not say.
func newContract(nt *model.Tree, sp *model.Package, prov *model.Provider, newRel string) string {
	for _, p := range sp.Providers {
		if p.Kind != prov.Kind || p.Name != prov.Name {
			continue
		}
		if m, ok := check.NewIndex(nt).Select(sp, p).Picked(newRel); ok && m.ConfigMap.Metadata != nil {
			maj, min, ok := majorMinor(newRel)
			for _, rs := range m.ConfigMap.Metadata.ReleaseSeries {
				if ok && rs.Major == maj && rs.Minor == min {
					return rs.Contract
				}
			}
		}
	}
	return ""
}

// gateFindings are the error findings of the GateChecks over t (a check
// may report some of its findings as warnings: those never block).
func gateFindings(t *model.Tree) []report.Finding {
	in := check.NewInput(t)
	var out []report.Finding
	for _, id := range GateChecks {
		c, ok := check.Lookup(id)
		if !ok || c.Run == nil || c.Severity != report.Error {
			continue
		}
		for _, f := range c.Run(in) {
			if f.Severity == report.Warning {
				continue
			}
			f.Severity = report.Error
			out = append(out, f)
		}
	}
	return out
}

// numbers are what a finding's message may say differently about the same
// problem before and after a bump: line numbers, sizes, versions.
var numbers = regexp.MustCompile(`[0-9]+`)

// findingKey is what a finding after the bump must share with one before
// it to be the same finding: its check, package, provider and file, and
// its message with every number left out (so a line that moved, or a
// version named in it, does not make it new).
func findingKey(f report.Finding) string {
	return strings.Join([]string{f.Check, f.Package, f.Provider, f.File, numbers.ReplaceAllString(f.Message, "#")}, "\x00")
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

// newPinFile writes the pin.yaml of a package whose Makefile downloads
// without a digest.
func newPinFile(p *model.Provider, version, release string, srcs []pin.Source, lay *Target) ([]byte, error) {
	var b strings.Builder
	b.WriteString("# Upstream files this package vendors, pinned by the SHA-256 of their bytes\n")
	b.WriteString("# (written by `builder bump`; format: api/pin.md).\n")
	fmt.Fprintf(&b, "providers:\n- kind: %s\n  name: %s\n  version: %s\n  release: %s\n  sources:\n", p.Kind, p.Name, version, release)
	for _, s := range srcs {
		fmt.Fprintf(&b, "  - url: %s\n    sha256: %s\n    to: %s\n", s.URL, s.SHA256, s.To)
	}
	if len(lay.Patches) > 0 {
		b.WriteString("  patches:\n")
		for _, pp := range lay.Patches {
			fmt.Fprintf(&b, "  - %s\n", pp)
		}
	}
	if lay.Blob != "" {
		fmt.Fprintf(&b, "  blob: %s\n", lay.Blob)
	}
	// Names that do not tell which source is which (talos style:
	// files/bootstrap-components-talos.yaml) are said (internal/layout).
	if !strings.HasSuffix(lay.Components, "components.yaml") && lay.Components != "" {
		fmt.Fprintf(&b, "  components: %s\n", lay.Components)
	}
	if lay.Metadata != "" && !strings.HasPrefix(path.Base(lay.Metadata), "metadata") {
		fmt.Fprintf(&b, "  metadata: %s\n", lay.Metadata)
	}
	data := []byte(b.String())
	if _, err := pin.Parse(data, pin.FileName); err != nil {
		return nil, fmt.Errorf("the pin.yaml bump would add does not validate: %w; write it by hand (api/pin.md)", err)
	}
	return data, nil
}

// copyDir copies the package (regular files, directories, symlinks as
// links), leaving out .git and leftovers of killed writers.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == "." {
			return nil
		}
		name := d.Name()
		if name == ".git" || strings.HasPrefix(name, atomicfile.TempPrefix) || (rel == JournalName) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil
	})
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// ParseChecksums reads a release's checksums file: "<hex>  <name>" or
// "<hex> *<name>" (sha256sum) or "SHA256 (<name>) = <hex>" (BSD) lines;
// other lines and other digest lengths are skipped. It maps file names
// (base names) to lowercase hex. Bump and vendor both read the file the
// pins name with it, so they agree on what it says.
func ParseChecksums(data []byte) (map[string]string, error) {
	if len(data) > 1<<20 {
		return nil, fmt.Errorf("larger than 1 MiB; not a checksums file")
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		var h, name string
		if rest, ok := strings.CutPrefix(line, "SHA256 ("); ok {
			n, hx, ok := strings.Cut(rest, ") = ")
			if !ok {
				continue
			}
			name, h = n, hx
		} else {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			h, name = f[0], strings.TrimPrefix(f[1], "*")
		}
		h = strings.ToLower(h)
		if !pin.ValidSHA256(h) || name == "" {
			continue
		}
		out[path.Base(name)] = h
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("holds no SHA-256 lines (\"<hex>  <file>\")")
	}
	return out, nil
}

// removeStaleStaging removes the staging directories of killed bumps
// (pinseal-bump-stage-*, pinseal-bump-cache-* in the temp directory) older
// than atomicfile.StaleAge; fresher ones may belong to a bump still running.
func removeStaleStaging() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-atomicfile.StaleAge)
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() || !(strings.HasPrefix(n, "pinseal-bump-stage-") || strings.HasPrefix(n, "pinseal-bump-cache-")) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.RemoveAll(filepath.Join(os.TempDir(), n))
		}
	}
}
