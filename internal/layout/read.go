package layout

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReadFile reads the vendored file rel (a slash path relative to the
// package directory) through root, the package directory opened as an
// os.Root, so that no symlink leads the read out of the package, and
// refuses a file larger than limit bytes without reading more than
// limit+1 of it. The builder (rebuilding a blob, reusing a pinned file) and
// `builder push` (the files of a release) read package files with it.
func ReadFile(root *os.Root, rel string, limit int64) ([]byte, error) {
	f, err := OpenRegular(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", rel)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, limit)
	}
	return b, nil
}

// OpenRegular opens the file rel (a slash path) through root for reading,
// and only if it is a regular file: the open does not wait (O_NONBLOCK: a
// FIFO would block it until a writer came) and the opened file's mode is
// checked before anything is read, so a FIFO, device or socket in the tree
// (or swapped in after a walk saw a file there) is an error, never read.
// Every file of an untrusted tree is opened with it.
func OpenRegular(root *os.Root, rel string) (*os.File, error) {
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: rel, Err: fmt.Errorf("not a regular file (%s); not read", fileKind(fi.Mode()))}
	}
	return f, nil
}

// fileKind names the type of a file that is not a regular one.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}
