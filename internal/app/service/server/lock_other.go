//go:build !unix

package server

import "os"

// lockDataDir is a no-op where flock(2) is not available.
func lockDataDir(string) (*os.File, error) { return nil, nil }
