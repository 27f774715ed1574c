package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// releasesKept is how many commits' releases SaveReleases keeps per
// source: the base of the next scan is the newest commit scanned before it,
// so a few cover re-scans and a ref moved back.
const releasesKept = 8

// SaveReleases records what commit revision of source released (opaque
// JSON: history.Snapshot) and drops all but the newest releasesKept
// commits' of that source.
func (s *Store) SaveReleases(ctx context.Context, source, revision string, releases []byte) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save releases of %s at %s: %w", source, revision, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO release_history (source, revision, saved_at, releases) VALUES (?, ?, ?, ?)
		ON CONFLICT (source, revision) DO UPDATE SET saved_at = excluded.saved_at, releases = excluded.releases`,
		source, revision, fmtTime(s.now()), string(releases)); err != nil {
		return fmt.Errorf("save releases of %s at %s: %w", source, revision, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM release_history WHERE source = ? AND revision NOT IN
		(SELECT revision FROM release_history WHERE source = ? ORDER BY saved_at DESC, revision LIMIT ?)`,
		source, source, releasesKept); err != nil {
		return fmt.Errorf("prune releases of %s: %w", source, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save releases of %s at %s: %w", source, revision, err)
	}
	return nil
}

// PreviousReleases returns the commit of source's newest successful scan
// at another commit than revision whose releases are recorded (a scan by a
// build before release history, or a commit dropped, is passed over), with
// what that commit released; ErrNotFound when there is none.
func (s *Store) PreviousReleases(ctx context.Context, source, revision string) (string, []byte, error) {
	var rev, releases string
	err := s.db.QueryRowContext(ctx, `SELECT s.revision, r.releases FROM scans s
		JOIN release_history r ON r.source = s.source AND r.revision = s.revision
		WHERE s.source = ? AND s.status = 'succeeded' AND s.revision <> ? AND s.revision <> ''
		ORDER BY s.id DESC LIMIT 1`, source, revision).Scan(&rev, &releases)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, ErrNotFound
	} else if err != nil {
		return "", nil, fmt.Errorf("read release history of %s: %w", source, err)
	}
	return rev, []byte(releases), nil
}
