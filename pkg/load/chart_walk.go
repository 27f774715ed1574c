package load

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// walk calls c.visit for the chart's directories and files in the order
// and with the arguments filepath.WalkDir(c.p.Dir, c.visit) would, but
// lists each directory through a root opened from its parent's (dirs),
// where the listing also stats each entry (os.File.ReadDir in a root): one
// path component per system call instead of the whole path from /, and
// no second stat when visit asks for an entry's Info. The directory roots
// are kept in dirs (up to maxKeptRoots) for the reads that follow. With no
// dirs (no root to read the chart through) it is filepath.WalkDir.
func (c *chartReader) walk(dirs *dirRoots) {
	if dirs == nil {
		_ = filepath.WalkDir(c.p.Dir, c.visit)
		return
	}
	_ = c.walkDir(dirs, nil, "", c.p.Dir, &lazyDirEntry{path: c.p.Dir})
}

// walkDir is filepath's walkDir for the entry d at fp (rel: its slash
// path relative to the chart with a trailing slash, "" for the chart)
// whose directory's root is parent (nil: none kept). A directory visit
// does not skip is opened as a root from parent's, kept in dirs while
// there is room; one that is not kept is listed from the chart's root.
func (c *chartReader) walkDir(dirs *dirRoots, parent *os.Root, rel, fp string, d fs.DirEntry) error {
	if err := c.visit(fp, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	r := dirs.root
	if rel != "" {
		r = openSubRoot(dirs, parent, rel, d.Name())
	}
	ents, err := listRoot(r, dirs, rel)
	if err != nil {
		if err = c.visit(fp, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return err
		}
	}
	for _, e := range ents {
		if err := c.walkDir(dirs, r, rel+e.Name()+"/", filepath.Join(fp, e.Name()), e); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// listRoot lists the directory of r (rel in the chart), sorted by name as
// os.ReadDir sorts, each entry already stat'ed (a Root's listing is). A
// nil r is listed from the chart's root. The open does not wait (a FIFO
// swapped in for the directory fails to list, it does not block).
func listRoot(r *os.Root, dirs *dirRoots, rel string) ([]fs.DirEntry, error) {
	name := "."
	if r == nil {
		r, name = dirs.root, strings.TrimSuffix(rel, "/")
	}
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return sortedEntries(f)
}

// openSubRoot opens the directory name of parent (rel in the chart, with
// a trailing slash) as a root, kept in dirs while there is room; nil when
// it cannot be opened so (listRoot then opens it from the chart's root,
// and gives the error).
func openSubRoot(dirs *dirRoots, parent *os.Root, rel, name string) *os.Root {
	if parent == nil || len(dirs.dirs) >= maxKeptRoots {
		return nil
	}
	sub, err := parent.OpenRoot(name)
	if err != nil {
		return nil
	}
	dirs.keep(rel, sub)
	return sub
}

// lazyDirEntry is the DirEntry of the walk's root, stat'ed only if asked.
type lazyDirEntry struct{ path string }

func (e *lazyDirEntry) Name() string               { return filepath.Base(e.path) }
func (e *lazyDirEntry) IsDir() bool                { return true }
func (e *lazyDirEntry) Type() fs.FileMode          { return fs.ModeDir }
func (e *lazyDirEntry) Info() (fs.FileInfo, error) { return os.Lstat(e.path) }
