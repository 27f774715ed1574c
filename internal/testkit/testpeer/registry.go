package testpeer

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Registry is a docker-registry (the distribution registry) serving plain
// HTTP on 127.0.0.1 with its storage in a temp directory.
type Registry struct {
	Host string // 127.0.0.1:PORT
	URL  string // http://127.0.0.1:PORT
	Dir  string // storage root directory
	cmd  *exec.Cmd
	out  *syncBuffer
}

// BlobPath is where the registry stores a blob ("sha256:<hex>") on disk;
// tests overwrite it to tamper with a layer.
func (r *Registry) BlobPath(dgst string) string {
	algo, hex, _ := strings.Cut(dgst, ":")
	return filepath.Join(r.Dir, "docker", "registry", "v2", "blobs", algo, hex[:2], hex, "data")
}

// Log is what the registry printed so far.
func (r *Registry) Log() string { return r.out.String() }

// StartRegistry starts /usr/bin/docker-registry (or docker-registry / registry
// in PATH) for the test and stops it at cleanup.
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	bin, ok := LookBinary("docker-registry")
	if !ok {
		if bin, ok = LookBinary("registry"); !ok {
			Missing(t, "docker-registry not in PATH: apt-get install docker-registry")
		}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		r, err := startRegistry(t, bin)
		if err == nil {
			return r
		}
		lastErr = err // most likely the free port was taken meanwhile
	}
	t.Fatalf("start docker-registry: %v", lastErr)
	return nil
}

func startRegistry(t testing.TB, bin string) (*Registry, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
  secret: pinseal-test-secret
`, storage, host)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	out := &syncBuffer{}
	cmd := exec.Command(bin, "serve", cfgPath)
	cmd.Stdout, cmd.Stderr = out, out
	// No proxies or other environment leaking into the peer.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	r := &Registry{Host: host, URL: "http://" + host, Dir: storage, cmd: cmd, out: out}

	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("docker-registry exited: %v\n%s", err, out.String())
		default:
		}
		resp, err := client.Get(r.URL + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return nil, fmt.Errorf("docker-registry on %s not ready after 30s: %v\n%s", host, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopAtCleanup(t, cmd, exited, "docker-registry", out)
	return r, nil
}

// stopAtCleanup interrupts the peer process cmd when the test ends (killing
// it after 5s; exited yields its Wait) and logs what it wrote when the test
// failed.
func stopAtCleanup(t testing.TB, cmd *exec.Cmd, exited <-chan error, what string, out fmt.Stringer) {
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", what, out.String())
		}
	})
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
