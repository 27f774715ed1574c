package layout

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile reads the vendored file rel (a slash path relative to the
// package directory) through root, the package directory opened as an
// os.Root, so that no symlink leads the read out of the package, and
// refuses a file larger than limit bytes without reading more than
// limit+1 of it. The builder (rebuilding a blob, reusing a pinned file) and
// `builder push` (the files of a release) read package files with it.
func ReadFile(root *os.Root, rel string, limit int64) ([]byte, error) {
	f, err := root.Open(filepath.FromSlash(rel))
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
