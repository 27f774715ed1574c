//go:build unix

package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir takes an exclusive lock on dir/lock so that two servers never
// share a data directory (each would record the other's running scans as
// interrupted). The kernel drops the lock when the process dies, kill -9
// included.
func lockDataDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("data directory %s is in use by another verifier serve (give each its own dataDir)", dir)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	return f, nil
}
