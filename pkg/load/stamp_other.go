//go:build !linux

package load

import "io/fs"

// fileID is what tells a file changed without reading it: its size, mode
// and modification time.
type fileID struct {
	size  int64
	mode  fs.FileMode
	mtime int64
}

func idOf(fi fs.FileInfo) fileID {
	return fileID{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano()}
}
