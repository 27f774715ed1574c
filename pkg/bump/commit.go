package bump

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/killpoint"
	"github.com/pinseal/pinseal/pkg/pin"
)

// JournalName is the file a bump keeps in the package directory while it
// renames files into place. It lists each target and a backup of its old
// content; a bump killed between two renames leaves it behind, and the next
// bump (or `builder build`, or Recover) restores every file from it.
const JournalName = ".pinseal-bump-journal.json"

type journal struct {
	// Committed is set once every rename is done: recovery then only
	// removes what is left (backups), it does not roll back.
	Committed bool           `json:"committed"`
	Entries   []journalEntry `json:"entries"`
}

type journalEntry struct {
	Target string `json:"target"`           // slash path relative to the package
	Temp   string `json:"temp"`             // staged new content (base name, beside the target)
	Backup string `json:"backup,omitempty"` // old content (base name, beside the target); "" for a new file
}

// change is one file a bump writes.
type change struct {
	rel  string
	data []byte
}

// commit writes all changes so that a failure before the last rename, or
// a kill at any point followed by Recover, leaves every file as it was:
// new contents and backups of the old ones are staged and synced, a
// journal naming them is written, then the renames run; the journal is
// marked committed and removed last.
func commit(dir string, changes []change) error {
	j, err := stage(dir, changes)
	if err != nil {
		return err
	}
	if err := writeJournal(dir, j); err != nil {
		cleanupStaged(dir, j)
		return err
	}
	if err := renameStaged(dir, j); err != nil {
		return err
	}
	return finishCommit(dir, j)
}

// stage writes the new content of every change next to its target and
// backs up the old one, returning the journal naming them; on failure
// whatever it staged is removed.
func stage(dir string, changes []change) (*journal, error) {
	j := &journal{}
	for _, c := range changes {
		e, err := stageChange(dir, c)
		if e.Temp != "" {
			j.Entries = append(j.Entries, e)
		}
		if err != nil {
			cleanupStaged(dir, j)
			return nil, err
		}
	}
	return j, nil
}

// stageChange stages one change: its new content in a temporary file of
// the target's mode, and a backup of the target when there is one. The
// entry names the temporary file once it is written, even on error.
func stageChange(dir string, c change) (journalEntry, error) {
	target := filepath.Join(dir, filepath.FromSlash(c.rel))
	e := journalEntry{Target: c.rel}
	perm := atomicfile.DefaultPerm
	fi, serr := os.Lstat(target)
	switch {
	case serr == nil && !fi.Mode().IsRegular():
		return e, fmt.Errorf("%s is not a regular file (%s); replace it with a file", c.rel, fi.Mode().Type())
	case serr == nil:
		perm = fi.Mode().Perm()
	case !errors.Is(serr, fs.ErrNotExist):
		return e, serr
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return e, err
	}
	tmp, err := writeTemp(filepath.Dir(target), filepath.Base(target), c.data, perm)
	if err != nil {
		return e, fmt.Errorf("stage %s: %w", c.rel, err)
	}
	e.Temp = filepath.Base(tmp)
	if serr == nil {
		b, err := backup(target)
		if err != nil {
			return e, fmt.Errorf("back up %s: %w", c.rel, err)
		}
		e.Backup = filepath.Base(b)
	}
	return e, nil
}

// cleanupStaged removes the temporary files and backups of the journal.
func cleanupStaged(dir string, j *journal) {
	for _, e := range j.Entries {
		d := filepath.Dir(filepath.Join(dir, filepath.FromSlash(e.Target)))
		if e.Temp != "" {
			os.Remove(filepath.Join(d, e.Temp))
		}
		if e.Backup != "" {
			os.Remove(filepath.Join(d, e.Backup))
		}
	}
}

// renameStaged renames every staged file over its target; when one fails
// the others are restored from their backups.
func renameStaged(dir string, j *journal) error {
	for i, e := range j.Entries {
		target := filepath.Join(dir, filepath.FromSlash(e.Target))
		if err := os.Rename(filepath.Join(filepath.Dir(target), e.Temp), target); err != nil {
			// Undo what was renamed; the journal covers a crash meanwhile.
			if _, rerr := Recover(dir); rerr != nil {
				return fmt.Errorf("rename %s: %w; and restoring the other files failed: %v (run `builder bump` again to retry the restore)", e.Target, err, rerr)
			}
			return fmt.Errorf("rename %s: %w; every file was restored", e.Target, err)
		}
		if killpoint.AfterRename != nil {
			killpoint.AfterRename(i + 1)
		}
	}
	return nil
}

// finishCommit syncs the renamed files' directories, marks the journal
// committed, then removes the backups and the journal.
func finishCommit(dir string, j *journal) error {
	dirs := map[string]bool{dir: true}
	for _, e := range j.Entries {
		dirs[filepath.Dir(filepath.Join(dir, filepath.FromSlash(e.Target)))] = true
	}
	for d := range dirs {
		syncDir(d)
	}
	j.Committed = true
	if err := writeJournal(dir, j); err != nil {
		return fmt.Errorf("every file is written, but marking the bump journal done failed: %w (run `builder bump` again to clean up)", err)
	}
	for _, e := range j.Entries {
		if e.Backup != "" {
			os.Remove(filepath.Join(filepath.Dir(filepath.Join(dir, filepath.FromSlash(e.Target))), e.Backup))
		}
	}
	if err := os.Remove(filepath.Join(dir, JournalName)); err != nil {
		return fmt.Errorf("every file is written; removing %s failed: %w", JournalName, err)
	}
	syncDir(dir)
	return nil
}

// Recover finishes what a killed bump left in dir: when the journal says
// the renames were not all done, every target is restored from its backup
// (and files the bump created are removed), so the package is byte for
// byte as before the bump; when they were, only the leftovers are removed.
// It returns the restored paths; no journal, nothing to do.
func Recover(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, JournalName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, JournalName), err)
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("%s is not a bump journal (%v); restore the package from version control and remove the file", filepath.Join(dir, JournalName), err)
	}
	// Check every entry before touching anything.
	for _, e := range j.Entries {
		if pin.CheckPath(e.Target) != nil || strings.ContainsAny(e.Temp+e.Backup, `/\`) ||
			!strings.HasPrefix(e.Temp, atomicfile.TempPrefix) || (e.Backup != "" && !strings.HasPrefix(e.Backup, atomicfile.TempPrefix)) {
			return nil, fmt.Errorf("%s names %q, which a bump does not write; restore the package from version control and remove the journal", JournalName, e.Target)
		}
	}
	var restored []string
	for _, e := range j.Entries {
		target := filepath.Join(dir, filepath.FromSlash(e.Target))
		d := filepath.Dir(target)
		os.Remove(filepath.Join(d, e.Temp))
		if j.Committed {
			if e.Backup != "" {
				os.Remove(filepath.Join(d, e.Backup))
			}
			continue
		}
		switch {
		case e.Backup != "":
			if err := os.Rename(filepath.Join(d, e.Backup), target); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return restored, fmt.Errorf("restore %s: %w", e.Target, err)
			} else if err == nil {
				// rename(2) does nothing when both names are links to one
				// file (the target was not renamed yet): drop the backup.
				os.Remove(filepath.Join(d, e.Backup))
				restored = append(restored, e.Target)
			}
		default:
			if err := os.Remove(target); err == nil {
				restored = append(restored, e.Target)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return restored, fmt.Errorf("remove %s: %w", e.Target, err)
			}
		}
		syncDir(d)
	}
	if err := os.Remove(filepath.Join(dir, JournalName)); err != nil {
		return restored, err
	}
	syncDir(dir)
	return restored, nil
}

func writeJournal(dir string, j *journal) error {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, JournalName), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write the bump journal: %w", err)
	}
	return nil
}

// writeTemp writes data to a synced temp file in d with mode perm.
func writeTemp(d, base string, data []byte, perm fs.FileMode) (string, error) {
	f, err := os.CreateTemp(d, atomicfile.TempPrefix+base+".*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// backup keeps the old content of target beside it: a hard link, or a
// synced copy where the file system has no links.
func backup(target string) (string, error) {
	d, base := filepath.Dir(target), filepath.Base(target)
	f, err := os.CreateTemp(d, atomicfile.TempPrefix+base+".old.*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	if os.Link(target, name) == nil {
		return name, nil
	}
	src, err := os.Open(target)
	if err != nil {
		return "", err
	}
	defer src.Close()
	fi, _ := src.Stat()
	dst, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

func syncDir(d string) {
	f, err := os.Open(d)
	if err != nil {
		return
	}
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		_ = err // the renames are done; durability is best effort here
	}
	f.Close()
}

// Write is one file Commit writes: a slash path relative to the package
// directory and its whole new content.
type Write struct {
	Path string
	Data []byte
}

// Commit writes files into the package directory dir as a bump commits
// its own: staged, journaled, renamed, so a failure leaves every file as it
// was and a kill is rolled back by Recover (which `builder build` and
// `builder bump` run first). `builder relocate` commits with it.
func Commit(dir string, files []Write) error {
	cs := make([]change, len(files))
	for i, f := range files {
		cs[i] = change{rel: f.Path, data: f.Data}
	}
	return commit(dir, cs)
}
