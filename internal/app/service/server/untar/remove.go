package untar

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// RemoveAll removes dir and everything below it, however deep. os.RemoveAll
// keeps a descriptor open for every level it descends and fails with "too
// many open files" on a tree tens of thousands of directories deep (which a
// crash may leave behind); RemoveAll here never works
// more than two levels below dir: it moves the contents of each
// subdirectory up into dir (renames within one file system) and removes the
// emptied subdirectory, so each entry is moved at most once and at most two
// directories are open at a time. Symbolic links are removed, not followed.
// A dir that does not exist is not an error.
func RemoveAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	return flatten(dir)
}

// flatten removes dir by moving the contents of its subdirectories up.
func flatten(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	os.Chmod(dir, 0o700)
	seq := 0
	for {
		names, err := readNames(dir, 1024)
		if err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
		if len(names) == 0 {
			break
		}
		progress := false
		for _, n := range names {
			p := filepath.Join(dir, n)
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
			if !fi.IsDir() {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("remove %s: %w", p, err)
				}
				progress = true
				continue
			}
			if err := os.Remove(p); err == nil {
				progress = true
				continue
			}
			// A non-empty directory: move its entries up into dir.
			os.Chmod(p, 0o700)
			kids, err := readNames(p, 1024)
			if err != nil {
				return fmt.Errorf("remove %s: %w", p, err)
			}
			for _, k := range kids {
				for tries := 0; ; tries++ {
					seq++
					err := os.Rename(filepath.Join(p, k), filepath.Join(dir, ".rm-"+strconv.Itoa(seq)))
					if err == nil {
						progress = true
						break
					}
					if tries == 16 {
						return fmt.Errorf("remove %s: %w", p, err)
					}
				}
			}
		}
		if !progress {
			return fmt.Errorf("remove %s: no entry below it could be removed", dir)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// readNames reads up to n names of dir's entries.
func readNames(dir string, n int) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(n)
	if err == io.EOF {
		err = nil
	}
	return names, err
}
