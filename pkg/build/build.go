// Package build turns a provider package's pins into its vendored files.
//
// It fetches every pinned upstream source (SHA-256 verified before anything
// is written), applies the package's patches in order, compresses each
// provider's components file into its reproducible gzip blob, and writes
// all outputs atomically — every file staged before the first rename, so a
// failed or killed build leaves the old files or the new ones, never half a
// file and never a mix produced by a failing step.
//
// Builds are deterministic: the same pins and patches give the same bytes
// whatever the time zone, umask or file times. Unchanged files are not
// rewritten (their mtimes stay), and an existing blob that already inflates
// to exactly the new YAML with a clean header is kept as is, so trees whose
// blobs GNU `gzip -9 -n` made do not churn.
package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/patch"
	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Options configure a build.
type Options struct {
	// Fetcher downloads and verifies the sources. Required. Relative
	// file: URLs resolve against the package directory unless its BaseDir
	// is set.
	Fetcher *fetch.Fetcher
	// Logger receives progress records; nil means slog.Default().
	Logger *slog.Logger
	// DryRun computes everything (fetch, verify, patch, compress) and
	// reports what would change, writing nothing.
	DryRun bool
	// Provider, when set (Kind/name), builds that provider's files only:
	// the other providers of the package are neither fetched nor
	// written, so nothing about them can stop the build.
	Provider string
}

// Status of one output file.
type Status string

const (
	Written    Status = "written"     // new or changed content was written
	Unchanged  Status = "unchanged"   // the file already held the right content; not touched
	WouldWrite Status = "would-write" // DryRun: the file would be written
)

// FileResult is one output file of a build.
type FileResult struct {
	Path     string `json:"path"`     // slash path relative to the package directory
	Provider string `json:"provider"` // Kind/name of the provider it belongs to
	Kind     string `json:"kind"`     // "source" (vendored upstream file, patched) or "blob"
	Status   Status `json:"status"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"` // lowercase hex of the file's content after the build
	// Note explains an unchanged blob whose bytes differ from ours (e.g.
	// made by GNU gzip -9 -n, same content, clean header).
	Note string `json:"note,omitempty"`
}

// Result is what a build did. Its JSON form (`builder build --json` prints
// a list of them) is documented in api/build.schema.json.
type Result struct {
	Dir  string `json:"dir"`  // the package directory
	Pins string `json:"pins"` // where the pins came from: "pin.yaml", "Makefile", or PinsNone
	// FromVendored: the package pins no download; each blob was rebuilt
	// from the vendored YAML the package layout pairs it with, and nothing
	// was fetched.
	FromVendored bool `json:"fromVendored,omitempty"`
	// Fetched are the URLs downloaded (or read from the cache); Reused the
	// vendored files that already held their pinned bytes, so their
	// sources were not fetched.
	Fetched []string     `json:"fetched,omitempty"`
	Reused  []string     `json:"reused,omitempty"`
	Files   []FileResult `json:"files"` // in pin order: each provider's sources, then its blob
	// Removed are temporary files a killed build had left beside the
	// outputs (older than atomicfile.StaleAge), removed by this one.
	Removed []string `json:"removed,omitempty"`
}

// Changed reports whether the build wrote (or, in a dry run, would write)
// any file.
func (r *Result) Changed() bool {
	for _, f := range r.Files {
		if f.Status != Unchanged {
			return true
		}
	}
	return false
}

// componentsSuffix marks the source whose bytes the blob holds.
const componentsSuffix = "components.yaml"

// output is one file the build produces.
type output struct {
	rel      string // slash path relative to the package directory
	provider string
	kind     string
	data     []byte
	// yaml is what a blob holds: an existing blob that inflates to exactly
	// this, with a clean header, is kept.
	yaml []byte
}

// Build builds the package in dir. On error nothing in dir has changed.
func Build(ctx context.Context, dir string, opts Options) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.Fetcher == nil {
		return nil, errors.New("build: Options.Fetcher is nil")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	if err := checkPackageDir(dir, abs); err != nil {
		return nil, err
	}
	set, err := infer.LoadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	log = log.With("package", dir)
	if !pinsSources(set) {
		// No download is pinned: rebuild each blob from the vendored YAML
		// the package layout names, fetching nothing.
		return buildFromVendored(ctx, dir, abs, set, opts, log)
	}
	res := &Result{Dir: abs, Pins: set.Source}
	file, pkg, err := pinsToBuild(ctx, abs, set, opts.Provider, log)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	var stats fetchStats
	outs, err := plan(ctx, abs, file, fetcherIn(abs, opts.Fetcher), log, &stats)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", dir, err)
	}
	res.Fetched, res.Reused = stats.fetched, stats.reused
	unpinned, err := unpinnedBlobs(abs, dir, pkg, outs, opts.Provider, log)
	if err != nil {
		return nil, err
	}
	outs = append(outs, unpinned...)

	if err := writeOutputs(abs, dir, outs, opts, res, log); err != nil {
		return nil, err
	}
	return res, nil
}

// pinsToBuild is the pin file Build fetches and builds: pin.yaml as it
// is, else the pins read from the Makefile placed on the package's files,
// narrowed to one provider when provider is set. pkg is the package as the
// verifier loads it (nil when it was not needed or does not load): which
// blob a Makefile pin builds, which blobs no pin builds, which provider is
// which. Rendering costs a child process, so a pin.yaml that builds every
// vendored gzip file of the package does without it.
func pinsToBuild(ctx context.Context, abs string, set *pin.Set, provider string, log *slog.Logger) (*pin.File, *model.Package, error) {
	var pkg *model.Package
	if set.Source != pin.SourcePinFile || provider != "" || unpinnedGzip(abs, set.File) {
		pkg = loadPackage(ctx, abs, log)
	}
	file := set.File
	if set.Source != pin.SourcePinFile {
		file = fromMakefile(pkg, abs, file)
	}
	if provider != "" {
		var err error
		if file, err = onlyProvider(file, pkg, provider); err != nil {
			return nil, nil, err
		}
	}
	return file, pkg, nil
}

// fetcherIn is f resolving relative file: URLs against the package
// directory abs, unless f already names a base directory.
func fetcherIn(abs string, f *fetch.Fetcher) *fetch.Fetcher {
	if f.BaseDir != "" {
		return f
	}
	c := *f
	c.BaseDir = abs
	return &c
}

// unpinnedBlobs are the outputs for the blobs of pkg that no pin builds (a
// package pinning one of its providers): rebuilt from their vendored YAML,
// as when the package pins nothing. None when pkg did not load.
func unpinnedBlobs(abs, dir string, pkg *model.Package, outs []output, provider string, log *slog.Logger) ([]output, error) {
	if pkg == nil || slices.ContainsFunc(pkg.Problems, func(p model.Problem) bool { return p.Check == model.CheckPackageLoad }) {
		return nil, nil
	}
	planned := map[string][]byte{}
	for _, o := range outs {
		if o.kind == "source" {
			planned[o.rel] = o.data
		}
	}
	return vendoredBlobs(abs, dir, pkg, func(r *model.LayoutRelease) bool {
		return !slices.ContainsFunc(outs, func(o output) bool { return o.rel == r.Blob }) && releaseOf(r, provider)
	}, planned, false, log)
}

// writeOutputs writes the outputs that changed, all staged before the
// first rename, and records each in res.
func writeOutputs(abs, dir string, outs []output, opts Options, res *Result, log *slog.Logger) error {
	var writes []atomicfile.File
	for _, o := range outs {
		if err := checkInside(abs, o.rel); err != nil {
			return fmt.Errorf("build %s: %w", dir, err)
		}
		target := filepath.Join(abs, filepath.FromSlash(o.rel))
		fr := FileResult{Path: o.rel, Provider: o.provider, Kind: o.kind, Size: int64(len(o.data)), SHA256: hexSHA(o.data)}
		keep, note, err := keepExisting(target, o)
		if err != nil {
			return fmt.Errorf("build %s: %w", dir, err)
		}
		switch {
		case keep != nil:
			fr.Status, fr.Size, fr.SHA256, fr.Note = Unchanged, int64(len(keep)), hexSHA(keep), note
		case opts.DryRun:
			fr.Status = WouldWrite
		default:
			fr.Status = Written
			writes = append(writes, atomicfile.File{Path: target, Data: o.data})
		}
		res.Files = append(res.Files, fr)
		log.Debug("output", "file", o.rel, "status", fr.Status, "size", fr.Size)
	}
	if len(writes) > 0 {
		if err := atomicfile.WriteFiles(writes); err != nil {
			return fmt.Errorf("build %s: write outputs: %w", dir, err)
		}
	}
	if !opts.DryRun {
		// Temp files a killed build left beside the outputs: the verifier
		// would take them for unpinned vendored files.
		dirs := map[string]bool{}
		for _, o := range outs {
			d := path.Dir(o.rel)
			if dirs[d] {
				continue
			}
			dirs[d] = true
			removed, err := atomicfile.RemoveStale(filepath.Join(abs, filepath.FromSlash(d)), 0)
			if err != nil {
				log.Warn("could not remove leftovers of a killed build", "err", err)
			}
			for _, r := range removed {
				res.Removed = append(res.Removed, path.Join(d, r))
			}
		}
	}
	log.Info("built", "files", len(res.Files), "written", len(writes), "dry_run", opts.DryRun)
	return nil
}

// checkPackageDir reports a missing package directory, or a path that is
// not a directory, in words a user can act on.
func checkPackageDir(dir, abs string) error {
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("build %s: no such directory; give the path of a provider package (the directory holding Chart.yaml and pin.yaml)", dir)
	case err != nil:
		return fmt.Errorf("build %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("build %s: is a file, not a directory; give the provider package directory (the one holding %s), not a file in it", dir, pin.FileName)
	}
	return nil
}

// noPinsError explains what a package without digest pins needs.
func noPinsError(dir string, set *pin.Set) error {
	where := "it has neither pin.yaml nor URL and SHA-256 variables in its Makefile"
	if set != nil && set.Source != "" && set.Source != pin.SourcePinFile {
		where = fmt.Sprintf("its %s pins no upstream file by SHA-256", set.Source)
		if len(set.Versions) > 0 {
			where += fmt.Sprintf(" (it only names versions, e.g. %s = %s)", set.Versions[0].Name, set.Versions[0].Value)
		}
	}
	return fmt.Errorf("build %s: nothing to build: %s; add %s beside Chart.yaml listing each provider's sources (url, sha256, to) and blob (format: api/pin.schema.json)",
		dir, where, filepath.Join(dir, pin.FileName))
}

// DefaultBlob is the cozystack blob path, used for Makefile pins (which do
// not name a blob) when the package already has it.
const DefaultBlob = "files/components.gz"

// fromMakefile completes a File assembled from Makefile variables, which
// name no blob: a provider whose components file the package layout
// (model.Package.Layout, of the package as it loads now) pairs with a ConfigMap's
// vendored blob gets that blob; otherwise, where the package already holds
// files/components.gz and exactly one provider has a components source,
// that provider gets it — rebuilding the YAML without its blob would make
// the two diverge, the first trap the verifier looks for.
func fromMakefile(pkg *model.Package, dir string, f *pin.File) *pin.File {
	out := &pin.File{Providers: append([]pin.Provider(nil), f.Providers...)}
	if blobs := layoutBlobs(pkg); len(blobs) > 0 {
		for i, p := range out.Providers {
			if c, err := layout.PinComponents(p); err == nil && c != "" && p.Blob == "" && blobs[c] != "" {
				out.Providers[i].Blob = blobs[c]
			}
		}
		for _, p := range out.Providers {
			if p.Blob != "" {
				return out
			}
		}
	}
	var withComponents []int
	for i, p := range out.Providers {
		for _, s := range p.Sources {
			if strings.HasSuffix(path.Base(s.To), componentsSuffix) {
				withComponents = append(withComponents, i)
				break
			}
		}
	}
	if len(withComponents) == 1 {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(DefaultBlob))); err == nil {
			out.Providers[withComponents[0]].Blob = DefaultBlob
		}
	}
	return out
}

// plan fetches, verifies and patches every source and compresses every blob,
// in memory. Nothing is written.
func plan(ctx context.Context, dir string, f *pin.File, fetcher *fetch.Fetcher, log *slog.Logger, stats *fetchStats) ([]output, error) {
	pl := &outputs{owner: map[string]int{}}
	for _, p := range f.Providers {
		pid := p.ID()
		content, order, err := fetchSources(ctx, dir, pid, p, fetcher, log, stats)
		if err != nil {
			return nil, err
		}
		if err := patchComponents(dir, pid, p, order, content, log); err != nil {
			return nil, err
		}
		if err := relocateComponents(pid, p, order, content, log); err != nil {
			return nil, err
		}
		if err := pl.addSources(pid, order, content); err != nil {
			return nil, err
		}
		if err := pl.addBlob(pid, p, order, content); err != nil {
			return nil, err
		}
	}
	return pl.outs, nil
}

// outputs are the planned outputs, each path owned by the provider that
// planned it first.
type outputs struct {
	outs  []output
	owner map[string]int // rel path -> index in outs
}

// fetchSources fetches and verifies every source of provider p: the
// content of each by its vendored path, and the paths in pin order.
func fetchSources(ctx context.Context, dir, pid string, p pin.Provider, fetcher *fetch.Fetcher, log *slog.Logger, stats *fetchStats) (map[string][]byte, []string, error) {
	content := make(map[string][]byte, len(p.Sources))
	var order []string
	for _, s := range p.Sources {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		rel, data, err := fetchSource(ctx, dir, pid, s, fetcher, log, stats)
		if err != nil {
			return nil, nil, err
		}
		if _, dup := content[rel]; dup {
			return nil, nil, fmt.Errorf("%s: two sources write %s; give each source its own `to`", pid, rel)
		}
		content[rel] = data
		order = append(order, rel)
	}
	return content, order, nil
}

// fetchSource is the verified bytes of source s and the path they are
// vendored at.
func fetchSource(ctx context.Context, dir, pid string, s pin.Source, fetcher *fetch.Fetcher, log *slog.Logger, stats *fetchStats) (string, []byte, error) {
	if strings.Contains(s.URL, "$") {
		return "", nil, fmt.Errorf("%s: source URL %s is computed by make and cannot be fetched as is; write the URL out in pin.yaml", pid, s.URL)
	}
	if s.To == "" {
		return "", nil, fmt.Errorf("%s: source %s has no destination (the Makefile does not say where it goes); add pin.yaml with `to` for each source", pid, s.URL)
	}
	rel, err := cleanRel(s.To)
	if err != nil {
		return "", nil, fmt.Errorf("%s: source %s: to: %w", pid, s.URL, err)
	}
	// A vendored file that already holds the pinned bytes is those bytes:
	// no download needed (a package whose blob alone is wrong rebuilds
	// offline, as the verifier's hint says).
	data, ok := vendoredPinned(dir, rel, s.SHA256)
	if ok {
		log.Info("vendored file matches its pin; not fetched", "provider", pid, "file", rel)
		stats.reused = append(stats.reused, rel)
	} else {
		log.Info("fetch", "provider", pid, "url", s.URL)
		data, err = fetcher.Fetch(ctx, s)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", pid, err)
		}
		stats.fetched = append(stats.fetched, s.URL)
	}
	// The fetcher verifies; check again so no code path can write
	// unverified bytes.
	if got := hexSHA(data); !strings.EqualFold(got, s.SHA256) {
		return "", nil, &fetch.ErrDigestMismatch{URL: s.URL, Want: strings.ToLower(s.SHA256), Got: got, Size: int64(len(data))}
	}
	return rel, data, nil
}

// patchComponents applies p's patches in order. They change the
// components file only (DESIGN, pin.yaml contract): every other vendored
// file must stay byte-identical to its pin, which the verifier's
// pin-digest checks.
func patchComponents(dir, pid string, p pin.Provider, order []string, content map[string][]byte, log *slog.Logger) error {
	if len(p.Patches) == 0 {
		return nil
	}
	comp, err := pinnedComponents(pid, p, order)
	if err != nil {
		return fmt.Errorf("%s has patches: %w", pid, err)
	}
	for _, pp := range p.Patches {
		if err := applyPatch(dir, pid, pp, comp, content, log); err != nil {
			return err
		}
	}
	return nil
}

// addSources plans the sources of provider pid; a path another provider
// already planned must get the same bytes.
func (pl *outputs) addSources(pid string, order []string, content map[string][]byte) error {
	for _, rel := range order {
		if i, ok := pl.owner[rel]; ok {
			if !bytes.Equal(pl.outs[i].data, content[rel]) {
				return fmt.Errorf("%s: %s is also written by %s with different content; give each provider its own file", pid, rel, pl.outs[i].provider)
			}
			continue
		}
		pl.owner[rel] = len(pl.outs)
		pl.outs = append(pl.outs, output{rel: rel, provider: pid, kind: "source", data: content[rel]})
	}
	return nil
}

// addBlob plans p's blob, when it names one: the reproducible gzip of its
// components file.
func (pl *outputs) addBlob(pid string, p pin.Provider, order []string, content map[string][]byte) error {
	if p.Blob == "" {
		return nil
	}
	brel, err := cleanRel(p.Blob)
	if err != nil {
		return fmt.Errorf("%s: blob: %w", pid, err)
	}
	comp, err := pinnedComponents(pid, p, order)
	if err != nil {
		return err
	}
	gz, err := blob.CompressBytes(content[comp])
	if err != nil {
		return fmt.Errorf("%s: compress %s: %w", pid, comp, err)
	}
	if i, ok := pl.owner[brel]; ok {
		return fmt.Errorf("%s: blob %s is also an output of %s; give each provider its own blob", pid, brel, pl.outs[i].provider)
	}
	pl.owner[brel] = len(pl.outs)
	pl.outs = append(pl.outs, output{rel: brel, provider: pid, kind: "blob", data: gz, yaml: content[comp]})
	return nil
}

// relocateComponents moves the images of the provider's components file
// by its pin's relocate entries, after the patches (api/pin.md): the file
// the verifier reverses them on.
func relocateComponents(pid string, p pin.Provider, order []string, content map[string][]byte, log *slog.Logger) error {
	if len(p.Relocate) == 0 {
		return nil
	}
	comp, err := pinnedComponents(pid, p, order)
	if err != nil {
		return fmt.Errorf("%s has relocate entries: %w", pid, err)
	}
	out, moved, err := images.Relocate(content[comp], p.Relocate)
	if err != nil {
		return fmt.Errorf("%s: relocate %s: %w", pid, comp, err)
	}
	content[comp] = out
	log.Info("relocated", "provider", pid, "file", comp, "images", len(moved))
	return nil
}

// escapesRoot reports whether err is root's refusal of a path that leads
// out of it. os does not export that error, so it is taken from a path
// every os.Root refuses for that reason alone, without touching the disk:
// an absolute one.
func escapesRoot(root *os.Root, err error) bool {
	_, probe := root.Lstat("/")
	var pe *fs.PathError
	return errors.As(probe, &pe) && pe.Err != nil && errors.Is(err, pe.Err)
}

// applyPatch applies one patch file of a provider to its components file.
func applyPatch(dir, pid, pp, comp string, content map[string][]byte, log *slog.Logger) error {
	rel, err := cleanRel(pp)
	if err != nil {
		return fmt.Errorf("%s: patch %q: %w", pid, pp, err)
	}
	// Through an os.Root: a patch symlinked out of the package is not read.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%s: read patch %s: %w", pid, rel, err)
	}
	defer root.Close()
	data, err := root.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: patch %s is listed in patches but does not exist in the package directory; add the diff there or remove it from patches", pid, rel)
	}
	if err != nil && escapesRoot(root, err) {
		return fmt.Errorf("%s: patch %s leads outside the package directory (a symlink); keep the diff itself inside the package: %w", pid, rel, err)
	}
	if err != nil {
		return fmt.Errorf("%s: read patch %s: %w", pid, rel, err)
	}
	p, err := patch.Parse(rel, data)
	if err != nil {
		return fmt.Errorf("%s: %w", pid, err)
	}
	for _, fd := range p.Files {
		target, err := patchTarget(fd, content)
		if err != nil {
			return fmt.Errorf("%s: patch %s: %w", pid, rel, err)
		}
		if target != comp {
			return fmt.Errorf("%s: patch %s changes %s, but patches may only change the components file %s: every other vendored file must stay identical to its pinned upstream bytes", pid, rel, target, comp)
		}
		out, results, err := fd.Apply(content[target])
		if err != nil {
			return fmt.Errorf("%s: %w", pid, err)
		}
		for _, r := range results {
			if r.Offset != 0 {
				log.Info("patch hunk applied at an offset", "patch", rel, "file", target, "hunk", r.Hunk, "line", r.Line, "offset", r.Offset)
			}
		}
		content[target] = out
		log.Info("patched", "provider", pid, "patch", rel, "file", target, "hunks", len(results))
	}
	return nil
}

// patchTarget maps a file diff to one of the provider's sources: by its new
// name, else its old name (both relative to the package directory).
func patchTarget(fd *patch.FileDiff, content map[string][]byte) (string, error) {
	if fd.OldName == patch.DevNull || fd.NewName == patch.DevNull {
		return "", fmt.Errorf("%s: creating or deleting files is not supported; a patch may only change a pinned source", fd.Target())
	}
	for _, name := range []string{fd.NewName, fd.OldName} {
		if rel, err := cleanRel(name); err == nil {
			if _, ok := content[rel]; ok {
				return rel, nil
			}
		}
	}
	names := make([]string, 0, len(content))
	for k := range content {
		names = append(names, k)
	}
	return "", fmt.Errorf("it changes %s, which is not a source of this provider (sources: %s); the diff's ---/+++ paths must be relative to the package directory, e.g. a/files/x.yaml",
		fd.Target(), strings.Join(slices.Sorted(slices.Values(names)), ", "))
}

// keepExisting returns the existing bytes of target when the build must not
// touch it: identical content, or (for a blob) a clean-header gzip that
// inflates to exactly the new YAML.
func keepExisting(target string, o output) ([]byte, string, error) {
	old, err := os.ReadFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", o.rel, err)
	}
	if bytes.Equal(old, o.data) {
		return old, "", nil
	}
	if o.kind != "blob" {
		return nil, "", nil
	}
	if blob.EncodingOf(old, o.yaml) != blob.Reproducible {
		return nil, "", nil
	}
	return old, "existing blob kept: same content, clean header (made by another gzip)", nil
}

// checkInside refuses an output whose directory leads out of the package
// through a symlink (files -> /somewhere): a pin file from an untrusted
// change must not make a build write outside the package. The file itself
// may be a symlink: the rename replaces the link, not what it points to.
func checkInside(abs, rel string) error {
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return err
	}
	d := path.Dir(rel)
	for d != "." {
		p := filepath.Join(abs, filepath.FromSlash(d))
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d = path.Dir(d) // created by the write, inside its parent
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", rel, err)
		case fi.Mode()&fs.ModeSymlink == 0 && fi.IsDir():
			d = path.Dir(d)
			continue
		case fi.Mode()&fs.ModeSymlink == 0:
			return fmt.Errorf("%s: %s is a file, not a directory; move it away or change `to`", rel, d)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fmt.Errorf("%s: %s is a symlink that does not resolve: %w", rel, d, err)
		}
		if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%s: %s is a symlink to %s, outside the package directory; vendored files must stay inside the package: replace the symlink with a directory", rel, d, real)
		}
		d = path.Dir(d)
	}
	return nil
}

// cleanRel checks a package-relative slash path.
func cleanRel(p string) (string, error) {
	if err := pin.CheckPath(p); err != nil {
		return "", fmt.Errorf("path %w", err)
	}
	return p, nil
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fetchStats records what plan fetched and what it took from the package.
type fetchStats struct {
	fetched, reused []string
}

// vendoredPinned returns the vendored file rel of the package in dir when
// it exists inside the package and its SHA-256 is want.
func vendoredPinned(dir, rel, want string) ([]byte, bool) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, false
	}
	defer root.Close()
	b, err := layout.ReadFile(root, rel, maxVendoredYAML)
	if err != nil || !strings.EqualFold(hexSHA(b), want) {
		return nil, false
	}
	return b, true
}

// unpinnedGzip reports whether the package in dir holds a gzip file (by its
// magic bytes) that no pin of f names as its blob: a blob only the package
// layout can pair with its YAML.
func unpinnedGzip(dir string, f *pin.File) bool {
	pinned := map[string]bool{}
	for _, p := range f.Providers {
		pinned[p.Blob] = true
	}
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case found:
			return fs.SkipAll
		case err != nil:
			return nil // unreadable: the build reports what it needs
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || pinned[filepath.ToSlash(rel)] {
			return nil
		}
		fh, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer fh.Close()
		var magic [2]byte
		if n, _ := io.ReadFull(fh, magic[:]); n == 2 && magic == [2]byte{0x1f, 0x8b} {
			found = true
		}
		return nil
	})
	return found
}

// loadPackage loads the package in dir as the verifier does; nil when it
// does not load.
func loadPackage(ctx context.Context, dir string, log *slog.Logger) *model.Package {
	pkg, err := load.Package(ctx, dir, load.Options{Logger: log})
	if err != nil {
		return nil
	}
	return pkg
}

// onlyProvider is f reduced to the pins of provider id (Kind/name): its
// pin.yaml entry, or the Makefile pin (no kind, no name) of the components
// file the package layout gives the provider's release.
func onlyProvider(f *pin.File, pkg *model.Package, id string) (*pin.File, error) {
	var ids []string
	comp := ""
	if pkg != nil {
		for _, p := range pkg.Providers {
			ids = append(ids, p.ID())
			if p.ID() == id {
				if r := pkg.Layout.Provider(p); r != nil {
					comp = r.Components
				}
			}
		}
	}
	out := &pin.File{}
	for _, p := range f.Providers {
		if p.Kind != "" || p.Name != "" {
			if !slices.Contains(ids, p.ID()) {
				ids = append(ids, p.ID())
			}
			if p.ID() == id {
				out.Providers = append(out.Providers, p)
			}
			continue
		}
		if c, err := layout.PinComponents(p); err == nil && c != "" && c == comp {
			out.Providers = append(out.Providers, p)
		}
	}
	if !slices.Contains(ids, id) {
		return nil, noSuchProvider(id, ids)
	}
	return out, nil
}

// noSuchProvider is the error for a --provider the package does not have
// (ids: the ones it has).
func noSuchProvider(id string, ids []string) error {
	return fmt.Errorf("provider %s: the package has no such provider; it has %s", id, strings.Join(ids, ", "))
}

// releaseOf reports whether provider id (Kind/name; "" for any) installs
// release r.
func releaseOf(r *model.LayoutRelease, id string) bool {
	return id == "" || slices.ContainsFunc(r.Providers, func(p *model.Provider) bool { return p.ID() == id })
}

// layoutBlobs maps each vendored components YAML of pkg to the vendored
// blob the package layout pairs it with (the ConfigMap that carries the
// blob); nil when pkg is nil.
func layoutBlobs(pkg *model.Package) map[string]string {
	if pkg == nil {
		return nil
	}
	out := map[string]string{}
	for _, r := range pkg.Layout.Releases {
		if r.ConfigMap == nil || r.Components == "" || r.Blob == "" {
			continue
		}
		if b, dup := out[r.Components]; dup && b != r.Blob {
			out[r.Components] = "" // two blobs of one YAML: decide nothing
			continue
		}
		out[r.Components] = r.Blob
	}
	return out
}

// pinnedComponents is the provider's components file among its sources'
// destinations (order), by the package layout's pin rule
// (layout.PinComponents: pin.yaml `components`, else the one source ending
// in components.yaml, else its only source that is not metadata).
func pinnedComponents(pid string, p pin.Provider, order []string) (string, error) {
	c, err := layout.PinComponents(p)
	if err != nil {
		return "", err
	}
	if c == "" || !slices.Contains(order, c) {
		return "", fmt.Errorf("%s: has a blob but no source whose `to` ends with %s (the file the blob compresses); name the components source e.g. files/infrastructure-components.yaml, or drop `blob`", pid, componentsSuffix)
	}
	return c, nil
}
