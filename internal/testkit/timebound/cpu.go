//go:build unix

package timebound

import (
	"os"
	"syscall"
	"time"
)

// CPU is the CPU time (user and system) this process has used so far. A
// test of how much work something does (a parser that must not blow up on
// aliases, a search that must not go quadratic) compares the CPU time the
// work used to a bound instead of the wall-clock time it took: a busy
// machine stretches the one, not the other. Such a test must not run in
// parallel with others of its process.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Work runs f and returns the CPU time it used (see CPU).
func Work(f func()) time.Duration {
	start := CPU()
	f()
	return CPU() - start
}

// ProcessWork is the CPU time an ended process used, with the children it
// waited for (wait4's figure): the work bound of a command a test ran,
// which a busy machine does not stretch as it stretches wall-clock time.
func ProcessWork(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}
