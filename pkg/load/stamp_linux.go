package load

import (
	"io/fs"
	"syscall"
)

// fileID is what tells a file changed without reading it: its size,
// mode, inode and modification and change times (a write moves the
// change time even when it restores the modification time).
type fileID struct {
	size         int64
	mode         fs.FileMode
	ino          uint64
	mtime, ctime int64
}

func idOf(fi fs.FileInfo) fileID {
	id := fileID{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
		id.ctime = st.Ctim.Nano()
	}
	return id
}
