package load

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/patch"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// upstreamDigests recovers, for every vendored file a pin's patches or
// relocation change, the digest of the upstream bytes: the file with its
// relocation reversed, then its patches, last first (model.File.Upstream), or why that failed
// (model.File.UpstreamErr). The vendored file is the pinned upstream plus
// the listed patches, so its own digest differs from the pin by design.
//
// A patch that cannot be read, does not parse or changes a file that is not
// a pinned source of its provider is a pin-digest Problem; the provider's
// files then get neither field.
func (l *scanner) upstreamDigests(ctx context.Context, p *model.Package, mem map[string][]byte) {
	if p.Pins == nil || p.Pins.File == nil {
		return
	}
	for _, pp := range p.Pins.File.Providers {
		if len(pp.Patches) == 0 && len(pp.Relocate) == 0 {
			continue
		}
		targets, order, ok := l.providerPatches(p, pp, mem)
		if !ok {
			continue
		}
		// The relocation applies after the patches, to the components
		// file: it is reversed first.
		comp, _ := layout.PinComponents(pp)
		if len(pp.Relocate) > 0 && comp != "" && !slices.Contains(order, comp) {
			order = append(order, comp)
		}
		for _, rel := range order {
			if ctx.Err() != nil {
				return
			}
			var rs pin.Relocations
			if rel == comp {
				rs = pp.Relocate
			}
			if f := p.Files[rel]; f != nil {
				l.reverseFile(p, f, rs, targets[rel], mem[rel])
			}
		}
	}
}

// providerPatches reads and parses the patches of one pin provider and
// groups their file diffs by the source they change, in the order they are
// applied. ok is false when a patch could not be used (a Problem says why).
func (l *scanner) providerPatches(p *model.Package, pp pin.Provider, mem map[string][]byte) (targets map[string][]*patch.FileDiff, order []string, ok bool) {
	id := pp.Kind + "/" + pp.Name
	sources := map[string]bool{}
	var names []string
	for _, s := range pp.Sources {
		if s.To != "" {
			sources[s.To] = true
			names = append(names, s.To)
		}
	}
	slices.Sort(names)
	targets = map[string][]*patch.FileDiff{}
	ok = true
	fail := func(loc model.Location, msg, hint string) {
		p.Problems = append(p.Problems, model.Problem{Check: model.CheckPinDigest, Provider: id, Location: loc, Message: msg, Hint: hint})
		ok = false
	}
	rebuild := fmt.Sprintf("`builder build %s`", p.CommandPath())
	for _, rel := range pp.Patches {
		if pin.CheckPath(rel) != nil {
			ok = false // the pin file's validation reports the path
			continue
		}
		data, err := l.readPackageFile(p, rel, mem[rel])
		if err != nil {
			fail(model.Location{File: pin.FileName},
				fmt.Sprintf("%s lists patch %s for %s, but it cannot be read: %v; the patched files' digests cannot be checked", pin.FileName, rel, id, err),
				fmt.Sprintf("restore %s, or remove it from %s and re-vendor: %s", rel, pin.FileName, rebuild))
			continue
		}
		pt, err := patch.Parse(rel, data)
		if err != nil {
			loc := model.Location{File: rel}
			var pe *patch.ParseError
			if errors.As(err, &pe) {
				loc.Line = pe.Line
			}
			fail(loc, fmt.Sprintf("patch %s of %s does not parse: %v; the patched files' digests cannot be checked", rel, id, err),
				"write it as a unified diff (`diff -u` or `git diff` output) whose ---/+++ paths are relative to the package directory")
			continue
		}
		for _, fd := range pt.Files {
			if fd.OldName == patch.DevNull || fd.NewName == patch.DevNull {
				fail(model.Location{File: rel, Line: fd.Line},
					fmt.Sprintf("patch %s creates or deletes %s; a patch may only change a pinned source of %s", rel, fd.Target(), id),
					"drop that part of the patch")
				continue
			}
			target := ""
			for _, n := range []string{fd.NewName, fd.OldName} {
				if sources[n] {
					target = n
					break
				}
			}
			if target == "" {
				fail(model.Location{File: rel, Line: fd.Line},
					fmt.Sprintf("patch %s changes %s, which is not a pinned source of %s (sources: %s)", rel, fd.Target(), id, strings.Join(names, ", ")),
					"the diff's ---/+++ paths must name a source's `to`, relative to the package directory, e.g. a/files/infrastructure-components.yaml")
				continue
			}
			if _, seen := targets[target]; !seen {
				order = append(order, target)
			}
			targets[target] = append(targets[target], fd)
		}
	}
	return targets, order, ok
}

// reverseFile undoes diffs (in the order they were applied) on the
// vendored file f and records the digest of the result, or why it failed.
func (l *scanner) reverseFile(p *model.Package, f *model.File, rs pin.Relocations, diffs []*patch.FileDiff, data []byte) {
	if f.Size > l.opts.Limit {
		f.UpstreamErr = fmt.Sprintf("%s is %d bytes, more than the %d-byte limit: its patches were not reversed, so it was not compared with its pin", f.Path, f.Size, l.opts.Limit)
		return
	}
	if data == nil {
		var err error
		if data, err = l.readPackageFile(p, f.Path, nil); err != nil {
			f.UpstreamErr = fmt.Sprintf("%s cannot be read to reverse its patches: %v", f.Path, err)
			return
		}
	}
	if len(rs) > 0 {
		out, err := images.Unrelocate(data, rs)
		if err != nil {
			f.UpstreamErr = fmt.Sprintf("its relocation (%s) cannot be reversed on %s: %v", rs, f.Path, err)
			return
		}
		data = out
	}
	for i := len(diffs) - 1; i >= 0; i-- {
		fd := diffs[i]
		out, _, err := fd.Unapply(data)
		if err != nil {
			f.UpstreamErr = describeUnapply(f.Path, fd, err)
			return
		}
		data = out
	}
	d := blob.Digest(sha256.Sum256(data))
	f.Upstream = &d
}

// describeUnapply says which hunk of which patch does not match the
// vendored file, and where.
func describeUnapply(file string, fd *patch.FileDiff, err error) string {
	var ae *patch.ApplyError
	if !errors.As(err, &ae) {
		return fmt.Sprintf("patch %s cannot be reversed on %s: %v", fd.Patch, file, err)
	}
	hunk := fmt.Sprintf("hunk #%d %s", ae.Hunk, ae.Header)
	if ae.Hunk >= 1 && ae.Hunk <= len(fd.Hunks) {
		hunk += fmt.Sprintf(" (line %d of the patch)", fd.Hunks[ae.Hunk-1].Line)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "patch %s %s cannot be reversed on %s", fd.Patch, hunk, file)
	switch {
	case ae.Cause != "":
		fmt.Fprintf(&b, ": %s", ae.Cause)
	case ae.EOF:
		fmt.Fprintf(&b, ": the patched file should have %q at line %d, but %s ends at line %d", ae.Want, ae.Line, file, ae.Line-1)
	default:
		fmt.Fprintf(&b, ": line %d is %q, the patched file should have %q", ae.Line, ae.Got, ae.Want)
	}
	if ae.Hint != "" {
		b.WriteString("; " + ae.Hint)
	}
	return b.String()
}

// readPackageFile reads the package file rel (a slash path), from data when
// the chart reader has it already, else from disk the way the loader reads
// every file: a symlink is followed only within the tree, only regular
// files are read, at most Options.Limit bytes.
func (l *scanner) readPackageFile(p *model.Package, rel string, data []byte) ([]byte, error) {
	if data != nil {
		return data, nil
	}
	fp := filepath.Join(p.Dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(fp)
	if err != nil {
		return nil, unwrapPath(err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, tfi, prob := l.followLink(p.Dir, fp, rel)
		if prob != nil {
			return nil, errors.New(prob.Message)
		}
		fp, fi = t, tfi
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	return l.readCapped(fp, l.opts.Limit)
}
