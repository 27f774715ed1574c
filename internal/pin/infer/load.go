// Package infer reads the pins of a provider package directory.
//
// It reads the pins of a provider package directory: its
// pin.yaml when it has one (parsed by pkg/pin), else what its Makefile (a
// bounded make variable evaluator) or Dockerfiles (ARG defaults, curl/wget
// and ADD lines) say. See LoadDir.
package infer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pinseal/pinseal/pkg/pin"
)

// makefileNames are the names GNU make looks for, in its order.
var makefileNames = []string{"GNUmakefile", "makefile", "Makefile"}

// LoadDir reads the pins of the package in dir, from the first place that
// has any:
//
//  1. pin.yaml, parsed strictly (Source "pin.yaml");
//  2. the package Makefile (Source "Makefile"): version variables (names
//     ending in VERSION), URL variables paired with SHA-256 variables by
//     name stem (CAPMOX_URL + CAPMOX_SHA256, CABPT_COMPONENTS_URL +
//     CABPT_COMPONENTS_SHA256) assembled into File (each source goes where
//     a recipe's curl or wget writes it, else to files/<its file name> when
//     the package holds that file), and unpinned URLs
//     (URL variables with no SHA-256 partner, curl/wget recipe lines with
//     no digest); in-package includes are read, others ignored;
//  3. Dockerfile or images/*/Dockerfile (Source "Dockerfile"): ARG VERSION=
//     and ARG *_VERSION= defaults, RUN curl/wget and ADD <url> without a
//     digest.
//
// Namespace and Name come from the Makefile's NAMESPACE and NAME whatever
// the source. A package with none of these gives a Set with Source "".
//
// A File assembled from a Makefile has one Provider per upstream version
// with Kind, Name and Release empty (a Makefile does not say them); a
// source URL the Makefile computes keeps its unexpanded $(…) text. Such a
// File is not meant for Validate.
//
// Files are read through an os.Root, so nothing outside dir is read, even
// through a symlink. A pin.yaml that fails to parse returns its error (see
// FieldErrors) together with a Set whose Source is "pin.yaml" and File nil.
func LoadDir(dir string) (*pin.Set, error) {
	return LoadDirRead(dir, nil)
}

// LoadDirRead is LoadDir for a caller that has read some files of dir
// already (a chart's files): read returns the bytes of the file at a
// slash path relative to dir when it holds them, and a file it holds is
// not read again. It must give the file's exact bytes as they were read
// from dir; a file it does not hold (or one larger than the reader's
// bound) is read from dir as LoadDir reads it.
func LoadDirRead(dir string, read func(name string) ([]byte, bool)) (*pin.Set, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the pins of %s: %w", dir, err)
	}
	defer root.Close()
	fsys := dirFS{FS: root.FS(), root: root, read: read}
	set := &pin.Set{}

	mk, err := readFirstMakefile(fsys, dir, set)
	if err != nil {
		return nil, err
	}

	data, err := readLimited(fsys, pin.FileName, pin.MaxFileSize)
	switch {
	case err == nil:
		set.Source = pin.SourcePinFile
		f, err := pin.Parse(data, filepath.Join(dir, pin.FileName))
		if err != nil {
			return set, err
		}
		set.File = f
		return set, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, pin.FileName), err)
	}

	if mk != nil {
		set.File, set.Versions, set.Unpinned = mk.pins()
		if set.File != nil || len(set.Versions) > 0 || len(set.Unpinned) > 0 {
			set.Source = pin.SourceMakefile
			// A computed version ($(shell awk … images/x/Dockerfile)) is
			// often pinned literally in a Dockerfile of the package: read
			// the Dockerfiles it names, else every Dockerfile, for it.
			for _, v := range set.Versions {
				if !v.Known {
					set.Versions = append(set.Versions, literalVersions(fsys, v.Value)...)
					break
				}
			}
			return set, nil
		}
	}

	if err := readDockerfiles(fsys, dir, set); err != nil {
		return nil, err
	}
	return set, nil
}

// readFirstMakefile reads the package's Makefile (the first of
// makefileNames that exists), taking NAME and NAMESPACE into set; nil when
// there is none.
func readFirstMakefile(fsys fs.FS, dir string, set *pin.Set) (*makefile, error) {
	for _, name := range makefileNames {
		data, err := readLimited(fsys, name, maxMakefileSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, name), err)
		}
		mk := readMakefile(fsys, name, data)
		if v, ok := mk.value("NAMESPACE"); ok {
			set.Namespace = v
		}
		if v, ok := mk.value("NAME"); ok {
			set.Name = v
		}
		return mk, nil
	}
	return nil, nil
}

// readDockerfiles takes the version pins of the package's Dockerfile and
// images/*/Dockerfile into set.
func readDockerfiles(fsys fs.FS, dir string, set *pin.Set) error {
	dockerfiles := []string{"Dockerfile"}
	more, _ := fs.Glob(fsys, "images/*/Dockerfile")
	sort.Strings(more)
	dockerfiles = append(dockerfiles, more...)
	for _, name := range dockerfiles {
		data, err := readLimited(fsys, name, maxMakefileSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Join(dir, filepath.FromSlash(name)), err)
		}
		v, u := readDockerfile(name, data)
		set.Versions = append(set.Versions, v...)
		set.Unpinned = append(set.Unpinned, u...)
	}
	if len(set.Versions) > 0 || len(set.Unpinned) > 0 {
		set.Source = pin.SourceDockerfile
	}
	return nil
}

// maxDockerfiles bounds how many Dockerfiles literalVersions reads.
const maxDockerfiles = 32

// literalVersions returns the known ARG version defaults of the Dockerfiles
// a computed Makefile value names (a path ending in Dockerfile inside the
// package), else of every Dockerfile in the package (Dockerfile,
// images/*/Dockerfile and others up to three directories deep).
func literalVersions(fsys fs.FS, computed string) []pin.Var {
	var names []string
	for _, w := range strings.FieldsFunc(computed, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\'' || r == '"' || r == '(' || r == ')' || r == ','
	}) {
		w = strings.TrimPrefix(w, "./")
		if path.Base(w) == "Dockerfile" && fs.ValidPath(w) {
			names = append(names, w)
		}
	}
	if len(names) == 0 {
		for _, g := range []string{"Dockerfile", "*/Dockerfile", "*/*/Dockerfile", "*/*/*/Dockerfile"} {
			m, _ := fs.Glob(fsys, g)
			sort.Strings(m)
			names = append(names, m...)
		}
	}
	var out []pin.Var
	seen := map[string]bool{}
	for i, name := range names {
		if i >= maxDockerfiles || seen[name] {
			continue
		}
		seen[name] = true
		data, err := readLimited(fsys, name, maxMakefileSize)
		if err != nil {
			continue
		}
		vs, _ := readDockerfile(name, data)
		for _, v := range vs {
			if v.Known {
				out = append(out, v)
			}
		}
	}
	return out
}
