// Package testpeer starts the real peers (registries, cosign, oras) that
// integration tests talk to.
//
// It starts the real peers integration tests talk to — the
// Debian docker-registry on a free 127.0.0.1 port, a registry with the OCI
// referrers API (ocireg, built from this module), the upstream cosign v2
// ("cosign"), cosign v3 ("cosign3") and oras CLIs — and a fault-injecting
// HTTP proxy to put in front of a registry. A missing peer skips the test, or fails it when
// PINSEAL_REQUIRE_PEERS=1 (CI sets it, so nothing is silently skipped).
package testpeer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns a missing peer from a
// skip into a failure.
const RequireEnv = "PINSEAL_REQUIRE_PEERS"

// Required reports whether missing peers fail tests (PINSEAL_REQUIRE_PEERS=1).
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Missing ends the test for a peer that is not there: Skip, or Fatal when
// peers are required.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("required peer missing ("+RequireEnv+"=1): "+format, args...)
	}
	t.Skipf("peer missing (set "+RequireEnv+"=1 to fail instead): "+format, args...)
}

var (
	gopathOnce sync.Once
	gopathBin  string
)

// goBin is $(go env GOPATH)/bin, where `go install` puts cosign and oras.
func goBin() string {
	gopathOnce.Do(func() {
		gp := os.Getenv("GOPATH")
		if gp == "" {
			if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
				gp = strings.TrimSpace(string(out))
			}
		}
		if gp == "" {
			if home, err := os.UserHomeDir(); err == nil {
				gp = filepath.Join(home, "go")
			}
		}
		if gp != "" {
			// GOPATH may be a list; the first entry is where go install writes.
			gopathBin = filepath.Join(filepath.SplitList(gp)[0], "bin")
		}
	})
	return gopathBin
}

// LookBinary finds a peer binary in PATH or $(go env GOPATH)/bin.
func LookBinary(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	if dir := goBin(); dir != "" {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// Binary is LookBinary that skips or fails the test when name is missing.
// hint says how to install it.
func Binary(t testing.TB, name, hint string) string {
	t.Helper()
	p, ok := LookBinary(name)
	if !ok {
		Missing(t, "%s not in PATH or $(go env GOPATH)/bin: %s", name, hint)
	}
	return p
}

// Cosign returns the cosign CLI.
func Cosign(t testing.TB) string {
	t.Helper()
	return Binary(t, "cosign", "go install github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5")
}

// Oras returns the oras CLI.
func Oras(t testing.TB) string {
	t.Helper()
	return Binary(t, "oras", "go install oras.land/oras/cmd/oras@v1.3.6")
}

// Result is the outcome of Run.
type Result struct {
	Stdout, Stderr string
	Err            error // nil when the command exited 0
}

// Run runs a peer CLI with a 2-minute limit, an environment of PATH, a
// temporary HOME (so the peer's caches stay out of the user's home) and
// env ("K=V"), and returns its output.
func Run(t testing.TB, env []string, bin string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	home := t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TUF_ROOT=" + filepath.Join(home, ".sigstore")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}
