package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestReleaseHistory: the base of a commit's scan is what the newest
// successful scan at another commit released; a failed scan, or a commit
// whose releases were not recorded, is passed over; old commits are
// dropped.
func TestReleaseHistory(t *testing.T) { testReleaseHistory(t, sqliteDB(t)) }

func testReleaseHistory(t *testing.T, openDB opener) {
	ctx := context.Background()
	s := openDB(t)
	scanAt := func(rev string, ok bool) {
		t.Helper()
		sc, err := s.Begin(ctx, "g", "api")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetMeta(ctx, sc.ID, Meta{Revision: rev}); err != nil {
			t.Fatal(err)
		}
		if !ok {
			if err := s.Fail(ctx, sc.ID, "broken"); err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := s.Succeed(ctx, sc.ID, rep()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.PreviousReleases(ctx, "g", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no scans: %v, want ErrNotFound", err)
	}
	scanAt("a", true)
	if err := s.SaveReleases(ctx, "g", "a", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.PreviousReleases(ctx, "g", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("only the same commit scanned: %v, want ErrNotFound", err)
	}
	scanAt("b", false) // failed: not a base
	if rev, b, err := s.PreviousReleases(ctx, "g", "c"); err != nil || rev != "a" || string(b) != `{"a":1}` {
		t.Fatalf("after a failed scan of b: %q %s %v, want a", rev, b, err)
	}
	scanAt("b", true) // succeeded, releases not recorded: the older base
	if rev, _, err := s.PreviousReleases(ctx, "g", "c"); err != nil || rev != "a" {
		t.Fatalf("newest scan without releases: %q %v, want a", rev, err)
	}
	if err := s.SaveReleases(ctx, "g", "b", []byte(`{"b":1}`)); err != nil {
		t.Fatal(err)
	}
	if rev, _, err := s.PreviousReleases(ctx, "g", "b"); err != nil || rev != "a" {
		t.Fatalf("re-scan of b: base %q %v, want a", rev, err)
	}
	if _, _, err := s.PreviousReleases(ctx, "other", "c"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another source: %v", err)
	}
	for i := range releasesKept + 2 {
		if err := s.SaveReleases(ctx, "g", fmt.Sprintf("r%02d", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM release_history WHERE source = 'g'`).Scan(&n); err != nil || n != releasesKept {
		t.Fatalf("%d commits kept (%v), want %d", n, err, releasesKept)
	}
}
