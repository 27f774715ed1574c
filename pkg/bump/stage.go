package bump

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

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

// unstage names files in an error by their place in the package, not the
// staging copy.
func unstage(err error, stage, real string) error {
	return errors.New(strings.ReplaceAll(err.Error(), stage, real))
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
