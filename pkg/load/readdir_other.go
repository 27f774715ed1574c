//go:build !linux

package load

import (
	"io/fs"
	"os"
)

// readDir reads the entries of the directory f.
func readDir(f *os.File) ([]fs.DirEntry, error) {
	return f.ReadDir(-1)
}
