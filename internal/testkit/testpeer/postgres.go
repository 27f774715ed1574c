package testpeer

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Postgres is a PostgreSQL server (Debian's postgresql package) listening on
// 127.0.0.1 with its cluster in a temp directory, trust authentication for
// the superuser "postgres".
type Postgres struct {
	Host string // 127.0.0.1:PORT
	Dir  string // the cluster directory
	cmd  *exec.Cmd
	out  *syncBuffer
	dbs  atomic.Int64

	stopped bool
}

// Log is what the server printed so far.
func (p *Postgres) Log() string { return p.out.String() }

// URL is a connection URL of database db.
func (p *Postgres) URL(db string) string {
	return "postgres://postgres@" + p.Host + "/" + db + "?sslmode=disable"
}

// NewDatabase creates an empty database and returns its connection URL.
func (p *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d", p.dbs.Add(1))
	p.psql(t, "postgres", "CREATE DATABASE "+name)
	return p.URL(name)
}

func (p *Postgres) psql(t testing.TB, db, sql string) {
	t.Helper()
	if out, err := p.psqlOutput(db, sql); err != nil {
		t.Fatalf("psql %q: %v\n%s", sql, err, out)
	}
}

func (p *Postgres) psqlOutput(db, sql string) ([]byte, error) {
	bin := filepath.Join(postgresBinDir(), "psql")
	if _, err := os.Stat(bin); err != nil {
		bin = "psql"
	}
	host, port, _ := net.SplitHostPort(p.Host)
	return exec.Command(bin, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", host, "-p", port, "-U", "postgres", "-d", db, "-c", sql).CombinedOutput()
}

// waitReady waits until the server accepts queries (it listens before it
// has finished starting up).
func (p *Postgres) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := p.psqlOutput("postgres", "SELECT 1")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s: %v: %s", timeout, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop stops the server (fast shutdown) and waits for it. The postmaster
// is signalled directly: runuser does not pass signals on.
func (p *Postgres) Stop() {
	if p.stopped {
		return
	}
	p.stopped = true
	pid := p.cmd.Process.Pid
	if b, err := os.ReadFile(filepath.Join(p.Dir, "data", "postmaster.pid")); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil {
			pid = n
		}
	}
	syscall.Kill(pid, syscall.SIGINT) // fast shutdown
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// postgresBinDir is the newest /usr/lib/postgresql/N/bin.
func postgresBinDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	if len(dirs) == 0 {
		return ""
	}
	return dirs[len(dirs)-1]
}

// StartPostgres runs initdb and postgres for the test and stops the server
// at cleanup. PostgreSQL refuses to run as root, so as root the cluster
// belongs to the "postgres" user and the binaries run through runuser.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := postgresBinDir()
	if bin == "" {
		Missing(t, "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: apt-get install postgresql")
	}
	var asUser []string
	var uid, gid int = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			Missing(t, "running as root and there is no postgres user to run PostgreSQL as: apt-get install postgresql")
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		runuser, err := exec.LookPath("runuser")
		if err != nil {
			Missing(t, "running as root without runuser (util-linux) to run PostgreSQL as the postgres user")
		}
		asUser = []string{runuser, "-u", "postgres", "--"}
	}
	// A directory the postgres user can reach: t.TempDir's parents may be
	// private to root.
	dir, err := os.MkdirTemp("", "pinseal-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if uid >= 0 {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	command := func(name string, args ...string) *exec.Cmd {
		argv := append(append([]string{}, asUser...), filepath.Join(bin, name))
		argv = append(argv, args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "LC_ALL=C"}
		return cmd
	}
	if out, err := command("initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		p := &Postgres{Host: "127.0.0.1:" + strconv.Itoa(port), Dir: dir, out: &syncBuffer{}}
		p.cmd = command("postgres", "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=200", "-c", "shared_buffers=32MB")
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		p.cmd.WaitDelay = 2 * time.Second
		if err := p.cmd.Start(); err != nil {
			t.Fatalf("start postgres: %v", err)
		}
		if err := waitTCP(p.Host, 30*time.Second, p.cmd); err != nil {
			p.Stop()
			lastErr = fmt.Errorf("%w\n%s", err, p.Log())
			continue
		}
		t.Cleanup(p.Stop)
		if err := p.waitReady(30 * time.Second); err != nil {
			t.Fatalf("postgres: %v\n%s", err, p.Log())
		}
		return p
	}
	t.Fatalf("start postgres: %v", lastErr)
	return nil
}

// waitTCP waits until addr accepts connections or cmd exits.
func waitTCP(addr string, timeout time.Duration, cmd *exec.Cmd) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		// Process.Wait would reap the process before Stop; probe instead.
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return fmt.Errorf("postgres exited before listening on %s", addr)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("postgres not listening on %s after %s", addr, timeout)
		case <-time.After(50 * time.Millisecond):
		}
		if strings.Contains(err.Error(), "too many open files") {
			return err
		}
	}
}
