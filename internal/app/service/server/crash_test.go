package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/pkg/render"
	"github.com/pinseal/pinseal/pkg/report"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// serveEnv makes the test binary run as a server process (see TestMain):
// its value is the config file; the address goes to the file in addrEnv.
const (
	serveEnv = "PINSEAL_TEST_SERVE_CONFIG"
	addrEnv  = "PINSEAL_TEST_SERVE_ADDR_FILE"
)

func TestMain(m *testing.M) {
	// This test binary is also the bounded chart-render child of the
	// engine's tests (see render.MaybeRunChild).
	render.MaybeRunChild()
	if cfg := os.Getenv(serveEnv); cfg != "" {
		os.Exit(serveProcess(cfg, os.Getenv(addrEnv)))
	}
	os.Exit(m.Run())
}

// serveProcess is the server subprocess: the real Server with a fake engine
// whose tree checks hang while the tree holds a file named SLOW (and write
// STARTED beside it, so the test knows the scan is in the engine).
func serveProcess(cfgFile, addrFile string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := LoadConfig(cfgFile)
	if err != nil {
		log.Error("config", "err", err)
		return 2
	}
	eng := &fakeEngine{check: func(ctx context.Context, root string, _ CheckOptions) (*report.Report, error) {
		if _, err := os.Stat(filepath.Join(root, "SLOW")); err == nil {
			os.WriteFile(filepath.Join(root, "STARTED"), nil, 0o644)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return treeReport(root)
	}}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	srv, err := New(ctx, cfg, eng, log)
	if err != nil {
		log.Error("new", "err", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Error("listen", "err", err)
		return 1
	}
	tmp := addrFile + ".tmp"
	os.WriteFile(tmp, []byte(ln.Addr().String()), 0o600)
	os.Rename(tmp, addrFile)
	if err := srv.Run(ctx, ln); err != nil {
		log.Error("run", "err", err)
		return 1
	}
	return 0
}

type serverProcess struct {
	cmd    *exec.Cmd
	client *client
	exited chan error
}

func startServerProcess(t *testing.T, cfgFile string) *serverProcess {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+cfgFile, addrEnv+"="+addrFile)
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	var addr []byte
	waitFor(t, "the server process to listen", func() bool {
		select {
		case err := <-p.exited:
			t.Fatalf("server process exited: %v", err)
		default:
		}
		addr, _ = os.ReadFile(addrFile)
		return len(addr) > 0
	})
	p.client = newClient(t, "http://"+string(addr), testToken)
	servertest.WaitReady(t, p.client.Base)
	return p
}

func (p *serverProcess) startScan(t *testing.T) store.Scan {
	t.Helper()
	resp, body := p.client.PostJSON("/v1/scans", map[string]string{"source": "tree"})
	wantStatus(t, "POST /v1/scans", resp, body, http.StatusAccepted)
	var sc store.Scan
	json.Unmarshal(body, &sc)
	return sc
}

// TestKillDuringScan kills the server process with SIGKILL in the middle of a
// scan, starts it again on the same data directory, and finds the history
// intact and the interrupted scan recorded as failed.
func TestKillDuringScan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "packages/core/files"), 0o755)
	os.WriteFile(filepath.Join(tree, "packages/core/Chart.yaml"), []byte("name: core\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "packages/core/files/BROKEN"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "tokens"), []byte(testToken+"\n"), 0o600)
	cfgFile := filepath.Join(dir, "serve.yaml")
	os.WriteFile(cfgFile, []byte(`listen: 127.0.0.1:0
dataDir: data
tokensFile: tokens
publicReads: true
sources:
- name: tree
  path: tree
`), 0o600)

	p1 := startServerProcess(t, cfgFile)
	done := p1.client.waitScan(p1.startScan(t).ID)
	if done.Scan.Status != store.Succeeded || len(done.New) != 1 {
		t.Fatalf("first scan %+v", done)
	}

	os.WriteFile(filepath.Join(tree, "SLOW"), nil, 0o644)
	interrupted := p1.startScan(t)
	waitFor(t, "the scan to reach the engine", func() bool {
		_, err := os.Stat(filepath.Join(tree, "STARTED"))
		return err == nil
	})
	if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-p1.exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("server process: %v, want killed", err)
	}
	p1.exited <- nil // for the cleanup

	os.Remove(filepath.Join(tree, "SLOW"))
	p2 := startServerProcess(t, cfgFile)
	c := p2.client
	var d scanDetail
	c.GetJSON(fmt.Sprintf("/v1/scans/%d", interrupted.ID), http.StatusOK, &d)
	if d.Scan.Status != store.Failed || !strings.Contains(d.Scan.Error, "stopped during the scan") || d.Scan.FinishedAt == nil {
		t.Fatalf("interrupted scan after restart: %+v, want failed", d.Scan)
	}
	c.GetJSON(fmt.Sprintf("/v1/scans/%d", done.Scan.ID), http.StatusOK, &d)
	if d.Scan.Status != store.Succeeded || d.Report == nil || len(d.Report.Findings) != 1 || len(d.New) != 1 {
		t.Fatalf("completed scan after restart: %+v, want its report and changes", d)
	}
	var open struct{ Findings []store.Finding }
	c.GetJSON("/v1/findings?source=tree", http.StatusOK, &open)
	if len(open.Findings) != 1 || open.Findings[0].FirstScan != done.Scan.ID {
		t.Fatalf("open findings after restart: %+v", open.Findings)
	}
	// The source is not stuck: it scans again, and the finding stays open.
	again := c.waitScan(p2.startScan(t).ID)
	if again.Scan.Status != store.Succeeded || len(again.New) != 0 || len(again.Resolved) != 0 {
		t.Fatalf("scan after restart: %+v", again)
	}

	// SIGTERM: a graceful exit.
	p2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p2.exited:
		if err != nil {
			t.Fatalf("server exit after SIGTERM: %v", err)
		}
		p2.exited <- nil
	case <-time.After(30*time.Second + ShutdownGrace + timebound.Slack):
		// The default limits.shutdownTimeout (30s) and ShutdownGrace bound a graceful exit.
		t.Fatal("server did not exit within limits.shutdownTimeout + ShutdownGrace after SIGTERM")
	}
}
