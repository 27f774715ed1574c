package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// IsPostgresURL reports whether database names a PostgreSQL database
// (postgres:// or postgresql://) rather than the SQLite file.
func IsPostgresURL(database string) bool {
	return strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://")
}

// migrationLock is the advisory lock key that serialises schema migrations
// of replicas starting together.
const migrationLock = 0x70696e7365616c // "pinseal"

// OpenPostgres connects to the PostgreSQL database at url (postgres://…),
// with password when it is not empty (it never comes from the URL text of a
// config file), and brings its schema up to date with the same numbered
// migrations as SQLite.
func OpenPostgres(ctx context.Context, url, password string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database URL: %w", err)
	}
	if password != "" {
		cfg.Password = password
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	where := fmt.Sprintf("PostgreSQL %s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	sdb := stdlib.OpenDB(*cfg)
	sdb.SetMaxOpenConns(16)
	sdb.SetMaxIdleConns(4)
	sdb.SetConnMaxIdleTime(time.Minute)
	if err := sdb.PingContext(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("open database %s: %w (is it running and reachable, and the password right?)", where, err)
	}
	s := &Store{db: &dbx{DB: sdb, d: postgresDialect}, dialect: postgresDialect, Now: time.Now}
	if err := migratePostgres(ctx, s); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("database %s: %w", where, err)
	}
	return s, nil
}

// migratePostgres holds a session advisory lock while migrating, so that
// replicas starting at once apply each migration exactly once.
func migratePostgres(ctx context.Context, s *Store) error {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("lock for migrations: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrationLock))
	return migrate(ctx, s.db, s.dialect, s.now())
}
