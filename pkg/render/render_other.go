//go:build !linux

package render

import (
	"os/exec"
	"runtime/debug"
	"time"
)

// limitSelf bounds the render child where there is no RLIMIT_AS to rely
// on: the Go heap aims at mem (a soft bound). Only Linux gets a hard
// memory bound.
func limitSelf(mem int64) error {
	debug.SetMemoryLimit(mem)
	return nil
}

// limitCPU: the child's watchdog and the parent's deadline bound the time.
func limitCPU(time.Duration) error { return nil }

func childProcAttr(*exec.Cmd) {}

func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
