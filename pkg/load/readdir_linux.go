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
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return f.ReadDir(-1)
	}
	syscall.CloseOnExec(fd)
	g := os.NewFile(uintptr(fd), f.Name())
	defer g.Close()
	return g.ReadDir(-1)
}
