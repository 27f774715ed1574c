package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Migrations are numbered up-only SQL scripts, migrations/NNNN_name.sql,
// applied in order, each in its own transaction and recorded in the
// schema_migrations table. Never edit a released migration: add the next.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

var migrationName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`) })

func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		m := migrationName().FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s: name must be NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %04d (versions must run 1, 2, 3, ... without gaps)", m.name, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this build migrates to.
func SchemaVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		panic(err) // the embedded files are checked by the tests
	}
	return len(ms)
}

func migrate(ctx context.Context, db *dbx, d dialect, now time.Time) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	for i := range ms {
		ms[i].sql = d.migration(ms[i].sql)
	}
	return applyMigrations(ctx, db, ms, now)
}

func applyMigrations(ctx context.Context, db *dbx, ms []migration, now time.Time) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	for _, m := range ms {
		if err := applyMigration(ctx, db, m, now); err != nil {
			return err
		}
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > len(ms) {
		return fmt.Errorf("schema version %d is newer than this build knows (%d): run a newer pinseal, or point dataDir at another directory", current, len(ms))
	}
	return nil
}

// applyMigration applies m unless it is recorded already. The check and the
// change share one (immediate) transaction, so two processes opening the
// same database cannot both apply it.
func applyMigration(ctx context.Context, db *dbx, m migration, now time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, fmtTime(now)); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	return nil
}
