package render

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// limitSelf bounds the render child's memory: its address space may grow
// by mem bytes beyond what it holds now (a Go program reserves about 1 GiB
// of address space at start, whatever it uses), and its Go heap aims at
// mem.
func limitSelf(mem int64) error {
	debug.SetMemoryLimit(mem)
	if raceEnabled { // the race detector reserves terabytes of shadow memory
		return nil
	}
	limit := uint64(vmSize() + mem)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

// xcpuOnce installs the SIGXCPU handler: the Go runtime ignores SIGXCPU
// unless told, and the hard CPU limit cannot be raised again per chart.
var xcpuOnce sync.Once

// limitCPU lets the child use d more CPU time from now: past it the kernel
// sends SIGXCPU, and the child exits.
func limitCPU(d time.Duration) error {
	xcpuOnce.Do(func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGXCPU)
		go func() {
			<-c
			fmt.Fprintln(os.Stderr, "pinseal render child: CPU time limit passed")
			os.Exit(5)
		}()
	})
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	secs := uint64((used+d)/time.Second) + 1
	// Only the soft limit moves: an unprivileged process cannot raise its
	// hard limit again.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CPU, &lim); err != nil {
		return err
	}
	lim.Cur = min(secs, lim.Max)
	return syscall.Setrlimit(syscall.RLIMIT_CPU, &lim)
}

// vmSize is this process's address space in bytes (VmSize), 0 if unknown.
func vmSize() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// childProcAttr puts the child in its own process group, and has the
// kernel kill it when the parent dies (a parent killed with SIGKILL kills
// none of its children itself; a render child busy with a chart would go on
// to its own time bound). Pdeathsig follows the OS thread that started the
// child; the Go runtime ends a thread only when a goroutine locked to it
// (LockOSThread) exits without unlocking, which nothing here does.
func childProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killChild kills the child's process group.
func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
