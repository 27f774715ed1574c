// Package atomicfile writes files atomically: readers see the old content or
// the new, never half.
//
// It writes files so that a reader, a crash or a killed
// process sees either the old content or the new one, never half a file:
// each file is written to a temporary file in the same directory, synced,
// given its final mode and renamed over the target.
//
// WriteFiles extends this to several files, "all or nothing as far as the
// file system allows": every temporary file is staged (written and synced)
// before the first rename, so a failure while writing changes no target; a
// failure during the renames (rare: same directory, same file system) rolls
// the already renamed targets back from hard-link backups where it can.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DefaultPerm is the mode of files that do not exist yet when the caller
// passes Perm 0. It is applied exactly, whatever the process umask, so the
// result does not depend on who runs the build.
const DefaultPerm fs.FileMode = 0o644

// TempPrefix starts the names of staged temporary files and backups, so a
// leftover from a killed process is recognisable (and ignorable).
const TempPrefix = ".pinseal-tmp-"

// File is one file to write.
type File struct {
	Path string      // target path
	Data []byte      // full new content
	Perm fs.FileMode // mode for a new file; 0 means DefaultPerm. An existing file keeps its mode.
}

// WriteFile atomically replaces path with data. An existing file keeps its
// permission bits; a new one gets perm (DefaultPerm when 0). Missing parent
// directories are created.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFiles([]File{{Path: path, Data: data, Perm: perm}})
}

// rename is os.Rename; tests replace it to simulate a failing rename.
var rename = os.Rename

// staged is a temporary file waiting to be renamed over its target.
type staged struct {
	target  string
	tmp     string
	backup  string // hard link to the old target, "" if none
	existed bool   // the target existed before this write
	done    bool   // renamed over target
}

// WriteFiles writes all files: it stages every temporary file first and
// renames only when all are staged. On error no temporary file is left
// behind, and every target is as it was, unless a rename failed and a
// rollback was impossible — the error then says which files are new.
// The same path must not appear twice.
func WriteFiles(files []File) (err error) {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		abs, aerr := filepath.Abs(f.Path)
		if aerr != nil {
			return fmt.Errorf("atomic write %s: %w", f.Path, aerr)
		}
		if seen[abs] {
			return fmt.Errorf("atomic write: %s given twice", f.Path)
		}
		seen[abs] = true
	}

	st := make([]*staged, 0, len(files))
	defer func() {
		// Whatever happened, no temp file or backup survives.
		for _, s := range st {
			if !s.done && s.tmp != "" {
				os.Remove(s.tmp)
			}
			if s.backup != "" {
				os.Remove(s.backup)
			}
		}
	}()

	// Phase 1: stage every file.
	for _, f := range files {
		s, serr := stage(f)
		if s != nil {
			st = append(st, s)
		}
		if serr != nil {
			return serr
		}
	}

	// Phase 2: keep hard-link backups of the targets, so a failed rename
	// can be undone. Not every file system supports links; without them
	// the rollback is best effort.
	for _, s := range st {
		if _, lerr := os.Lstat(s.target); lerr != nil {
			continue
		}
		b, berr := tempName(filepath.Dir(s.target), filepath.Base(s.target)+".old")
		if berr != nil {
			continue
		}
		if os.Link(s.target, b) == nil {
			s.backup = b
		}
	}

	// Phase 3: rename.
	dirs := map[string]bool{}
	for i, s := range st {
		if rerr := rename(s.tmp, s.target); rerr != nil {
			return rollback(st[:i], fmt.Errorf("atomic write %s: rename: %w", s.target, rerr))
		}
		s.done = true
		dirs[filepath.Dir(s.target)] = true
	}

	// Phase 4: make the renames durable.
	for d := range dirs {
		if serr := syncDir(d); serr != nil {
			return fmt.Errorf("atomic write: sync directory %s: %w", d, serr)
		}
	}
	return nil
}

// rollback restores renamed targets from their backups (or removes targets
// that did not exist before) and returns cause, annotated when some file
// could not be restored.
func rollback(done []*staged, cause error) error {
	var stuck []string
	for _, s := range done {
		switch {
		case s.backup != "":
			if os.Rename(s.backup, s.target) == nil {
				s.backup = ""
				continue
			}
		case !s.existed:
			if os.Remove(s.target) == nil {
				continue
			}
		}
		stuck = append(stuck, s.target)
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%w; these files already hold the new content and could not be rolled back: %s",
			cause, strings.Join(stuck, ", "))
	}
	return cause
}

// stage writes f to a synced temp file beside its target with the final mode.
func stage(f File) (*staged, error) {
	dir := filepath.Dir(f.Path)
	perm := f.Perm
	if perm == 0 {
		perm = DefaultPerm
	}
	existed := false
	if fi, err := os.Stat(f.Path); err == nil {
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("atomic write %s: not a regular file (%s); remove it or choose another path", f.Path, fi.Mode().Type())
		}
		perm = fi.Mode().Perm()
		existed = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("atomic write %s: %w", f.Path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("atomic write %s: create directory: %w", f.Path, err)
	}
	tmp, err := os.CreateTemp(dir, TempPrefix+filepath.Base(f.Path)+".*")
	if err != nil {
		return nil, fmt.Errorf("atomic write %s: create temp file: %w", f.Path, err)
	}
	s := &staged{target: f.Path, tmp: tmp.Name(), existed: existed}
	werr := func() error {
		if _, err := tmp.Write(f.Data); err != nil {
			return err
		}
		// Chmod on the open file: exact mode, independent of the umask.
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
		return tmp.Sync()
	}()
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return s, fmt.Errorf("atomic write %s: write temp file: %w", f.Path, werr)
	}
	return s, nil
}

// tempName returns an unused name in dir for a backup link.
func tempName(dir, base string) (string, error) {
	f, err := os.CreateTemp(dir, TempPrefix+base+".*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	// os.Link refuses to overwrite; free the name. The race window is
	// harmless: a clash only makes Link fail and the backup is skipped.
	if err := os.Remove(name); err != nil {
		return "", err
	}
	return name, nil
}

// syncDir fsyncs a directory so that renames inside it survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	err = d.Sync()
	// Some file systems refuse fsync on directories; the rename is done.
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}

// StaleAge is how old a leftover temporary file must be before RemoveStale
// takes it for the remains of a killed writer rather than a live one.
const StaleAge = 10 * time.Minute

// RemoveStale removes the temporary files (TempPrefix) that killed writers
// left in dir, if last modified more than age ago (StaleAge when age <= 0),
// and returns their names. Fresher ones may belong to a writer still at
// work and are kept.
func RemoveStale(dir string, age time.Duration) ([]string, error) {
	if age <= 0 {
		age = StaleAge
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("remove stale temp files in %s: %w", dir, err)
	}
	var removed []string
	cutoff := time.Now().Add(-age)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), TempPrefix) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.ModTime().After(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("remove stale temp file: %w", err)
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
