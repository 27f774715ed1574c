package load

import (
	"bufio"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// limitSelf bounds the render child: its address space may grow by mem
// bytes beyond what it holds now (a Go program reserves about 1 GiB of
// address space at start, whatever it uses), its Go heap aims at mem, and
// its CPU time is cpu seconds (a backstop for a parent that died).
func limitSelf(mem, cpu int64) error {
	debug.SetMemoryLimit(mem)
	if !raceEnabled { // the race detector reserves terabytes of shadow memory
		limit := uint64(vmSize() + mem)
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			return err
		}
	}
	return syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: uint64(cpu), Max: uint64(cpu) + 1})
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

// childProcAttr puts the child in its own process group and makes
// cancelling kill the whole group.
func childProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
