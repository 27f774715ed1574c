//go:build integration

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/gitbomb"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// Git objects that inflate to far more than they weigh: a blob of 700 MiB
// of zeros is 700 KB in the repository. Against the real `verifier check
// --base` and `verifier serve` processes, such a blob anywhere in the
// tree costs at most 128 MiB of peak RSS more than the same repository
// without it; one inside a package is refused naming the file and the
// per-file limit, one outside every package is never read. A chain of
// annotated tags resolves as a --base, up to a bounded depth.

const (
	zeroBlobSize = 700 << 20
	maxRSSRise   = 128 << 20
)

// procRun is a finished child process: its output, exit code, peak RSS
// (VmHWM, read from /proc while it ran) and how long it took.
type procRun struct {
	stdout, stderr string
	code           int
	peak           int64 // bytes
	took           time.Duration
	work           time.Duration // CPU time, with the children it waited for
}

// workBound is the CPU time a refusal may cost: a bound of the work, which
// a busy machine does not stretch as it stretches wall-clock time.
const workBound = 30 * time.Second

// runPeakLimit is how long runPeak lets a process run before killing it.
const runPeakLimit = 3 * time.Minute

// runPeak runs the verifier with args and env added, polling its VmHWM.
func runPeak(t *testing.T, env []string, args ...string) procRun {
	t.Helper()
	cmd := exec.Command(verifierBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var peak int64
	go func() {
		defer close(done)
		cmd.Wait()
	}()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	// A process that never ends is stopped: the test fails on its exit.
	kill := time.AfterFunc(runPeakLimit, func() { cmd.Process.Kill() })
	defer kill.Stop()
poll:
	for {
		if kb := statusKiB(status, "VmHWM"); kb<<10 > peak {
			peak = kb << 10
		}
		select {
		case <-done:
			break poll
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The kernel's own figure at exit covers the last few milliseconds.
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss<<10 > peak {
		peak = ru.Maxrss << 10
	}
	return procRun{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode(), peak: peak, took: time.Since(start), work: timebound.ProcessWork(cmd.ProcessState)}
}

// statusKiB reads a kB field of a /proc status file (0 once it is gone).
func statusKiB(file, field string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// zeroCommit adds a blob of n zeros at path (relative to the repository's
// top) in a new commit on top of the examples repository holding root.
func zeroCommit(t *testing.T, root, path string, n int64) {
	t.Helper()
	top := filepath.Dir(root)
	h, err := gitbomb.ZeroBlob(top, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitbomb.Commit(top, path, h); err != nil {
		t.Fatal(err)
	}
}

// leftIn lists what dir holds.
func leftIn(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestIntegrationBaseBigBlob(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 700 MiB git blobs")
	}
	run := func(t *testing.T, root string, args ...string) procRun {
		tmp := t.TempDir()
		r := runPeak(t, []string{"TMPDIR=" + tmp}, append([]string{"check", root}, args...)...)
		t.Logf("verifier check %s: exit %d in %s, peak RSS %d MiB", strings.Join(args, " "), r.code, r.took.Round(time.Millisecond), r.peak>>20)
		if left := leftIn(tmp); len(left) != 0 {
			t.Errorf("left behind in TMPDIR: %v", left)
		}
		return r
	}
	empty := run(t, gitExamples(t), "--base", "HEAD")
	if empty.code != 0 {
		t.Fatalf("the examples at HEAD: exit %d\n%s%s", empty.code, empty.stdout, empty.stderr)
	}

	t.Run("outside every package", func(t *testing.T) {
		root := gitExamples(t)
		zeroCommit(t, root, "zeros.bin", zeroBlobSize)
		zeroCommit(t, root, "examples/docs/zeros.bin", zeroBlobSize)
		r := run(t, root, "--base", "HEAD")
		if r.code != 0 || !strings.Contains(r.stdout, "PASSED") {
			t.Fatalf("exit %d, want 0 (the blobs are outside every package)\n%s%s", r.code, r.stdout, r.stderr)
		}
		if rise := r.peak - empty.peak; rise > maxRSSRise {
			t.Errorf("peak RSS %d MiB, %d MiB more than without the blobs; want at most %d MiB more", r.peak>>20, rise>>20, maxRSSRise>>20)
		}
		if r.work > workBound {
			t.Errorf("used %s of CPU (%s of wall-clock time)", r.work, r.took)
		}
	})
	t.Run("inside a package", func(t *testing.T) {
		root := gitExamples(t)
		zeroCommit(t, root, "examples/packages/capi-providers-core/files/zeros.yaml", zeroBlobSize)
		r := run(t, root, "--base", "HEAD")
		want := "packages/capi-providers-core/files/zeros.yaml at HEAD ("
		if r.code != 2 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "more than the 67108864 bytes a file may hold") {
			t.Fatalf("exit %d, want 2 naming %s and the per-file limit\n%s%s", r.code, want, r.stdout, r.stderr)
		}
		if rise := r.peak - empty.peak; rise > maxRSSRise {
			t.Errorf("peak RSS %d MiB, %d MiB more than without the blob; want at most %d MiB more", r.peak>>20, rise>>20, maxRSSRise>>20)
		}
		if r.work > workBound {
			t.Errorf("used %s of CPU (%s of wall-clock time)", r.work, r.took)
		}
	})
	t.Run("annotated tag of an annotated tag", func(t *testing.T) {
		root := gitExamples(t)
		top := filepath.Dir(root)
		if err := gitbomb.TagChain(top, "HEAD", "v2", 2); err != nil {
			t.Fatal(err)
		}
		if err := gitbomb.TagChain(top, "HEAD", "deep", 40); err != nil {
			t.Fatal(err)
		}
		if r := run(t, root, "--base", "v2"); r.code != 0 || !strings.Contains(r.stdout, "PASSED") {
			t.Fatalf("--base v2: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := run(t, root, "--base", "v2~0"); r.code != 0 {
			t.Fatalf("--base v2~0: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
		}
		if r := run(t, root, "--base", "deep"); r.code != 2 || !strings.Contains(r.stderr, "more than 32 annotated tags") {
			t.Fatalf("--base deep: exit %d, want 2 naming the depth bound\n%s%s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestIntegrationServeGitBigBlob: a git source whose commit holds a blob
// of 700 MiB of zeros is refused during the fetch, from the object's
// header in the pack (go-git's pack indexing would read it whole), naming
// the object and the per-file limit, within 128 MiB of server RSS more
// than the same repository without it, in seconds, leaving no checkout.
func TestIntegrationServeGitBigBlob(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 700 MiB git blobs")
	}
	dir := t.TempDir()
	clean := filepath.Dir(gitExamples(t))
	big := filepath.Dir(gitExamples(t))
	h, err := gitbomb.ZeroBlob(big, zeroBlobSize)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gitbomb.Commit(big, "zeros.bin", h); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
dataDir: %s
publicReads: true
sources:
  - name: clean
    git: {url: "file://%s", ref: master}
  - name: big
    git: {url: "file://%s", ref: master}
limits:
  scanTimeout: 60s
`, filepath.Join(dir, "data"), clean, big)
	cfgFile := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startRealServer(t, cfgFile)
	pid := s.cmd.Process.Pid
	scan := func(source string) (scanDetailJSON, int64, time.Duration) {
		_, before := s.memKiB()
		resetPeak(t, pid)
		start, cpu := time.Now(), procWork(t, pid)
		sc := s.scan(source)
		took := time.Since(start)
		work := procWork(t, pid) - cpu
		peak, _ := s.memKiB()
		t.Logf("scan of %s: %s in %s (%s); server RSS %d MiB before, peak %d MiB during", source, sc.Scan.Status, took.Round(time.Millisecond), sc.Scan.Error, before>>10, peak>>10)
		return sc, (peak - before) << 10, work
	}
	sc, cleanRise, _ := scan("clean")
	if sc.Scan.Status == store.Failed {
		t.Fatalf("the clean source failed: %s", sc.Scan.Error)
	}
	sc, rise, work := scan("big")
	want := "a blob object of 734003200 bytes (at byte "
	if sc.Scan.Status != store.Failed || !strings.Contains(sc.Scan.Error, want) || !strings.Contains(sc.Scan.Error, "more than the 67108864 a file may hold (limits.gitMaxFileBytes)") {
		t.Errorf("scan %+v, want failed saying %q and the per-file limit", sc.Scan, want)
	}
	if rise-cleanRise > maxRSSRise {
		t.Errorf("server peak RSS rose by %d MiB scanning the blob, %d MiB for the clean source; want at most %d MiB more", rise>>20, cleanRise>>20, maxRSSRise>>20)
	}
	if work > workBound {
		t.Errorf("the scan used %s of the server's CPU", work)
	}
	if left := leftIn(filepath.Join(dir, "data", "git", "big")); len(left) != 0 {
		t.Errorf("the refused checkout left %v", left)
	}
}

// procWork is the CPU time (user and system) process pid has used so far,
// from /proc/PID/stat in clock ticks (100 a second on Linux).
func procWork(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("CPU time of %d: %v", pid, err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
