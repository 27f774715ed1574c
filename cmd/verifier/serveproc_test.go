package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/untartest"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// The one way the tests of this package run real `verifier serve`
// processes: built once per test binary, started on a config file,
// addressed at the URL the process logs, stopped (SIGTERM, then SIGKILL)
// when the test ends, with its log printed when the test failed.

var (
	buildMu   sync.Mutex
	buildDir  string
	buildBins = map[string]string{}
)

// buildBinary builds ./cmd/<name> of this module once per test run.
func buildBinary(t testing.TB, name string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := buildBins[name]; ok {
		return bin
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "pinseal-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
	}
	bin := filepath.Join(buildDir, name)
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/"+name)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	buildBins[name] = bin
	return bin
}

// verifierBinary builds the verifier once per test run.
func verifierBinary(t testing.TB) string {
	t.Helper()
	return buildBinary(t, "verifier")
}

// removeBuildDir removes the binaries the tests built (called by TestMain).
func removeBuildDir() {
	buildMu.Lock()
	defer buildMu.Unlock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// maxProcLog is how much of a process's log a test keeps (the end of it).
const maxProcLog = 4 << 20

var servingRE = regexp.MustCompile(`serving on (http://[^/\s]+)/`)

// procLog is a process's stdout and stderr: the last maxProcLog bytes, and
// the address of the first "serving on http://ADDR/" line.
type procLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial []byte // a line not yet ended
	addr    string
	found   chan struct{}
}

func (l *procLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if n := l.buf.Len(); n > maxProcLog {
		l.buf.Next(n - maxProcLog/2)
	}
	if l.addr == "" {
		l.partial = append(l.partial, p...)
		for {
			i := bytes.IndexByte(l.partial, '\n')
			if i < 0 {
				break
			}
			if m := servingRE.FindSubmatch(l.partial[:i]); m != nil {
				l.addr = string(m[1])
				l.partial = nil
				close(l.found)
				break
			}
			l.partial = l.partial[i+1:]
		}
	}
	return len(p), nil
}

func (l *procLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// serveProcess is a running `verifier serve`.
type serveProcess struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT, as the process logged it
	log    *procLog
	exited chan struct{} // closed when the process has exited
}

// serveProcOptions say how to start a `verifier serve` process.
type serveProcOptions struct {
	args    []string // after `serve --config FILE`
	env     []string // added to the environment
	bareEnv bool     // the environment is PATH and a fresh HOME (then env), not the test's
	name    string   // names the process in the log printed when the test fails
}

// startServeProcess runs `verifier serve --config cfgFile` (built by
// verifierBinary) and waits until it logs the address it serves on.
func startServeProcess(t *testing.T, cfgFile string, o serveProcOptions) *serveProcess {
	t.Helper()
	bin := verifierBinary(t)
	p := &serveProcess{
		cmd:    exec.Command(bin, append([]string{"serve", "--config", cfgFile}, o.args...)...),
		log:    &procLog{found: make(chan struct{})},
		exited: make(chan struct{}),
	}
	env := os.Environ()
	if o.bareEnv {
		env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	}
	p.cmd.Env = append(env, o.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(timebound.Hang):
			p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("verifier serve %s log:\n%s", o.name, tail(p.logText(), 64<<10))
		}
	})
	select {
	case <-p.log.found:
		p.log.mu.Lock()
		p.base = p.log.addr
		p.log.mu.Unlock()
	case <-p.exited:
		t.Fatalf("verifier serve exited:\n%s", p.logText())
	case <-time.After(timebound.Hang):
		t.Fatalf("verifier serve did not start in %s:\n%s", timebound.Hang, p.logText())
	}
	return p
}

// logText is what the process logged (its end, when long).
func (p *serveProcess) logText() string { return p.log.String() }

// kill sends SIGKILL and waits for the process to exit.
func (p *serveProcess) kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// memStatus reads a memory figure of the process from /proc (field
// "VmRSS" or "VmHWM", the peak), in bytes.
func (p *serveProcess) memStatus(t testing.TB, field string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("server process: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s in /proc status: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// tarGzDir packs a directory's files and directories as an upload.
func tarGzDir(t testing.TB, dir string) []byte {
	t.Helper()
	return untartest.TarGz(t, untartest.Dir(t, dir)...)
}
