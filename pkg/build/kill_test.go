//go:build linux

package build

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/atomicfile"
	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// killVersions are two upstream releases the helper process alternates
// between, big enough that writing them takes a moment.
func killVersions(dir string) (pins [2]string, outs [2]map[string][]byte) {
	for i := range 2 {
		comp := manifestgen.Generate(manifestgen.Spec{Provider: "infrastructure-proxmox", Prefix: "capmox",
			Group: "infrastructure.cluster.x-k8s.io", Kinds: []string{"ProxmoxCluster"}, Image: "x", Size: 2 << 20, Seed: int64(i)})
		meta := []byte(fmt.Sprintf("%sreleaseSeries:\n  - major: 0\n    minor: %d\n    contract: v1beta1\n", "kind: Metadata\n", i))
		up := filepath.Join(dir, "upstream", fmt.Sprint(i))
		os.MkdirAll(up, 0o755)
		os.WriteFile(filepath.Join(up, "infrastructure-components.yaml"), comp, 0o644)
		os.WriteFile(filepath.Join(up, "metadata.yaml"), meta, 0o644)
		pins[i] = fmt.Sprintf(`providers:
- kind: InfrastructureProvider
  name: proxmox
  version: v0.7.%[1]d
  release: v0.7.%[1]d-infraprovider-proxmox
  sources:
  - url: file://%[2]s/infrastructure-components.yaml
    sha256: %[3]s
    to: files/infrastructure-components.yaml
  - url: file://%[2]s/metadata.yaml
    sha256: %[4]s
    to: files/metadata.yaml
  blob: files/components.gz
`, i, filepath.ToSlash(up), shaHex(comp), shaHex(meta))
		gz, _ := blob.CompressBytes(comp)
		outs[i] = map[string][]byte{
			"files/infrastructure-components.yaml": comp,
			"files/metadata.yaml":                  meta,
			"files/components.gz":                  gz,
		}
	}
	return pins, outs
}

// TestKilledBuildHelper is the child process of TestKilledBuild: it
// rebuilds the package forever, alternating between the two releases.
func TestKilledBuildHelper(t *testing.T) {
	dir := os.Getenv("PINSEAL_KILL_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process for TestKilledBuild")
	}
	var pins [2][]byte
	for i := range pins {
		var err error
		if pins[i], err = os.ReadFile(filepath.Join(filepath.Dir(dir), fmt.Sprintf("pin%d.yaml", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; ; i++ {
		if err := atomicfile.WriteFile(filepath.Join(dir, "pin.yaml"), pins[i%2], 0); err != nil {
			t.Fatal(err)
		}
		if _, err := Build(context.Background(), dir, Options{Fetcher: &fetch.Fetcher{}}); err != nil {
			t.Fatal(err)
		}
		// Tell the parent a Build returned: every output is on disk now.
		fmt.Printf("%s %d\n", killBuiltMarker, i+1)
	}
}

// killBuiltMarker is what the helper prints after each Build that returned.
const killBuiltMarker = "pinseal-kill-helper: built"

// TestKilledBuild SIGKILLs a process that keeps rebuilding a package and
// checks that every output file is then exactly one release's content: the
// old file or the new one, never half a file. The kill comes right after
// the k-th write event (inotify: create, modify, rename, remove) in the
// output directory, k random, so it lands inside writes whatever way Build
// writes. The helper must die of that signal: one that ends by itself
// (Build failed) fails the test. Once the helper reported a Build that
// returned, every output must be on disk; a helper that neither finishes a
// Build nor writes in 20 seconds fails the test too (never a skip: a Build
// that writes nothing or hangs is broken).
func TestKilledBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "pkg")
	filesDir := filepath.Join(dir, "files")
	if err := os.MkdirAll(filesDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pins, outs := killVersions(root)
	for i, p := range pins {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("pin%d.yaml", i)), []byte(p), 0o644)
	}
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	const patience = 20 * time.Second
	checked, built, leftovers := 0, false, map[string]bool{}
	for round := 0; checked < 6; round++ {
		if round == 100 {
			t.Fatalf("only %d of %d rounds found outputs to check", checked, round)
		}
		w := watchWrites(t, filesDir)
		var out bytes.Buffer
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledBuildHelper$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "PINSEAL_KILL_HELPER_DIR="+dir)
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// A Build of three outputs makes a few dozen events.
		k := 1 + r.Intn(100)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		hit := make(chan bool, 1)
		go func() { hit <- awaitEvents(w, k, time.Now().Add(patience)) }()
		var reached bool
		select {
		case err := <-done:
			// The helper rebuilds forever: ending by itself means Build
			// failed (or the helper did not run at all).
			t.Fatalf("round %d: the helper ended before it was killed (%v):\n%s", round, err, tail(out.Bytes()))
		case reached = <-hit:
		}
		_ = cmd.Process.Kill()
		<-done
		w.Close()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the helper ended with %v, want killed by SIGKILL:\n%s", round, cmd.ProcessState, tail(out.Bytes()))
		}

		built = built || bytes.Contains(out.Bytes(), []byte(killBuiltMarker))
		found := false
		for rel := range outs[0] {
			got, err := os.ReadFile(filepath.Join(dir, rel))
			if os.IsNotExist(err) {
				if built {
					t.Fatalf("round %d: %s is missing although a Build returned:\n%s", round, rel, tail(out.Bytes()))
				}
				continue // killed before the first build finished
			}
			found = true
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, outs[0][rel]) && !bytes.Equal(got, outs[1][rel]) {
				t.Fatalf("round %d: %s is neither release's content (%d bytes): a half-written file", round, rel, len(got))
			}
		}
		if !reached && !found {
			t.Fatalf("round %d: the helper finished no Build and made %d write events in %s:\n%s", round, k, patience, tail(out.Bytes()))
		}
		if !found {
			continue // killed inside the first Build
		}
		checked++
		// Only the staged temp files of the killed process may be left over.
		entries, _ := os.ReadDir(filesDir)
		for _, e := range entries {
			_, known := outs[0]["files/"+e.Name()]
			switch {
			case strings.HasPrefix(e.Name(), atomicfile.TempPrefix):
				leftovers[e.Name()] = true
			case !known:
				t.Errorf("unexpected file %s", e.Name())
			}
		}
	}
	t.Logf("%d rounds checked; %d staged temp files left by killed writes", checked, len(leftovers))
}

// watchWrites watches dir for the events of writes: entries created,
// modified, renamed or removed.
func watchWrites(t *testing.T, dir string) *os.File {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_CREATE|syscall.IN_MODIFY|syscall.IN_MOVED_FROM|syscall.IN_MOVED_TO|syscall.IN_DELETE); err != nil {
		syscall.Close(fd)
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	w := os.NewFile(uintptr(fd), "inotify")
	if err := w.SetReadDeadline(time.Time{}); err != nil {
		w.Close()
		t.Fatalf("inotify descriptor is not pollable: %v", err)
	}
	return w
}

// awaitEvents reads events from w until n have come (true) or the
// deadline passed or w was closed (false).
func awaitEvents(w *os.File, n int, deadline time.Time) bool {
	if w.SetReadDeadline(deadline) != nil {
		return false
	}
	buf := make([]byte, 64<<10)
	for n > 0 {
		m, err := w.Read(buf)
		if err != nil {
			return false
		}
		// struct inotify_event: wd, mask, cookie, len (uint32 each), then
		// len bytes of name.
		for off := 0; off+syscall.SizeofInotifyEvent <= m; n-- {
			off += syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
		}
	}
	return true
}

// tail is the end of a helper's output, enough to show why it failed.
func tail(b []byte) []byte {
	if len(b) > 2048 {
		return append([]byte("..."), b[len(b)-2048:]...)
	}
	return b
}
