package add

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames old to new unless new exists (os.ErrExist):
// renameat2 with RENAME_NOREPLACE, where rename(2) would replace an empty
// directory; on a file system without it, a check then a rename.
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY):
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: os.ErrExist}
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL):
		return checkThenRename(old, new)
	}
	return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
}
