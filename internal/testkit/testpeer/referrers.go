package testpeer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ocireg is the test peer command built by StartReferrersRegistry.
const ocireg = "github.com/pinseal/pinseal/internal/testkit/testpeer/ocireg"

// StartReferrersRegistry builds internal/testkit/testpeer/ocireg (go-containerregistry's
// registry with the OCI 1.1 referrers API on) and runs it on a free
// 127.0.0.1 port for the test, as a separate process. Host and URL are set;
// Dir is empty (the registry keeps everything in memory).
func StartReferrersRegistry(t testing.TB) *Registry {
	t.Helper()
	gobin, ok := LookBinary("go")
	if !ok {
		Missing(t, "the go command is needed to build the referrers registry test peer")
	}
	bin := filepath.Join(t.TempDir(), "ocireg")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, gobin, "build", "-o", bin, ocireg)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", ocireg, err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		r, err := startOcireg(t, bin)
		if err == nil {
			return r
		}
		lastErr = err
	}
	t.Fatalf("start the referrers registry: %v", lastErr)
	return nil
}

func startOcireg(t testing.TB, bin string) (*Registry, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	host := fmt.Sprintf("127.0.0.1:%d", port)
	out := &syncBuffer{}
	cmd := exec.Command(bin, "-addr", host)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := sc.Scan() && strings.HasPrefix(sc.Text(), "listening on ")
		ready <- ok
		io.Copy(out, stdout)
	}()
	go func() { exited <- cmd.Wait() }()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Process.Kill()
			<-exited
			return nil, fmt.Errorf("ocireg on %s did not start:\n%s", host, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
		return nil, fmt.Errorf("ocireg on %s not ready after 30s:\n%s", host, out.String())
	}
	r := &Registry{Host: host, URL: "http://" + host, cmd: cmd, out: out}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(r.URL + "/v2/")
	if err != nil {
		cmd.Process.Kill()
		<-exited
		return nil, err
	}
	resp.Body.Close()
	stopAtCleanup(t, cmd, exited, "referrers registry", out)
	return r, nil
}

// Cosign3 returns the cosign v3 CLI, installed beside cosign v2 as
// "cosign3" (see .ci/run).
func Cosign3(t testing.TB) string {
	t.Helper()
	return Binary(t, "cosign3", "GOBIN=/tmp/cosign3 go install github.com/sigstore/cosign/v3/cmd/cosign@v3.1.3 && cp /tmp/cosign3/cosign $(go env GOPATH)/bin/cosign3")
}
