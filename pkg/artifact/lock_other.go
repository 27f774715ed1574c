//go:build !unix

package artifact

import "sync"

var dirLock sync.Mutex

// lockDir serialises index updates within this process; on systems without
// flock concurrent processes writing one layout are not coordinated.
func lockDir(string) (func(), error) {
	dirLock.Lock()
	return dirLock.Unlock, nil
}
