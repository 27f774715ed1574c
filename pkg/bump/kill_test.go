package bump

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/fetch"
)

// TestKilledBumpHelper is the child process of TestKilledBump: it bumps
// the package and stops for good after the n-th rename, announcing it in
// a marker file, so the parent SIGKILLs it exactly between two renames.
func TestKilledBumpHelper(t *testing.T) {
	dir := os.Getenv("PINSEAL_BUMP_KILL_DIR")
	if dir == "" {
		t.Skip("helper process for TestKilledBump")
	}
	stopAtRename()
	o := Options{To: "v0.7.8", TrustOnFirstUse: true, Fetcher: &fetch.Fetcher{
		Mirrors: []fetch.Mirror{{From: "https://github.com/", To: os.Getenv("PINSEAL_BUMP_KILL_MIRROR")}}}}
	if _, err := Bump(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	t.Fatal("the bump finished: it was not stopped between renames")
}

// stopAtRename makes this process, a kill test's child, stop for good
// after the rename numbered PINSEAL_KILL_AFTER, announcing it in the file
// PINSEAL_KILL_MARKER, so the parent SIGKILLs it exactly between two renames.
func stopAtRename() {
	n, _ := strconv.Atoi(os.Getenv("PINSEAL_KILL_AFTER"))
	marker := os.Getenv("PINSEAL_KILL_MARKER")
	afterRename = func(i int) {
		if i == n {
			os.WriteFile(marker, []byte("renamed "+strconv.Itoa(i)), 0o644)
			// Sleep, not select{}: with no other goroutine alive the runtime would
			// report a deadlock and exit before the SIGKILL lands.
			time.Sleep(time.Hour)
		}
	}
}

// killAtRename runs the test helper (a test calling stopAtRename) with env
// until it has done n renames and SIGKILLs it. It fails unless the child
// really died of SIGKILL.
func killAtRename(t *testing.T, helper string, n int, env ...string) {
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
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
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

// killBump runs TestKilledBumpHelper on dir until it has done n renames
// and SIGKILLs it.
func killBump(t *testing.T, u *upstream, dir string, n int) {
	t.Helper()
	killAtRename(t, "TestKilledBumpHelper", n, "PINSEAL_BUMP_KILL_DIR="+dir, "PINSEAL_BUMP_KILL_MIRROR="+u.Objects()+"/")
}

// changedFiles counts the files of before whose content differs in after.
func changedFiles(before, after map[string]string) int {
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

// TestKilledBump SIGKILLs a bump between two renames (after the first,
// in the middle, after the last): the package is then mixed, and the
// journal lets Recover — or the next bump, which recovers first — bring
// every file back byte for byte.
func TestKilledBump(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	u := newUpstream(t)
	root := fixtureTree(t, u)
	dir := pkgDir(root, "capi-providers-proxmox")
	before := snapshot(t, root)
	const files = 6 // Makefile, pin.yaml, 2 templates, YAML, blob
	for _, n := range []int{1, 3, files} {
		t.Run(fmt.Sprintf("after rename %d", n), func(t *testing.T) {
			killBump(t, u, dir, n)
			mid := snapshot(t, root)
			if _, ok := mid["packages/system/capi-providers-proxmox/"+JournalName]; !ok {
				t.Fatal("no journal left by the killed bump")
			}
			if changed := changedFiles(before, mid); changed != n {
				t.Errorf("%d files hold new content after %d renames", changed, n)
			}
			restored, err := Recover(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(restored) != files {
				t.Errorf("restored %v", restored)
			}
			requireSame(t, before, snapshot(t, root))
		})
	}
	// Killed again, and this time the next bump recovers and completes.
	killBump(t, u, dir, 2)
	o := opts(u, "v0.7.8")
	o.TrustOnFirstUse = true
	res, err := Bump(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recovered) != files {
		t.Errorf("recovered %v", res.Recovered)
	}
	requireClean(t, root)
	if _, err := os.Stat(filepath.Join(dir, JournalName)); err == nil {
		t.Error("journal left after a finished bump")
	}
	got := numstat(t, root)
	if len(got) != files {
		t.Errorf("git diff: %v", got)
	}
}
