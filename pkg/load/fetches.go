package load

import (
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/pinseal/pinseal/internal/pin/infer"
	"github.com/pinseal/pinseal/pkg/model"
)

// maxScripts bounds how many scripts and Makefiles one tree scan reads.
const maxScripts = 4096

// isScript reports whether a file is a shell script or a Makefile the
// tree scan reads for downloads.
func isScript(name string) bool {
	switch {
	case strings.HasSuffix(name, ".sh"), strings.HasSuffix(name, ".bash"), strings.HasSuffix(name, ".mk"):
		return true
	}
	return name == "Makefile" || name == "makefile" || name == "GNUmakefile"
}

// scanFetches reads the tree's scripts, and its Makefiles that are no
// package's own (a package's Makefile is read into its pins), for
// downloads of a components release with no SHA-256 beside them, each
// tied to the package it serves: the one holding it, else the one whose
// ConfigMap template the script names (Turtles' hack/fetch-core-capi.sh
// writes charts/rancher-turtles/templates/core-provider-configmap.yaml).
func scanFetches(root *os.Root, t *model.Tree, scripts []string) []model.Fetch {
	var out []model.Fetch
	for i, rel := range scripts {
		if i >= maxScripts {
			break
		}
		dir, base := path.Dir(rel), path.Base(rel)
		owner := packageHolding(t, dir)
		mk := !strings.HasSuffix(base, ".sh") && !strings.HasSuffix(base, ".bash")
		if mk && owner != nil && owner.Path == dir {
			continue // the package's own Makefile: its pins
		}
		data, err := readBounded(root, rel)
		if err != nil {
			continue
		}
		var found []infer.Fetch
		if mk {
			sub, err := fs.Sub(root.FS(), dir)
			if err != nil {
				continue
			}
			found = infer.MakefileFetches(sub, base, data)
		} else {
			found = infer.ScriptFetches(base, data)
		}
		if len(found) == 0 {
			continue
		}
		pkg, writes := owner, ""
		if pkg == nil {
			pkg, writes = packageNamed(t, string(data))
		}
		for _, f := range found {
			file := rel
			if f.File != base {
				file = path.Join(dir, f.File) // an included Makefile
			}
			out = append(out, model.Fetch{File: file, Line: f.Line, URL: f.Value, Var: f.Name, Command: f.Command, Package: pkg, Writes: writes})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// readBounded reads a regular file of root, at most infer.MaxScriptSize bytes.
func readBounded(root *os.Root, rel string) ([]byte, error) {
	fi, err := root.Lstat(rel)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > infer.MaxScriptSize {
		return nil, fs.ErrInvalid
	}
	return root.ReadFile(rel)
}

// packageHolding is the package whose directory holds dir, nil if none.
func packageHolding(t *model.Tree, dir string) *model.Package {
	var best *model.Package
	for _, p := range t.Packages {
		if p.Path == "." || dir == p.Path || strings.HasPrefix(dir, p.Path+"/") {
			if best == nil || len(p.Path) > len(best.Path) {
				best = p
			}
		}
	}
	return best
}

// packageNamed is the first package one of whose ConfigMap templates the
// script text names by file name, and that file; nil when none is.
func packageNamed(t *model.Tree, text string) (*model.Package, string) {
	for _, p := range t.Packages {
		for _, cm := range p.ConfigMaps {
			if cm.File == "" {
				continue
			}
			if strings.Contains(text, path.Base(cm.File)) {
				return p, path.Join(p.Path, cm.File)
			}
		}
	}
	return nil, ""
}
