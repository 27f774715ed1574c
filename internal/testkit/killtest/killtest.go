// Package killtest SIGKILLs a test's child process between two renames of a journaled commit.
package killtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/killpoint"
)

// StopAtRename makes this process, a kill test's child, stop for good
// after the rename numbered PINSEAL_KILL_AFTER, announcing it in the file
// PINSEAL_KILL_MARKER, so the parent SIGKILLs it exactly between two renames.
func StopAtRename() {
	n, _ := strconv.Atoi(os.Getenv("PINSEAL_KILL_AFTER"))
	marker := os.Getenv("PINSEAL_KILL_MARKER")
	killpoint.AfterRename = func(i int) {
		if i == n {
			os.WriteFile(marker, []byte("renamed "+strconv.Itoa(i)), 0o644)
			// Sleep, not select{}: with no other goroutine alive the runtime would
			// report a deadlock and exit before the SIGKILL lands.
			time.Sleep(time.Hour)
		}
	}
}

// KillAtRename runs the test helper (a test of this test binary calling
// StopAtRename) with env until it has done n renames and SIGKILLs it. It
// fails unless the child really died of SIGKILL.
func KillAtRename(t *testing.T, helper string, n int, env ...string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "marker")
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), env...), "PINSEAL_KILL_AFTER="+strconv.Itoa(n), "PINSEAL_KILL_MARKER="+marker)
	out := &limitedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait in the background: ProcessState is only set by Wait, so this is
	// how the loop learns that the helper exited before its n-th rename.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitForMarker(t, cmd, done, marker, n, out)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("helper: %v, want death by SIGKILL\n%s", err, out)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper ended with %v, not SIGKILL: it was not killed between renames\n%s", ee, out)
	}
}

// waitForMarker waits until the child announces its n-th rename; it fails
// if the child exits first or never gets there.
func waitForMarker(t *testing.T, cmd *exec.Cmd, done chan error, marker string, n int, out *limitedBuffer) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(marker); err == nil {
			return
		}
		select {
		case <-done:
			t.Fatalf("the helper exited before rename %d:\n%s", n, out)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-done
			t.Fatalf("the helper never reached rename %d:\n%s", n, out)
		}
	}
}

// ChangedFiles counts the files of before whose content differs in after.
func ChangedFiles(before, after map[string]string) int {
	changed := 0
	for k, v := range before {
		if after[k] != v {
			changed++
		}
	}
	return changed
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 1<<16 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}
func (l *limitedBuffer) String() string { return string(l.b) }
