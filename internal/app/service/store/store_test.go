package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/pinseal/pinseal/pkg/report"
)

// clock returns a Now that advances one second per call.
func clock() func() time.Time {
	t := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func openTemp(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = clock()
	t.Cleanup(func() { s.Close() })
	return s
}

func finding(check, pkg, provider, file, msg string, sev report.Severity) report.Finding {
	return report.Finding{Check: check, Severity: sev, Package: pkg, Provider: provider, File: file, Message: msg}
}

func rep(fs ...report.Finding) *report.Report {
	return &report.Report{SchemaVersion: report.SchemaVersion, Findings: fs, Packages: []report.PackageSummary{}}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTemp(t, dir)
	var v int
	if err := s.db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != SchemaVersion() || v < 1 {
		t.Fatalf("schema version %d, want %d", v, SchemaVersion())
	}
	var mode string
	if err := s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	s.Close()

	// Reopening applies nothing twice.
	s2 := openTemp(t, dir)
	var n int
	if err := s2.db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != SchemaVersion() {
		t.Fatalf("%d migrations recorded (%v), want %d", n, err, SchemaVersion())
	}
	// A database from a newer build is refused.
	if _, err := s2.db.Exec(`INSERT INTO schema_migrations VALUES (999, '0999_future.sql', 'x')`); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := Open(ctx, dir); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Fatalf("open of a newer schema: %v, want a 'newer than this build' error", err)
	}
}

func TestLoadMigrations(t *testing.T) {
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    int
		wantErr string
	}{
		{"ordered", fstest.MapFS{
			"migrations/0002_b.sql": {Data: []byte("B")},
			"migrations/0001_a.sql": {Data: []byte("A")},
		}, 2, ""},
		{"gap", fstest.MapFS{
			"migrations/0001_a.sql": {Data: []byte("A")},
			"migrations/0003_c.sql": {Data: []byte("C")},
		}, 0, "expected version 0002"},
		{"bad name", fstest.MapFS{"migrations/1_a.sql": {Data: []byte("A")}}, 0, "NNNN_name.sql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := loadMigrations(tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(ms) != tt.want || ms[0].sql != "A" {
				t.Fatalf("got %+v, %v", ms, err)
			}
		})
	}
}

func TestApplyMigrationsRollsBackAFailedOne(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/x.db?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms := []migration{
		{1, "0001_a.sql", "CREATE TABLE a (x INTEGER);"},
		{2, "0002_b.sql", "CREATE TABLE b (x INTEGER); SELECT * FROM nonexistent;"},
	}
	if err := applyMigrations(ctx, &dbx{DB: db}, ms, time.Now()); err == nil || !strings.Contains(err.Error(), "0002_b.sql") {
		t.Fatalf("err %v, want failure naming 0002_b.sql", err)
	}
	var v int
	db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	if v != 1 {
		t.Fatalf("version %d after failed migration 2, want 1", v)
	}
	if _, err := db.Exec(`SELECT * FROM b`); err == nil {
		t.Fatal("table b of the failed migration exists")
	}
}

// opener opens the same database each time it is called.
type opener func(t *testing.T) *Store

func sqliteDB(t *testing.T) opener {
	dir := t.TempDir()
	return func(t *testing.T) *Store { return openTemp(t, dir) }
}

// The tests below run against SQLite here and against PostgreSQL in
// TestPostgres (postgres_integration_test.go).

func TestScanHistory(t *testing.T)           { testScanHistory(t, sqliteDB(t)) }
func TestFailRunningAfterCrash(t *testing.T) { testFailRunningAfterCrash(t, sqliteDB(t)) }

func testScanHistory(t *testing.T, openDB opener) {
	ctx := context.Background()
	s := openDB(t)

	blobYAML := finding("blob-yaml", "packages/core", "CoreProvider/cluster-api", "files/core-components.yaml", "differs at line 3", report.Error)
	header := finding("blob-header", "packages/core", "CoreProvider/cluster-api", "files/components.gz", "embeds name", report.Error)
	pinMissing := finding("pin-missing", "packages/talos", "", "Makefile", "no sha256", report.Warning)

	// Scan 1: two findings, both new.
	sc1, err := s.Begin(ctx, "tree", "schedule")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(ctx, "tree", "api"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Begin of a running source: %v, want ErrBusy", err)
	}
	if _, err := s.Begin(ctx, "other", "api"); err != nil {
		t.Fatalf("Begin of another source while one runs: %v", err)
	}
	ch, err := s.Succeed(ctx, sc1.ID, rep(blobYAML, header))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.New) != 2 || len(ch.Resolved) != 0 {
		t.Fatalf("scan 1 changes %+v, want 2 new", ch)
	}

	// Scan 2: blob-yaml again (new message: same finding), header fixed, pin-missing new.
	sc2, err := s.Begin(ctx, "tree", "api")
	if err != nil {
		t.Fatal(err)
	}
	blobYAML2 := blobYAML
	blobYAML2.Message = "differs at line 7"
	blobYAML2.Line = 7
	ch, err = s.Succeed(ctx, sc2.ID, rep(blobYAML2, pinMissing))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.New) != 1 || ch.New[0].Check != "pin-missing" || len(ch.Resolved) != 1 || ch.Resolved[0].Check != "blob-header" {
		t.Fatalf("scan 2 changes %+v, want new pin-missing, resolved blob-header", ch)
	}
	stored, err := s.Changes(ctx, sc2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.New) != 1 || stored.New[0].Key != ch.New[0].Key || len(stored.Resolved) != 1 || stored.Resolved[0].Key != ch.Resolved[0].Key {
		t.Fatalf("stored changes %+v differ from returned %+v", stored, ch)
	}

	open, err := s.OpenFindings(ctx, "tree", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 {
		t.Fatalf("%d open findings, want 2: %+v", len(open), open)
	}
	var by = map[string]Finding{}
	for _, f := range open {
		by[f.Check] = f
	}
	bf := by["blob-yaml"]
	if bf.FirstScan != sc1.ID || bf.LastScan != sc2.ID || !bf.LastSeen.After(bf.FirstSeen) || bf.Message != "differs at line 7" {
		t.Fatalf("blob-yaml finding %+v: want first scan %d, last scan %d, latest message", bf, sc1.ID, sc2.ID)
	}
	if errs, _ := s.OpenFindings(ctx, "", report.Warning); len(errs) != 1 || errs[0].Check != "pin-missing" {
		t.Fatalf("open warnings %+v, want pin-missing", errs)
	}

	// A failed scan changes no findings.
	sc3, _ := s.Begin(ctx, "tree", "schedule")
	if err := s.Fail(ctx, sc3.ID, "render failed"); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(ctx, sc3.ID, "again"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Fail of a failed scan: %v, want ErrNotRunning", err)
	}
	if _, err := s.Succeed(ctx, sc3.ID, rep()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Succeed of a failed scan: %v, want ErrNotRunning", err)
	}
	if open2, _ := s.OpenFindings(ctx, "tree", ""); len(open2) != 2 {
		t.Fatalf("failed scan changed open findings: %+v", open2)
	}

	got, err := s.Scan(ctx, sc3.ID)
	if err != nil || got.Status != Failed || got.Error != "render failed" || got.FinishedAt == nil {
		t.Fatalf("scan 3 = %+v, %v; want failed with its error", got, err)
	}
	if r, err := s.Report(ctx, sc3.ID); err != nil || r != nil {
		t.Fatalf("report of failed scan = %v, %v; want nil", r, err)
	}
	r2, err := s.Report(ctx, sc2.ID)
	if err != nil || len(r2.Findings) != 2 || r2.Summary.Errors != 1 || r2.Summary.Warnings != 1 {
		t.Fatalf("report of scan 2 = %+v, %v", r2, err)
	}
	got2, _ := s.Scan(ctx, sc2.ID)
	if got2.Errors != 1 || got2.Warnings != 1 || got2.Status != Succeeded {
		t.Fatalf("scan 2 = %+v, want succeeded with 1 error, 1 warning", got2)
	}

	list, err := s.Scans(ctx, "tree", 2)
	if err != nil || len(list) != 2 || list[0].ID != sc3.ID || list[1].ID != sc2.ID {
		t.Fatalf("Scans(tree, 2) = %+v, %v; want scans %d, %d", list, err, sc3.ID, sc2.ID)
	}
	last, _ := s.LastScans(ctx, "")
	lastOK, _ := s.LastScans(ctx, Succeeded)
	if last["tree"].ID != sc3.ID || lastOK["tree"].ID != sc2.ID || last["other"].Status != Running {
		t.Fatalf("LastScans = %+v, succeeded %+v", last, lastOK)
	}
	if _, err := s.Scan(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Scan(999): %v, want ErrNotFound", err)
	}

	// A finding that comes back after being resolved is new again.
	sc4, _ := s.Begin(ctx, "tree", "api")
	ch, err = s.Succeed(ctx, sc4.ID, rep(blobYAML, header, pinMissing))
	if err != nil || len(ch.New) != 1 || ch.New[0].Check != "blob-header" || ch.New[0].FirstScan != sc4.ID {
		t.Fatalf("scan 4 changes %+v, %v; want blob-header new again", ch, err)
	}
}

func testFailRunningAfterCrash(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	done, _ := s.Begin(ctx, "tree", "schedule")
	if _, err := s.Succeed(ctx, done.ID, rep(finding("contract", "p", "", "", "m", report.Error))); err != nil {
		t.Fatal(err)
	}
	running, _ := s.Begin(ctx, "tree", "schedule")
	s.Close() // the process dies with the scan running

	s2 := open(t)
	n, err := s2.FailRunning(ctx, "interrupted")
	if err != nil || n != 1 {
		t.Fatalf("FailRunning = %d, %v; want 1", n, err)
	}
	got, _ := s2.Scan(ctx, running.ID)
	if got.Status != Failed || got.Error != "interrupted" {
		t.Fatalf("interrupted scan = %+v, want failed", got)
	}
	if r, err := s2.Report(ctx, done.ID); err != nil || len(r.Findings) != 1 {
		t.Fatalf("history lost: report %+v, %v", r, err)
	}
	if _, err := s2.Begin(ctx, "tree", "api"); err != nil {
		t.Fatalf("Begin after FailRunning: %v", err)
	}
}

func TestKeys(t *testing.T) {
	a := finding("blob-yaml", "p", "CoreProvider/c", "f.yaml", "one", report.Error)
	with := func(change func(*report.Finding)) report.Finding {
		f := a
		change(&f)
		return f
	}
	tests := []struct {
		name  string
		other report.Finding
		same  bool // Key(other) == Key(a)
	}{
		{"message does not count", with(func(f *report.Finding) { f.Message = "two" }), true},
		{"line does not count", with(func(f *report.Finding) { f.Line = 9 }), true},
		{"severity does not count", with(func(f *report.Finding) { f.Severity = report.Warning }), true},
		{"hint and detail do not count", with(func(f *report.Finding) { f.Hint, f.Detail = "h", "d" }), true},
		{"check counts", with(func(f *report.Finding) { f.Check = "blob-header" }), false},
		{"package counts", with(func(f *report.Finding) { f.Package = "q" }), false},
		{"provider counts", with(func(f *report.Finding) { f.Provider = "CoreProvider/d" }), false},
		{"file counts", with(func(f *report.Finding) { f.File = "g.yaml" }), false},
		{"fields do not run together", with(func(f *report.Finding) { f.Package, f.Provider = "pC", "oreProvider/c" }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := Key(tt.other) == Key(a); same != tt.same {
				t.Fatalf("Key equal = %v, want %v (%s vs %s)", same, tt.same, Key(tt.other), Key(a))
			}
			// In one report the second of two equal keys gets an ordinal;
			// a different key is left as it is.
			want := Key(tt.other)
			if tt.same {
				want = Key(a) + "#2"
			}
			if ks := Keys([]report.Finding{a, tt.other}); ks[0] != Key(a) || ks[1] != want {
				t.Errorf("Keys = %q, want [%s %s]", ks, Key(a), want)
			}
		})
	}
	t.Run("duplicates get ordinals", func(t *testing.T) {
		c := with(func(f *report.Finding) { f.File = "g.yaml" })
		ks := Keys([]report.Finding{a, c, a, a})
		if want := []string{Key(a), Key(c), Key(a) + "#2", Key(a) + "#3"}; !slices.Equal(ks, want) {
			t.Errorf("Keys = %q, want %q", ks, want)
		}
	})
}
