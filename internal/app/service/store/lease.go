package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Leases let several replicas share the sources of one database. Each
// source has one lease row; a replica scans a source only while it holds
// the source's lease, renews it while the scan runs and releases it when
// the scan is recorded. A lease that is not renewed (the replica was
// killed, crashed or lost the database) expires after its TTL; the next
// replica to claim the source records the scan it left as failed and scans
// the source again. The schedule (next_due) lives in the row too, so the
// replicas together scan each source once per interval.
//
// Times are the replicas' clocks (keep them in sync, e.g. NTP): a skew of d
// shortens or lengthens a lease by d.

// ErrLeaseLost: the lease expired and another replica took it.
var ErrLeaseLost = errors.New("lease on the source lost to another replica")

// Claim is a lease a replica took.
type Claim struct {
	Source string
	// TakenOver is the scan the previous holder left running, now
	// recorded failed (0 when there was none).
	TakenOver int64
	// PreviousHolder held the lease before (it expired).
	PreviousHolder string
	// Due: the claim is the source's scheduled scan, and the claimer holds
	// the lease. A claim that only took over a scan left running (not due
	// yet) recorded that scan failed and left the lease free: the source's
	// next scan keeps its time.
	Due bool
}

// farFuture is the next_due of sources scanned only on demand.
const farFuture = "9999-12-31T23:59:59.000000000Z"

// EnsureLeases creates the lease rows of sources that have none, with their
// first scan due at the given time (zero: only on demand). Existing rows,
// and the schedule other replicas keep in them, are left alone.
func (s *Store) EnsureLeases(ctx context.Context, firstDue map[string]time.Time) error {
	for src, due := range firstDue {
		d := farFuture
		if !due.IsZero() {
			d = fmtTime(due)
		}
		if _, err := s.db.ExecContext(ctx,
			`INSERT INTO leases (source, next_due) VALUES (?, ?) ON CONFLICT (source) DO NOTHING`, src, d); err != nil {
			return fmt.Errorf("create lease of source %s: %w", src, err)
		}
	}
	return nil
}

// ClaimDue takes the leases, at most max, of the sources among intervals
// (source -> interval) whose scan is due and whose lease is free or
// expired (Claim.Due), and takes over those whose holder's lease expired
// during a scan: that scan is recorded failed at once. It moves each claimed source's next due time one interval
// on (to now when behind) and records as failed the scans left running by
// expired holders. On PostgreSQL the rows are locked FOR UPDATE SKIP LOCKED,
// so replicas claiming at once take different sources.
func (s *Store) ClaimDue(ctx context.Context, holder string, intervals map[string]time.Duration, ttl time.Duration, max int) ([]Claim, error) {
	if max <= 0 || len(intervals) == 0 {
		return nil, nil
	}
	now := s.now()
	nowText := fmtTime(now)
	names := make([]any, 0, len(intervals))
	for name := range intervals {
		names = append(names, name)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claim sources: %w", err)
	}
	defer tx.Rollback()
	due, err := s.dueLeases(ctx, tx, names, nowText, max)
	if err != nil {
		return nil, err
	}
	expires := fmtTime(now.Add(ttl))
	var out []Claim
	for _, r := range due {
		c := Claim{Source: r.source, PreviousHolder: r.holder}
		if r.scan != 0 {
			if err := failTakenOver(ctx, tx, r.scan, r.holder, holder, nowText); err != nil {
				return nil, err
			}
			c.TakenOver = r.scan
		}
		if r.due > nowText {
			// Only the takeover: free the lease, keep the schedule.
			if _, err := tx.ExecContext(ctx, `UPDATE leases SET holder = '', expires_at = '', scan_id = NULL WHERE source = ?`, r.source); err != nil {
				return nil, fmt.Errorf("take over source %s: %w", r.source, err)
			}
			out = append(out, c)
			continue
		}
		// Due: this claim is the interval's scan.
		c.Due = true
		d, err := parseTime(r.due)
		if err != nil {
			return nil, err
		}
		nd := d.Add(intervals[r.source])
		if !nd.After(now) {
			nd = now.Add(intervals[r.source])
		}
		if _, err := tx.ExecContext(ctx, `UPDATE leases SET holder = ?, expires_at = ?, scan_id = NULL, next_due = ? WHERE source = ?`,
			holder, expires, fmtTime(nd), r.source); err != nil {
			return nil, fmt.Errorf("claim source %s: %w", r.source, err)
		}
		out = append(out, c)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("claim sources: %w", err)
	}
	return out, nil
}

// dueLease is a lease row ClaimDue may claim: due, or held by a scan whose
// lease expired.
type dueLease struct {
	source, holder, due string
	scan                int64
}

// dueLeases reads, in due order and locked on PostgreSQL, at most max
// leases of names that expired and are due or held by a scan.
func (s *Store) dueLeases(ctx context.Context, tx *txx, names []any, nowText string, max int) ([]dueLease, error) {
	lock := ""
	if s.dialect == postgresDialect {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	args := append(names, nowText, nowText, max)
	rows, err := tx.QueryContext(ctx, `SELECT source, holder, COALESCE(scan_id, 0), next_due FROM leases
		WHERE source IN (`+placeholders(len(names))+`) AND expires_at <= ? AND (next_due <= ? OR scan_id IS NOT NULL)
		ORDER BY next_due LIMIT ?`+lock, args...)
	if err != nil {
		return nil, fmt.Errorf("claim sources: %w", err)
	}
	var due []dueLease
	for rows.Next() {
		var r dueLease
		if err := rows.Scan(&r.source, &r.holder, &r.scan, &r.due); err != nil {
			rows.Close()
			return nil, fmt.Errorf("claim sources: %w", err)
		}
		due = append(due, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim sources: %w", err)
	}
	return due, nil
}

// ClaimNow takes the lease of source for an on-demand scan, whatever its
// schedule. It returns ErrBusy when another holder's lease has not expired.
func (s *Store) ClaimNow(ctx context.Context, holder, source string, ttl time.Duration) (Claim, error) {
	now := s.now()
	nowText := fmtTime(now)
	lock := ""
	if s.dialect == postgresDialect {
		lock = " FOR UPDATE"
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Claim{}, fmt.Errorf("claim source %s: %w", source, err)
	}
	defer tx.Rollback()
	var prev, expires string
	var scan int64
	err = tx.QueryRowContext(ctx, `SELECT holder, expires_at, COALESCE(scan_id, 0) FROM leases WHERE source = ?`+lock, source).Scan(&prev, &expires, &scan)
	if errors.Is(err, sql.ErrNoRows) {
		return Claim{}, fmt.Errorf("lease of source %s: %w", source, ErrNotFound)
	} else if err != nil {
		return Claim{}, fmt.Errorf("claim source %s: %w", source, err)
	}
	if expires > nowText {
		return Claim{}, ErrBusy
	}
	c := Claim{Source: source, PreviousHolder: prev}
	if scan != 0 {
		if err := failTakenOver(ctx, tx, scan, prev, holder, nowText); err != nil {
			return Claim{}, err
		}
		c.TakenOver = scan
	}
	if _, err := tx.ExecContext(ctx, `UPDATE leases SET holder = ?, expires_at = ?, scan_id = NULL WHERE source = ?`,
		holder, fmtTime(now.Add(ttl)), source); err != nil {
		return Claim{}, fmt.Errorf("claim source %s: %w", source, err)
	}
	if err := tx.Commit(); err != nil {
		return Claim{}, fmt.Errorf("claim source %s: %w", source, err)
	}
	return c, nil
}

func failTakenOver(ctx context.Context, tx *txx, scan int64, prev, holder, nowText string) error {
	msg := fmt.Sprintf("replica %s lost its lease during the scan (it was killed, crashed or lost the database); replica %s took the source over", prev, holder)
	if _, err := tx.ExecContext(ctx, `UPDATE scans SET status = 'failed', finished_at = ?, error = ? WHERE id = ? AND status = 'running'`,
		nowText, msg, scan); err != nil {
		return fmt.Errorf("record scan %d failed: %w", scan, err)
	}
	return nil
}

// BeginLeased records a running scan of source by holder, which must hold
// the source's lease (ErrLeaseLost otherwise), and ties it to the lease.
func (s *Store) BeginLeased(ctx context.Context, holder, source, triggeredBy string) (Scan, error) {
	sc := Scan{Source: source, TriggeredBy: triggeredBy, Status: Running, StartedAt: s.now(), Replica: holder}
	nowText := fmtTime(sc.StartedAt)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Scan{}, fmt.Errorf("record scan of %s: %w", source, err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx,
		`INSERT INTO scans (source, triggered_by, status, started_at, replica) VALUES (?, ?, 'running', ?, ?) RETURNING id`,
		source, triggeredBy, nowText, holder).Scan(&sc.ID)
	if isUniqueViolation(err) {
		return Scan{}, ErrBusy
	} else if err != nil {
		return Scan{}, fmt.Errorf("record scan of %s: %w", source, err)
	}
	res, err := tx.ExecContext(ctx, `UPDATE leases SET scan_id = ? WHERE source = ? AND holder = ?`,
		sc.ID, source, holder)
	if err != nil {
		return Scan{}, fmt.Errorf("record scan of %s: %w", source, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Scan{}, fmt.Errorf("scan of %s: %w", source, ErrLeaseLost)
	}
	if err := tx.Commit(); err != nil {
		return Scan{}, fmt.Errorf("record scan of %s: %w", source, err)
	}
	sc.StartedAt, _ = parseTime(nowText)
	return sc, nil
}

// Renew extends holder's lease on source by ttl from now; ErrLeaseLost when
// holder no longer holds it.
func (s *Store) Renew(ctx context.Context, holder, source string, ttl time.Duration) error {
	now := s.now()
	res, err := s.db.ExecContext(ctx, `UPDATE leases SET expires_at = ? WHERE source = ? AND holder = ?`,
		fmtTime(now.Add(ttl)), source, holder)
	if err != nil {
		return fmt.Errorf("renew lease of %s: %w", source, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("renew lease of %s: %w", source, ErrLeaseLost)
	}
	return nil
}

// Release gives up holder's lease on source (no-op when it holds none).
func (s *Store) Release(ctx context.Context, holder, source string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE leases SET holder = '', expires_at = '', scan_id = NULL WHERE source = ? AND holder = ?`,
		source, holder); err != nil {
		return fmt.Errorf("release lease of %s: %w", source, err)
	}
	return nil
}

// Lease is the state of one source's lease.
type Lease struct {
	Source  string
	Holder  string
	Expires time.Time // zero when free
	ScanID  int64
	NextDue time.Time // zero when only on demand
}

// Leases returns every lease, by source.
func (s *Store) Leases(ctx context.Context) (map[string]Lease, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT source, holder, expires_at, COALESCE(scan_id, 0), next_due FROM leases`)
	if err != nil {
		return nil, fmt.Errorf("read leases: %w", err)
	}
	defer rows.Close()
	out := map[string]Lease{}
	for rows.Next() {
		var l Lease
		var exp, due string
		if err := rows.Scan(&l.Source, &l.Holder, &exp, &l.ScanID, &due); err != nil {
			return nil, fmt.Errorf("read leases: %w", err)
		}
		if exp != "" {
			l.Expires, _ = parseTime(exp)
		}
		if due != farFuture {
			l.NextDue, _ = parseTime(due)
		}
		out[l.Source] = l
	}
	return out, rows.Err()
}

// Meta is what a scan learnt about its source besides the report.
type Meta struct {
	Revision      string // git commit
	Fingerprint   string // what decided the offline checks
	OfflineReused bool
}

// SetMeta records meta on running scan id.
func (s *Store) SetMeta(ctx context.Context, id int64, m Meta) error {
	reused := 0
	if m.OfflineReused {
		reused = 1
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE scans SET revision = ?, fingerprint = ?, offline_reused = ? WHERE id = ? AND status = 'running'`,
		m.Revision, m.Fingerprint, reused, id); err != nil {
		return fmt.Errorf("record revision of scan %d: %w", id, err)
	}
	return nil
}

// LastFingerprinted returns the newest successful scan of source with the
// given fingerprint and its report, or ErrNotFound.
func (s *Store) LastFingerprinted(ctx context.Context, source, fingerprint string) (Scan, error) {
	sc, err := scanScan(s.db.QueryRowContext(ctx, `SELECT `+scanColumns+` FROM scans
		WHERE source = ? AND status = 'succeeded' AND fingerprint = ? AND fingerprint <> '' ORDER BY id DESC LIMIT 1`, source, fingerprint))
	if errors.Is(err, sql.ErrNoRows) {
		return Scan{}, ErrNotFound
	} else if err != nil {
		return Scan{}, fmt.Errorf("read scans of %s: %w", source, err)
	}
	return sc, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
