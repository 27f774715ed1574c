//go:build unix

package artifact

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on a directory (blocking) and returns
// the function that releases it. The lock is advisory and held by the open
// file description, so it also serialises goroutines of one process.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
