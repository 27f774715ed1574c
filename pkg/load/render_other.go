//go:build !linux

package load

import (
	"os/exec"
	"runtime/debug"
)

// limitSelf bounds the render child where there is no RLIMIT_AS to rely
// on: the Go heap aims at mem and the parent's deadline bounds the time.
// Only Linux gets a hard memory bound.
func limitSelf(mem, cpu int64) error {
	debug.SetMemoryLimit(mem)
	return nil
}

// childProcAttr: cancelling kills the child.
func childProcAttr(cmd *exec.Cmd) {}
