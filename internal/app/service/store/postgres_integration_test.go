//go:build integration

package store

import (
	"context"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/testpeer"
)

// TestPostgres runs the store tests against a real PostgreSQL server on
// 127.0.0.1, each in a fresh database.
func TestPostgres(t *testing.T) {
	pg := testpeer.StartPostgres(t)
	pgURL := func(t *testing.T) (opener, string) {
		url := pg.NewDatabase(t)
		return func(t *testing.T) *Store {
			s, err := OpenPostgres(context.Background(), url, "")
			if err != nil {
				t.Fatal(err)
			}
			s.Now = clock()
			t.Cleanup(func() { s.Close() })
			return s
		}, url
	}
	pgDB := func(t *testing.T) opener { o, _ := pgURL(t); return o }
	t.Run("Migrations", func(t *testing.T) {
		open, url := pgURL(t)
		s := open(t)
		var v int
		if err := s.db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil || v != SchemaVersion() {
			t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
		}
		// The rowid keys became identity columns.
		var ident string
		if err := s.db.QueryRow(`SELECT is_identity FROM information_schema.columns WHERE table_name = 'scans' AND column_name = 'id'`).Scan(&ident); err != nil || ident != "YES" {
			t.Fatalf("scans.id is_identity = %q (%v), want YES", ident, err)
		}
		s.Close()
		s2 := open(t) // nothing applied twice
		var n int
		if err := s2.db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&n); err != nil || n != SchemaVersion() {
			t.Fatalf("%d migrations recorded (%v), want %d", n, err, SchemaVersion())
		}
		if _, err := s2.db.ExecContext(context.Background(), `INSERT INTO schema_migrations VALUES (999, '0999_future.sql', 'x')`); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenPostgres(context.Background(), url, ""); err == nil || !strings.Contains(err.Error(), "newer than this build") {
			t.Fatalf("open of a newer schema: %v, want a 'newer than this build' error", err)
		}
	})
	t.Run("ReplicasMigrateAtOnce", func(t *testing.T) {
		_, url := pgURL(t)
		errs := make(chan error, 4)
		for i := 0; i < 4; i++ {
			go func() {
				s, err := OpenPostgres(context.Background(), url, "")
				if err == nil {
					s.Close()
				}
				errs <- err
			}()
		}
		for i := 0; i < 4; i++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("ScanHistory", func(t *testing.T) { testScanHistory(t, pgDB(t)) })
	t.Run("FailRunningAfterCrash", func(t *testing.T) { testFailRunningAfterCrash(t, pgDB(t)) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, pgDB(t)) })
	t.Run("Prune", func(t *testing.T) { testPrune(t, pgDB(t)) })
	t.Run("ReleaseHistory", func(t *testing.T) { testReleaseHistory(t, pgDB(t)) })
	t.Run("ClaimDueConcurrent", func(t *testing.T) { testClaimDueConcurrent(t, pgDB(t)) })
	t.Run("WrongPassword", func(t *testing.T) {
		_, err := OpenPostgres(context.Background(), "postgres://nobody@"+pg.Host+"/nodb?sslmode=disable", "secret-pw")
		if err == nil || strings.Contains(err.Error(), "secret-pw") {
			t.Fatalf("open as an unknown user: %v, want an error that does not show the password", err)
		}
	})
}
