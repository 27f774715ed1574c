//go:build integration

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/app/service/server"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/internal/testkit/servertest"
	"github.com/pinseal/pinseal/internal/testkit/testpeer"
	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

// gitCLI runs git in dir with a fixed identity and no user config.
func gitCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitHTTP serves the bare repositories under root over git's smart HTTP
// protocol (git http-backend) on 127.0.0.1; while stalled, requests for
// the stalled repository wait.
type gitHTTP struct {
	*httptest.Server
	mu      sync.Mutex
	stalled string
	release chan struct{}
}

func startGitHTTP(t *testing.T, root string) *gitHTTP {
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		testpeer.Missing(t, "git http-backend not at %s: apt-get install git", backend)
	}
	g := &gitHTTP{}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		stalled, release := g.stalled, g.release
		g.mu.Unlock()
		if stalled != "" && strings.HasPrefix(r.URL.Path, "/"+stalled+"/") {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *gitHTTP) stall(repo string) {
	g.mu.Lock()
	g.stalled, g.release = repo, make(chan struct{})
	g.mu.Unlock()
}

func (g *gitHTTP) unstall() {
	g.mu.Lock()
	if g.release != nil {
		close(g.release)
	}
	g.stalled, g.release = "", nil
	g.mu.Unlock()
}

type replica struct {
	*serveProcess
	name string
	url  string
}

// TestIntegrationReplicas runs three `verifier serve` processes against one
// PostgreSQL with 50 git sources on a short interval: every source is
// scanned once per interval across the replicas, kill -9 of the replica
// scanning a (stalled) source gets its scan recorded failed within the
// lease TTL and the source scanned by the others, every replica serves the
// same history, and a commit introducing drift opens a finding with its
// SHA that the fixing commit resolves.
func TestIntegrationReplicas(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testpeer.Missing(t, "git CLI (makes the test repositories): apt-get install git")
	}
	const (
		nSources = 50
		interval = 5 * time.Second
		ttl      = 3 * time.Second
	)
	ctx := context.Background()
	pg := testpeer.StartPostgres(t)
	dbURL := pg.NewDatabase(t)
	tmp := t.TempDir()

	// One clean package, committed, cloned bare 50 times.
	work := filepath.Join(tmp, "work")
	gen, err := gentree.Generate(work, gentree.Options{Packages: 1, Size: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	gitCLI(t, work, "init", "-q", "-b", "main")
	gitCLI(t, work, "add", "-A")
	gitCLI(t, work, "commit", "-q", "-m", "clean tree")
	repos := filepath.Join(tmp, "repos")
	os.MkdirAll(repos, 0o755)
	names := make([]string, nSources)
	for i := range names {
		names[i] = fmt.Sprintf("src%02d", i)
		gitCLI(t, tmp, "clone", "-q", "--bare", work, filepath.Join(repos, names[i]+".git"))
	}
	httpGit := startGitHTTP(t, repos)
	slow := names[nSources-1] // served over HTTP, so the test can stall its fetch

	var sources strings.Builder
	for _, n := range names {
		u := "file://" + filepath.Join(repos, n+".git")
		if n == slow {
			u = httpGit.URL + "/" + n + ".git"
		}
		fmt.Fprintf(&sources, "  - name: %s\n    interval: %s\n    git: {url: %q, ref: main}\n", n, interval, u)
	}
	start := func(name string) *replica {
		dir := filepath.Join(tmp, name)
		os.MkdirAll(dir, 0o700)
		cfg := fmt.Sprintf("dataDir: %s\npublicReads: true\ndatabase: %q\nreplicas: {leaseTTL: %s, maxConcurrentScans: 8}\nlimits: {shutdownTimeout: 5s}\nsources:\n%s",
			filepath.Join(dir, "data"), dbURL, ttl, sources.String())
		cfgFile := filepath.Join(dir, "serve.yaml")
		if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		p := startServeProcess(t, cfgFile, serveProcOptions{
			args:    []string{"--listen", "127.0.0.1:0"},
			env:     []string{server.ReplicaEnv + "=" + name},
			bareEnv: true,
			name:    name,
		})
		return &replica{serveProcess: p, name: name, url: p.base}
	}
	replicas := []*replica{start("r0"), start("r1"), start("r2")}
	for _, r := range replicas {
		servertest.WaitWithin(t, timebound.Hang, r.name+" ready", func() bool {
			resp, err := http.Get(r.url + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	st, err := store.OpenPostgres(ctx, dbURL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	allScans := func() []store.Scan {
		scans, err := st.Scans(ctx, "", 100000)
		if err != nil {
			t.Fatal(err)
		}
		return scans
	}

	// Never two scans of one source at once: checked from the records at
	// the end, and also when an earlier step fails (the deferred call),
	// since a double scan is what breaks the steps before it.
	checked := false
	checkScans := func() {
		if checked {
			return
		}
		checked = true
		// From the recorded times, each scan of a source (scheduled or on
		// demand) starts once the one before it was recorded finished; a
		// takeover records the dead replica's scan failed before the new one
		// starts. How close together two scans start is the load's business
		// (the next slot is due one interval after the last was due, so a
		// scan started late is followed by one on time), not the promise.
		//
		// No slot skipped: a source's next scheduled scan starts within an
		// interval of the time it was both due (one interval after the last
		// scan started, at the latest) and free (the last scan finished), plus
		// the lease TTL (the sources the killed replica held wait out its
		// leases) and timebound.Slack.
		bySource := map[string][]store.Scan{}
		for _, sc := range allScans() {
			bySource[sc.Source] = append(bySource[sc.Source], sc)
		}
		total := 0
		for _, n := range names {
			scans := bySource[n]
			sort.Slice(scans, func(i, j int) bool { return scans[i].StartedAt.Before(scans[j].StartedAt) })
			for _, p := range overlappingScans(scans) {
				t.Errorf("%s: double scan: %d (%s, %s to %s) and %d (%s, started %s) overlap", n,
					p[0].ID, p[0].Replica, p[0].StartedAt.Format(time.StampMilli), finishedText(p[0]), p[1].ID, p[1].Replica, p[1].StartedAt.Format(time.StampMilli))
			}
			var prev *store.Scan
			for i := range scans {
				sc := &scans[i]
				if sc.TriggeredBy != "schedule" {
					continue
				}
				total++
				if prev != nil && prev.FinishedAt != nil {
					free := prev.StartedAt.Add(interval)
					if prev.FinishedAt.After(free) {
						free = *prev.FinishedAt
					}
					if late := sc.StartedAt.Sub(free); timebound.Over(late, interval+ttl) {
						t.Errorf("%s: skipped interval: %d started %s after %d left the source due and free (interval %s, lease TTL %s)", n, sc.ID, late, prev.ID, interval, ttl)
					}
				}
				prev = sc
			}
		}
		t.Logf("%d scheduled scans of %d sources over the run", total, nSources)
	}
	defer checkScans()

	// Every source scanned successfully once.
	servertest.WaitWithin(t, timebound.Hang, "a successful scan of every source", func() bool {
		ok, _ := st.LastScans(ctx, store.Succeeded)
		return len(ok) == nSources
	})
	time.Sleep(2 * interval)
	sameHistory(t, replicas)

	// Stall the slow source's fetch, wait until a replica is scanning it,
	// kill that replica.
	httpGit.stall(slow + ".git")
	var victim *replica
	var stuck int64
	servertest.WaitWithin(t, timebound.Hang, "a running scan of "+slow, func() bool {
		l, err := st.Leases(ctx)
		if err != nil || l[slow].ScanID == 0 {
			return false
		}
		stuck = l[slow].ScanID
		for _, r := range replicas {
			if r.name == l[slow].Holder {
				victim = r
			}
		}
		return victim != nil
	})
	time.Sleep(300 * time.Millisecond) // well inside the fetch
	victim.kill(t)
	killed := time.Now()
	httpGit.unstall()
	var live []*replica
	for _, r := range replicas {
		if r != victim {
			live = append(live, r)
		}
	}
	var failed store.Scan
	servertest.WaitWithin(t, timebound.Hang, "the killed replica's scan recorded failed", func() bool {
		failed, _ = st.Scan(ctx, stuck)
		return failed.Status == store.Failed
	})
	took := failed.FinishedAt.Sub(killed)
	t.Logf("replica %s killed -9 during scan %d of %s; recorded failed %s later (lease TTL %s): %s", victim.name, stuck, slow, took.Round(time.Millisecond), ttl, failed.Error)
	// The lease expires at most ttl after the kill (it was renewed
	// before); a replica claims it at its next poll (ttl/10).
	if timebound.Over(took, ttl+ttl/10) || !strings.Contains(failed.Error, "replica "+victim.name+" lost its lease") {
		t.Errorf("takeover of %s after %s (TTL %s), error %q; want within the TTL and naming %s", slow, took, ttl, failed.Error, victim.name)
	}
	servertest.WaitWithin(t, timebound.Hang, "a successful scan of "+slow+" by another replica", func() bool {
		scans, _ := st.Scans(ctx, slow, 1)
		return len(scans) == 1 && scans[0].ID > stuck && scans[0].Status == store.Succeeded && scans[0].Replica != victim.name
	})

	// A commit that introduces drift, then the commit that fixes it.
	drifted := names[0]
	yamlFile := filepath.Join(gen.Packages[0].Dir, gen.Packages[0].YAML)
	f, err := os.OpenFile(filepath.Join(work, yamlFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("# hand edit: drift from the pinned upstream file\n")
	f.Close()
	gitCLI(t, work, "commit", "-q", "-am", "drift")
	bad := gitCLI(t, work, "rev-parse", "HEAD")
	gitCLI(t, work, "push", "-q", filepath.Join(repos, drifted+".git"), "HEAD:main")
	scanAt := func(rev string) store.Scan {
		var got store.Scan
		servertest.WaitWithin(t, timebound.Hang, "a scan of "+drifted+" at "+rev[:8], func() bool {
			scans, _ := st.Scans(ctx, drifted, 1)
			if len(scans) == 1 && scans[0].Revision == rev && scans[0].Status != store.Running {
				got = scans[0]
				return true
			}
			return false
		})
		if got.Status != store.Succeeded {
			t.Fatalf("scan %+v of %s failed", got, rev)
		}
		return got
	}
	sc := scanAt(bad)
	ch, err := st.Changes(ctx, sc.ID)
	if err != nil || len(ch.New) == 0 {
		t.Fatalf("drift commit %s: changes %+v, %v; want new findings", bad, ch, err)
	}
	for _, f := range ch.New {
		if f.Revision != bad {
			t.Errorf("new finding %s at revision %q, want %s", f.Check, f.Revision, bad)
		}
	}
	var apiFindings struct {
		Findings []store.Finding `json:"findings"`
	}
	servertest.NewClient(t, live[0].url, "").GetJSON("/v1/findings?source="+drifted, http.StatusOK, &apiFindings)
	if len(apiFindings.Findings) == 0 || apiFindings.Findings[0].Revision != bad {
		t.Errorf("GET /v1/findings: %+v, want findings at %s", apiFindings, bad)
	}
	gitCLI(t, work, "revert", "--no-edit", "HEAD")
	fix := gitCLI(t, work, "rev-parse", "HEAD")
	gitCLI(t, work, "push", "-q", filepath.Join(repos, drifted+".git"), "HEAD:main")
	sc = scanAt(fix)
	ch, err = st.Changes(ctx, sc.ID)
	if err != nil || len(ch.Resolved) != len(ch.New)+len(ch.Resolved) || len(ch.Resolved) == 0 || ch.Resolved[0].Revision != fix {
		t.Fatalf("fix commit %s: changes %+v, %v; want the drift findings resolved at %s", fix, ch, err, fix)
	}
	if open, _ := st.OpenFindings(ctx, drifted, ""); len(open) != 0 {
		t.Fatalf("open findings after the fix: %+v", open)
	}
	time.Sleep(interval)
	sameHistory(t, live)

	checkScans()

	// /readyz fails while the database is unreachable.
	st.Close()
	pg.Stop()
	servertest.WaitWithin(t, timebound.Hang, "/readyz to fail with the database down", func() bool {
		resp, err := http.Get(live[0].url + "/readyz")
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(b), "database")
	})
}

// sameHistory compares what each replica serves for the finished scans.
func sameHistory(t *testing.T, rs []*replica) {
	t.Helper()
	var list struct {
		Scans []store.Scan `json:"scans"`
	}
	servertest.NewClient(t, rs[0].url, "").GetJSON("/v1/scans?limit=200", http.StatusOK, &list)
	var ids []int64
	for _, sc := range list.Scans {
		if sc.Status != store.Running && len(ids) < 8 {
			ids = append(ids, sc.ID)
		}
	}
	if len(ids) == 0 {
		t.Fatal("no finished scans to compare")
	}
	for _, id := range ids {
		var first string
		for i, r := range rs {
			resp, b := servertest.NewClient(t, r.url, "").Get(fmt.Sprintf("/v1/scans/%d", id))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s/v1/scans/%d: %s: %s", r.url, id, resp.Status, b)
			}
			body := string(b)
			if i == 0 {
				first = body
			} else if body != first {
				t.Errorf("scan %d differs between %s and %s:\n%s\n%s", id, rs[0].name, r.name, first, body)
			}
		}
	}
}

// overlappingScans lists the pairs of scans (sorted by start) of which the
// later started before the earlier was recorded finished, or while it is
// still running.
func overlappingScans(scans []store.Scan) [][2]store.Scan {
	var out [][2]store.Scan
	for i := 1; i < len(scans); i++ {
		for j := range i {
			if f := scans[j].FinishedAt; f == nil || scans[i].StartedAt.Before(*f) {
				out = append(out, [2]store.Scan{scans[j], scans[i]})
			}
		}
	}
	return out
}

func finishedText(sc store.Scan) string {
	if sc.FinishedAt == nil {
		return "still running"
	}
	return sc.FinishedAt.Format(time.StampMilli)
}
