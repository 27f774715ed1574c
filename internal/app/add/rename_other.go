//go:build !linux

package add

func renameNoReplace(old, new string) error { return checkThenRename(old, new) }
