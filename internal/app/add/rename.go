package add

import "os"

// checkThenRename renames old to new after checking new does not exist.
func checkThenRename(old, new string) error {
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: os.ErrExist}
	}
	return os.Rename(old, new)
}
