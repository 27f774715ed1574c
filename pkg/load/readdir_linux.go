package load

import (
	"io/fs"
	"os"
	"syscall"
)

// readDir reads the entries of the directory f, opened in a root, with
// the types the directory gives. (A File opened in a Root looks up every
// entry, one system call each, to fill in its FileInfo; a copy of its
// descriptor, opened outside a Root, reads the same directory without.)
func readDir(f *os.File) ([]fs.DirEntry, error) {
	// Close-on-exec from the start: a render child started meanwhile
	// must not inherit it.
	fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return f.ReadDir(-1)
	}
	g := os.NewFile(fd, f.Name())
	defer g.Close()
	return g.ReadDir(-1)
}
