package store

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/report"
)

// fkViolations runs SQLite's foreign key check over the whole database.
func fkViolations(t *testing.T, s *Store) int {
	t.Helper()
	if s.dialect != sqliteDialect {
		return 0 // PostgreSQL enforces foreign keys on every statement
	}
	db := s.db.DB
	rows, err := db.Query(`PRAGMA foreign_key_check`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n
}

func countRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// scanSeq runs scans of source with the given outcomes: a report (its
// findings) succeeds, nil fails.
func scanSeq(t *testing.T, s *Store, source string, reps ...*report.Report) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for _, r := range reps {
		sc, err := s.Begin(ctx, source, "schedule")
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			err = s.Fail(ctx, sc.ID, "failed")
		} else {
			_, err = s.Succeed(ctx, sc.ID, r)
		}
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sc.ID)
	}
	return ids
}

// TestMigration0003KeepsHistory: a database made by the schema before
// retention, with history, is rebuilt by 0003 without losing a row or a
// change, with its foreign keys intact.
func TestMigration0003KeepsHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	q := url.Values{}
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := applyMigrations(ctx, &dbx{DB: db}, ms[:2], now); err != nil {
		t.Fatal(err)
	}
	old := &Store{db: &dbx{DB: db}, Now: clock()}
	a := finding("contract", "p", "", "", "a", report.Error)
	b := finding("pin-missing", "p", "", "f", "b", report.Warning)
	ids := scanSeq(t, old, "tree", rep(a, b), nil, rep(a))
	before, _ := old.Changes(ctx, ids[2])
	db.Close()

	s := openTemp(t, dir) // applies 0003
	if n := fkViolations(t, s); n != 0 {
		t.Fatalf("%d foreign key violations after the migration", n)
	}
	if countRows(t, s.db.DB, "findings") != 2 || countRows(t, s.db.DB, "scan_changes") != 3 || countRows(t, s.db.DB, "scans") != 3 {
		t.Fatal("rows lost by the migration")
	}
	after, err := s.Changes(ctx, ids[2])
	if err != nil || len(after.Resolved) != 1 || after.Resolved[0].Key != before.Resolved[0].Key {
		t.Fatalf("changes of scan %d after the migration: %+v %v, before %+v", ids[2], after, err, before)
	}
	// The finding still open may outlive the scan that first saw it.
	open, _ := s.OpenFindings(ctx, "tree", "")
	if len(open) != 1 || open[0].FirstScan != ids[0] {
		t.Fatalf("open findings %+v", open)
	}
	// The remaining keys still hold: a change naming no finding is refused.
	if _, err := s.db.Exec(`INSERT INTO scan_changes (scan_id, finding_id, change, finding) VALUES (?, 999, 'new', '{}')`, ids[0]); err == nil {
		t.Fatal("scan_changes.finding_id is no longer a foreign key")
	}
}

func TestPrune(t *testing.T) { testPrune(t, sqliteDB(t)) }

func testPrune(t *testing.T, openDB opener) {
	ctx := context.Background()
	s := openDB(t)
	a := finding("contract", "p", "", "", "a", report.Error)
	b := finding("pin-missing", "p", "", "f", "b", report.Warning)
	c := finding("blob", "q", "", "g", "c", report.Error)
	// tree: 1 a+b, 2 a (b resolved), 3 a+c, 4 failed, 5 a (c resolved),
	// 6 failed, 7 failed; other: 8 a.
	ids := scanSeq(t, s, "tree", rep(a, b), rep(a), rep(a, c), nil, rep(a), nil, nil)
	other := scanSeq(t, s, "other", rep(a))
	running, _ := s.Begin(ctx, "tree", "api") // 9, running
	openBefore, _ := s.OpenFindings(ctx, "tree", "")

	// Keep 2: the newest two are 9 (running) and 7; 5 is the newest
	// success and stays too.
	n, err := s.Prune(ctx, "tree", 2, time.Time{})
	if err != nil || n != 5 {
		t.Fatalf("Prune(keep 2) = %d, %v; want 5 scans deleted", n, err)
	}
	left, _ := s.Scans(ctx, "tree", 100)
	var got []int64
	for _, sc := range left {
		got = append(got, sc.ID)
	}
	if want := []int64{running.ID, ids[6], ids[4]}; !equalIDs(got, want) {
		t.Fatalf("scans kept %v, want %v", got, want)
	}
	for _, id := range append(ids[:4:4], ids[5]) {
		if _, err := s.Scan(ctx, id); err == nil {
			t.Fatalf("scan %d not deleted", id)
		}
		if r, err := s.Report(ctx, id); err == nil || r != nil {
			t.Fatalf("report of scan %d still there", id)
		}
	}
	if n := fkViolations(t, s); n != 0 {
		t.Fatalf("%d foreign key violations after pruning", n)
	}
	// b was resolved by a deleted scan: gone. c was resolved by scan 5,
	// which is kept, with its change. a is open and keeps its first scan.
	var nb int
	s.db.QueryRow(`SELECT COUNT(*) FROM findings WHERE check_id = 'pin-missing'`).Scan(&nb)
	if nb != 0 {
		t.Fatal("a finding resolved by a deleted scan is still there")
	}
	ch, err := s.Changes(ctx, ids[4])
	if err != nil || len(ch.Resolved) != 1 || ch.Resolved[0].Check != "blob" {
		t.Fatalf("changes of the kept scan %d: %+v %v", ids[4], ch, err)
	}
	if open, _ := s.OpenFindings(ctx, "tree", ""); len(open) != len(openBefore) || open[0].FirstScan != ids[0] || !open[0].FirstSeen.Equal(openBefore[0].FirstSeen) {
		t.Fatalf("open findings changed by pruning: %+v, were %+v", open, openBefore)
	}
	if _, err := s.Scan(ctx, other[0]); err != nil {
		t.Fatalf("a scan of another source was pruned: %v", err)
	}
	// The next scan still diffs against the newest success: a is seen
	// again, nothing new.
	if err := s.Fail(ctx, running.ID, "x"); err != nil {
		t.Fatal(err)
	}
	next := scanSeq(t, s, "tree", rep(a))
	if ch, _ := s.Changes(ctx, next[0]); len(ch.New) != 0 || len(ch.Resolved) != 0 {
		t.Fatalf("changes after pruning: %+v", ch)
	}

	// By age: everything of tree finished before now, but the newest
	// success stays.
	n, err = s.Prune(ctx, "tree", 0, s.Now().Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("Prune(by age) = %d, %v; want 3", n, err)
	}
	if left, _ := s.Scans(ctx, "tree", 100); len(left) != 1 || left[0].ID != next[0] {
		t.Fatalf("after pruning by age: %+v, want only scan %d", left, next[0])
	}
	// A cutoff before every scan deletes nothing; neither does keep 0.
	if n, err := s.Prune(ctx, "other", 0, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil || n != 0 {
		t.Fatalf("Prune(old cutoff) = %d, %v", n, err)
	}
	if srcs, err := s.Sources(ctx); err != nil || len(srcs) != 2 || srcs[0] != "other" || srcs[1] != "tree" {
		t.Fatalf("Sources = %v, %v", srcs, err)
	}
	if n := fkViolations(t, s); n != 0 {
		t.Fatalf("%d foreign key violations after pruning", n)
	}
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
