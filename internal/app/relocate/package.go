package relocate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// maxComponents bounds a components file (or what a blob inflates to) read
// to be relocated, as the builder bounds a vendored YAML it rebuilds from.
const maxComponents = 256 << 20

// File is one file Package writes: a slash path relative to the package
// directory and its whole new content.
type File struct {
	Path string
	Data []byte
}

// Options configure Package.
type Options struct {
	// Maps are the relocations to add (`--map FROM=TO`); one with the From
	// of a recorded entry replaces it.
	Maps pin.Relocations
	// Provider (Kind/name), when set, relocates only that provider's
	// release.
	Provider string
	DryRun   bool
	Log      *slog.Logger
	// Commit writes every file or none. Nil writes them with
	// atomicfile.WriteFiles (every file staged before the first rename);
	// `builder relocate` passes bump's journaled commit, whose journal
	// `builder build` and `builder bump` roll back after a kill.
	Commit func(dir string, files []File) error
}

// Result is what Package did (or, in a dry run, would do).
type Result struct {
	Dir string `json:"dir"`
	// Recorded: pin.yaml records the relocation, so `builder build` and
	// `builder bump` apply it again. False for a package without pins,
	// whose blobs `builder build` rebuilds from the relocated YAML.
	Recorded bool `json:"recorded"`
	// Releases are the relocated releases with the relocation each now
	// carries.
	Releases []Release `json:"releases"`
	// Images are the images the relocation moves from their upstream
	// reference (for a recorded relocation, a second run lists them
	// again and writes no file).
	Images []Image `json:"images"`
	// Files are the files written (would be, in a dry run); none when the
	// package already holds the relocation.
	Files []string `json:"files"`
}

// Release is one relocated release.
type Release struct {
	Name     string          `json:"name"`
	Relocate pin.Relocations `json:"relocate"`
}

// Image is one relocated image reference: From is upstream's, To is
// what the package runs.
type Image struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	InBlob bool   `json:"inBlob"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// beforeCommit is a test hook run once every new content is staged in
// memory, before Commit: a failure there must leave the package whole.
var beforeCommit func() error

// Package relocates the images of the package in dir: each release's
// components (the vendored YAML and the blob, or the blob alone when no
// YAML is vendored) become the relocation of their upstream form (the
// recorded relocation reversed) by the recorded relocation merged with
// opts.Maps, and pin.yaml records the merge. The blob is the reproducible
// gzip of the new YAML, byte for byte what `builder build` writes. A
// package that already holds the result is not written. On error nothing
// in dir has changed.
func Package(ctx context.Context, dir string, opts Options) (*Result, error) {
	if len(opts.Maps) == 0 {
		return nil, fmt.Errorf("relocate %s: no --map FROM=TO given", dir)
	}
	if err := pin.CheckRelocations(opts.Maps); err != nil {
		return nil, fmt.Errorf("relocate %s: the --map entries cannot be used together: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("relocate %s: %w", dir, err)
	}
	set, err := infer.LoadDir(abs)
	if err != nil {
		return nil, fmt.Errorf("relocate %s: %w", dir, err)
	}
	if set.Source != pin.SourcePinFile && set.File != nil && len(set.File.Providers) > 0 {
		return nil, fmt.Errorf("relocate %s: the package pins its downloads in its %s, which cannot record a relocation, so `builder build` would fetch the upstream bytes again and undo it; move the pins to a pin.yaml (api/pin.md) and relocate again", dir, set.Source)
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pkg, err := load.Package(ctx, abs, load.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("relocate %s: %w", dir, err)
	}
	if pkg == nil || len(pkg.Layout.Releases) == 0 {
		return nil, fmt.Errorf("relocate %s: not a provider package (no components ConfigMap or pin found)", dir)
	}
	for _, p := range pkg.Problems {
		if p.Check == model.CheckPackageLoad {
			return nil, fmt.Errorf("relocate %s: the package cannot be read: %s: %s; fix that first", dir, p.File, p.Message)
		}
	}
	r := &run{dir: dir, abs: abs, opts: opts, pkg: pkg, res: &Result{Dir: abs, Releases: []Release{}, Images: []Image{}, Files: []string{}}}
	if err := r.plan(set); err != nil {
		return nil, err
	}
	if len(r.files) == 0 || opts.DryRun {
		return r.res, nil
	}
	if beforeCommit != nil {
		if err := beforeCommit(); err != nil {
			return nil, fmt.Errorf("relocate %s: %w; nothing was changed", dir, err)
		}
	}
	commit := opts.Commit
	if commit == nil {
		commit = writeFiles
	}
	if err := commit(abs, r.files); err != nil {
		return nil, fmt.Errorf("relocate %s: %w", dir, err)
	}
	log.Info("relocated", "package", dir, "images", len(r.res.Images), "files", len(r.files))
	return r.res, nil
}

// writeFiles is the default Commit.
func writeFiles(dir string, files []File) error {
	ws := make([]atomicfile.File, len(files))
	for i, f := range files {
		ws[i] = atomicfile.File{Path: filepath.Join(dir, filepath.FromSlash(f.Path)), Data: f.Data}
	}
	return atomicfile.WriteFiles(ws)
}

// run is one Package call as plan fills it in.
type run struct {
	dir, abs string
	opts     Options
	pkg      *model.Package
	res      *Result
	files    []File
	written  map[string]bool
}

// plan computes every new file in memory: pin.yaml with the merged
// relocations, and each release's YAML and blob.
func (r *run) plan(set *pin.Set) error {
	merged := map[int]pin.Relocations{}
	var pf *pin.File
	if set.Source == pin.SourcePinFile && set.File != nil {
		pf = set.File
		for i, pp := range pf.Providers {
			if r.opts.Provider == "" || pp.ID() == r.opts.Provider {
				merged[i] = Merge(pp.Relocate, r.opts.Maps)
			}
		}
		edit := map[int]pin.Relocations{}
		for i, rs := range merged {
			if !slices.Equal(rs, pf.Providers[i].Relocate) {
				edit[i] = rs
			}
		}
		if err := r.planPinFile(edit); err != nil {
			return err
		}
		r.res.Recorded = true
	}
	r.written = map[string]bool{}
	for _, rel := range r.pkg.Layout.Releases {
		old, now, recorded, ok := r.relocations(rel, pf, merged)
		if !ok {
			continue
		}
		if err := r.planRelease(rel, old, now, recorded); err != nil {
			return fmt.Errorf("relocate %s: release %s: %w", r.dir, rel.Name, err)
		}
	}
	if len(r.res.Releases) == 0 {
		return fmt.Errorf("relocate %s: no release of provider %s holds components to relocate", r.dir, r.opts.Provider)
	}
	return nil
}

// relocations are the recorded (old) and new relocations of a release;
// recorded says pin.yaml records them (a release no pin entry names, like
// a package without pin.yaml, is relocated in place); ok is false for a
// release this run does not relocate.
func (r *run) relocations(rel *model.LayoutRelease, pf *pin.File, merged map[int]pin.Relocations) (old, now pin.Relocations, recorded, ok bool) {
	if pf == nil || rel.Pin == nil {
		if r.opts.Provider != "" && !slices.ContainsFunc(rel.Providers, func(p *model.Provider) bool { return p.ID() == r.opts.Provider }) {
			return nil, nil, false, false
		}
		return nil, r.opts.Maps, false, true
	}
	for i, pp := range pf.Providers {
		if pp.ID() == rel.Pin.ID() {
			now, ok = merged[i]
			return pp.Relocate, now, true, ok
		}
	}
	return nil, nil, false, false
}

// planPinFile records the merged relocations in pin.yaml, refusing any the
// pin file's validation refuses.
func (r *run) planPinFile(merged map[int]pin.Relocations) error {
	old, err := os.ReadFile(filepath.Join(r.abs, pin.FileName))
	if err != nil {
		return fmt.Errorf("relocate %s: %w", r.dir, err)
	}
	text, err := setRelocate(old, merged)
	if err != nil {
		return fmt.Errorf("relocate %s: %s: %w", r.dir, pin.FileName, err)
	}
	if _, err := pin.Parse(text, filepath.Join(r.dir, pin.FileName)); err != nil {
		return fmt.Errorf("relocate %s: the relocation cannot be recorded, nothing was changed: %w", r.dir, err)
	}
	if !bytes.Equal(text, old) {
		r.add(pin.FileName, text)
	}
	return nil
}

// planRelease relocates one release's components: the vendored YAML when
// there is one (and its blob becomes the YAML's gzip), else what the blob
// inflates to.
func (r *run) planRelease(rel *model.LayoutRelease, old, now pin.Relocations, recorded bool) error {
	yamlRel, blobRel := rel.Components, rel.Blob
	if f := r.pkg.Files[yamlRel]; f == nil || f.Blob != nil {
		yamlRel = ""
	}
	if f := r.pkg.Files[blobRel]; f == nil || f.Blob == nil {
		blobRel = ""
	}
	if yamlRel == "" && blobRel == "" {
		return nil
	}
	root, err := os.OpenRoot(r.abs)
	if err != nil {
		return err
	}
	defer root.Close()
	var src, raw []byte
	if blobRel != "" {
		if raw, err = layout.ReadFile(root, blobRel, maxComponents); err != nil {
			return err
		}
	}
	src, err = r.components(root, yamlRel, blobRel, raw)
	if err != nil {
		return err
	}
	base, err := images.Unrelocate(src, old)
	if err != nil {
		return fmt.Errorf("reverse the recorded relocation: %w", err)
	}
	apply := images.Relocate
	if !recorded {
		// Nothing reverses an unrecorded relocation, so an image already
		// under a To (a second run) is no clash: it stays.
		apply = func(data []byte, rs pin.Relocations) ([]byte, []images.Moved, error) {
			return images.Rewrite(data, rs.Map)
		}
	}
	out, moved, err := apply(base, now)
	if err != nil {
		return err
	}
	r.res.Releases = append(r.res.Releases, Release{Name: rel.Name, Relocate: now})
	file := yamlRel
	if file == "" {
		file = blobRel
	}
	for _, m := range moved {
		r.res.Images = append(r.res.Images, Image{File: file, Line: m.Line, InBlob: yamlRel == "", From: m.Ref, To: m.To})
	}
	if yamlRel != "" && !bytes.Equal(out, src) {
		r.add(yamlRel, out)
	}
	// A blob whose components do not change is left as it is (it inflates
	// to them already), as builder build keeps it.
	if blobRel != "" && !bytes.Equal(out, src) {
		gz, err := blob.CompressBytes(out)
		if err != nil {
			return err
		}
		if !bytes.Equal(gz, raw) {
			r.add(blobRel, gz)
		}
	}
	return nil
}

// components reads what a release's components are: the vendored YAML,
// which the blob must inflate to (else blob-yaml fails and the package is
// not whole to begin with), or the inflated blob when no YAML is vendored.
func (r *run) components(root *os.Root, yamlRel, blobRel string, raw []byte) ([]byte, error) {
	var inflated []byte
	if blobRel != "" {
		var err error
		if inflated, err = io.ReadAll(blob.Inflated(raw, maxComponents)); err != nil {
			return nil, fmt.Errorf("inflate %s: %w", blobRel, err)
		}
	}
	if yamlRel == "" {
		return inflated, nil
	}
	src, err := layout.ReadFile(root, yamlRel, maxComponents)
	if err != nil {
		return nil, err
	}
	if blobRel != "" && !bytes.Equal(src, inflated) {
		return nil, errors.New(blobRel + " does not inflate to " + yamlRel + " (blob-yaml): relocating both would hide which one the cluster was running; `builder build` first, then relocate")
	}
	return src, nil
}

// add stages one new file content (once per path).
func (r *run) add(rel string, data []byte) {
	if r.written[rel] {
		return
	}
	if r.written == nil {
		r.written = map[string]bool{}
	}
	r.written[rel] = true
	r.files = append(r.files, File{Path: rel, Data: data})
	r.res.Files = append(r.res.Files, rel)
}
