package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLeases(t *testing.T)             { testLeases(t, sqliteDB(t)) }
func TestClaimDueConcurrent(t *testing.T) { testClaimDueConcurrent(t, sqliteDB(t)) }

// manualClock is a clock several stores share.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *manualClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testLeases(t *testing.T, open opener) {
	ctx := context.Background()
	clk := &manualClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	r1, r2 := open(t), open(t)
	r1.Now, r2.Now = clk.Now, clk.Now
	const ttl = 10 * time.Second
	intervals := map[string]time.Duration{"a": time.Minute, "b": time.Minute}

	if err := r1.EnsureLeases(ctx, map[string]time.Time{"a": clk.Now(), "b": clk.Now().Add(15 * time.Second), "c": {}}); err != nil {
		t.Fatal(err)
	}
	// A second replica's EnsureLeases keeps the shared schedule.
	if err := r2.EnsureLeases(ctx, map[string]time.Time{"a": clk.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	claims, err := r1.ClaimDue(ctx, "r1", intervals, ttl, 10)
	if err != nil || len(claims) != 1 || claims[0].Source != "a" || claims[0].TakenOver != 0 || !claims[0].Due {
		t.Fatalf("r1 claims %+v, %v; want a (the only due source)", claims, err)
	}
	if claims, err := r2.ClaimDue(ctx, "r2", intervals, ttl, 10); err != nil || len(claims) != 0 {
		t.Fatalf("r2 claims %+v, %v; want none (a is held, b not due)", claims, err)
	}
	leases, _ := r1.Leases(ctx)
	if l := leases["a"]; l.Holder != "r1" || !l.NextDue.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("lease a = %+v, want held by r1, next due in one interval", l)
	}
	if !leases["c"].NextDue.IsZero() {
		t.Fatalf("on-demand source c has a schedule: %+v", leases["c"])
	}

	sc, err := r1.BeginLeased(ctx, "r1", "a", "schedule")
	if err != nil || sc.Replica != "r1" {
		t.Fatalf("BeginLeased = %+v, %v", sc, err)
	}
	if _, err := r2.ClaimNow(ctx, "r2", "a", ttl); !errors.Is(err, ErrBusy) {
		t.Fatalf("ClaimNow of a held lease: %v, want ErrBusy", err)
	}
	if _, err := r2.BeginLeased(ctx, "r2", "b", "api"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("BeginLeased without the lease: %v, want ErrLeaseLost", err)
	}
	// r1 renews while it scans: the lease outlives its first TTL.
	clk.Add(ttl - time.Second)
	if err := r1.Renew(ctx, "r1", "a", ttl); err != nil {
		t.Fatal(err)
	}
	clk.Add(ttl - time.Second)
	if claims, _ := r2.ClaimDue(ctx, "r2", intervals, ttl, 10); len(claims) != 1 || claims[0].Source != "b" {
		t.Fatalf("r2 claims %+v, want only b (due now; a renewed)", claims)
	}

	// r1 dies: no renewal; after the TTL r2 takes a over and fails its scan.
	clk.Add(ttl + time.Millisecond)
	claims, err = r2.ClaimDue(ctx, "r2", intervals, ttl, 10)
	if err != nil || len(claims) != 1 || claims[0].Source != "a" || claims[0].TakenOver != sc.ID || claims[0].PreviousHolder != "r1" || claims[0].Due {
		t.Fatalf("r2 claims %+v, %v; want a taken over from r1 with scan %d, not due yet", claims, err, sc.ID)
	}
	if l, _ := r2.Leases(ctx); l["a"].Holder != "" || !l["a"].NextDue.Equal(time.Date(2025, 6, 1, 12, 1, 0, 0, time.UTC)) {
		t.Fatalf("lease after a takeover before the due time: %+v, want free with the schedule kept", l["a"])
	}
	if _, err := r2.ClaimNow(ctx, "r2", "a", ttl); err != nil {
		t.Fatal(err)
	}
	got, _ := r2.Scan(ctx, sc.ID)
	if got.Status != Failed || !strings.Contains(got.Error, "replica r1 lost its lease") {
		t.Fatalf("scan left by r1 = %+v, want failed naming r1", got)
	}
	if err := r1.Renew(ctx, "r1", "a", ttl); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("renewal by the old holder: %v, want ErrLeaseLost", err)
	}
	if _, err := r1.Succeed(ctx, sc.ID, rep()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("late Succeed by the old holder: %v, want ErrNotRunning", err)
	}
	sc2, err := r2.BeginLeased(ctx, "r2", "a", "schedule")
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.SetMeta(ctx, sc2.ID, Meta{Revision: "abc123", Fingerprint: "fp1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Succeed(ctx, sc2.ID, rep(finding("contract", "p", "", "f.yaml", "m", "error"))); err != nil {
		t.Fatal(err)
	}
	if err := r2.Release(ctx, "r2", "a"); err != nil {
		t.Fatal(err)
	}
	if c, err := r1.ClaimNow(ctx, "r1", "a", ttl); err != nil || c.TakenOver != 0 {
		t.Fatalf("ClaimNow of a released lease: %+v, %v", c, err)
	}
	last, err := r1.LastFingerprinted(ctx, "a", "fp1")
	if err != nil || last.ID != sc2.ID || last.Revision != "abc123" || last.Replica != "r2" {
		t.Fatalf("LastFingerprinted = %+v, %v; want scan %d at abc123 by r2", last, err, sc2.ID)
	}
	if _, err := r1.LastFingerprinted(ctx, "a", "other"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("LastFingerprinted of an unknown fingerprint: %v, want ErrNotFound", err)
	}
	fs, _ := r1.OpenFindings(ctx, "a", "")
	if len(fs) != 1 || fs[0].Revision != "abc123" {
		t.Fatalf("open findings %+v, want one at revision abc123", fs)
	}
}

// testClaimDueConcurrent: replicas claiming at once take each due source
// exactly once.
func testClaimDueConcurrent(t *testing.T, open opener) {
	ctx := context.Background()
	clk := &manualClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	const sources, replicas = 30, 5
	intervals := map[string]time.Duration{}
	first := map[string]time.Time{}
	for i := 0; i < sources; i++ {
		name := fmt.Sprintf("s%02d", i)
		intervals[name] = time.Minute
		first[name] = clk.Now()
	}
	stores := make([]*Store, replicas)
	for i := range stores {
		stores[i] = open(t)
		stores[i].Now = clk.Now
	}
	if err := stores[0].EnsureLeases(ctx, first); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	claimedBy := map[string][]string{}
	var wg sync.WaitGroup
	for i, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("r%d", i)
			for round := 0; round < 10; round++ {
				cs, err := st.ClaimDue(ctx, holder, intervals, time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					claimedBy[c.Source] = append(claimedBy[c.Source], holder)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimedBy) != sources {
		t.Fatalf("%d sources claimed, want %d", len(claimedBy), sources)
	}
	for src, hs := range claimedBy {
		if len(hs) != 1 {
			t.Errorf("source %s claimed %d times (%v), want once", src, len(hs), hs)
		}
	}
}
