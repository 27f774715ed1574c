// Package store keeps the verifier service's history of scans and findings
// in SQLite.
//
// It keeps the verifier service's history in SQLite (pure Go,
// modernc.org/sqlite): the scans of each source with their reports, and the
// findings with when they were first and last seen. One database file in the
// data directory, WAL journal, numbered up migrations (see migrate.go).
package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/pinseal/pinseal/pkg/report"
)

// FileName is the database file inside the data directory.
const FileName = "pinseal.db"

// Status of a scan.
type Status string

const (
	Running   Status = "running"
	Succeeded Status = "succeeded"
	Failed    Status = "failed"
)

// Errors callers branch on.
var (
	ErrNotFound = errors.New("not found")
	// ErrBusy: the source already has a running scan.
	ErrBusy = errors.New("a scan of this source is already running")
	// ErrNotRunning: the scan was finished (or failed) already, e.g. by a
	// shutdown that gave up waiting for it.
	ErrNotRunning = errors.New("scan is no longer running")
)

// Scan is one scan of a source.
type Scan struct {
	ID          int64      `json:"id"`
	Source      string     `json:"source"`
	TriggeredBy string     `json:"triggeredBy"` // "schedule" or "api"
	Status      Status     `json:"status"`
	StartedAt   time.Time  `json:"startedAt"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
	Error       string     `json:"error,omitempty"`
	Errors      int        `json:"errors"`   // error findings (not waived)
	Warnings    int        `json:"warnings"` // warning findings (not waived)
	// Revision is the commit a git source was scanned at.
	Revision string `json:"revision,omitempty"`
	// OfflineReused: the commit and policy had not changed since an earlier
	// successful scan, whose offline check results this scan kept; only the
	// registry checks ran again.
	OfflineReused bool `json:"offlineReused,omitempty"`
	// Replica is the replica that ran the scan (several replicas share one
	// PostgreSQL database).
	Replica string `json:"replica,omitempty"`
	// fingerprint identifies what decided the offline checks' results.
	fingerprint string
}

// Finding is a report finding tracked across the scans of one source.
type Finding struct {
	Key            string `json:"key"`
	Source         string `json:"source"`
	report.Finding `json:"finding"`
	FirstSeen      time.Time `json:"firstSeen"`
	LastSeen       time.Time `json:"lastSeen"`
	FirstScan      int64     `json:"firstScan"`
	LastScan       int64     `json:"lastScan"`
	// Revision is the commit (git sources) of the scan that last saw the
	// finding; in a scan's changes, of that scan (the commit that opened or
	// resolved it).
	Revision string `json:"revision,omitempty"`
	// Link is where the file is at Revision (set by the service).
	Link string `json:"link,omitempty"`
}

// Changes are the findings a scan opened and resolved compared with the
// previous successful scan of its source.
type Changes struct {
	New      []Finding `json:"new"`
	Resolved []Finding `json:"resolved"`
}

// Store is the service's database. Its methods are safe for concurrent use.
type Store struct {
	db      *dbx
	dialect dialect
	// Now is the clock; tests replace it.
	Now func() time.Time
}

// Open opens (creating if needed) the database in dir and brings its schema
// up to date.
func Open(ctx context.Context, dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL") // durable across a process crash in WAL mode
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "1")
	q.Set("_txlock", "immediate") // writers queue up front instead of failing to upgrade
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w (is the data directory writable?)", path, err)
	}
	s := &Store{db: &dbx{DB: db, d: sqliteDialect}, dialect: sqliteDialect, Now: time.Now}
	if err := migrate(ctx, s.db, s.dialect, s.now()); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

func (s *Store) now() time.Time { return s.Now().UTC() }

// timeFormat is fixed-width so that stored times sort as text.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t, nil
}

// FailRunning marks every running scan failed with reason. A process that
// was killed mid-scan leaves its scan running; the next start calls this.
func (s *Store) FailRunning(ctx context.Context, reason string) (int64, error) {
	res, err := s.db.ExecContext(ctx,
		`UPDATE scans SET status = 'failed', finished_at = ?, error = ? WHERE status = 'running'`,
		fmtTime(s.now()), reason)
	if err != nil {
		return 0, fmt.Errorf("mark interrupted scans failed: %w", err)
	}
	return res.RowsAffected()
}

// Begin records a running scan of source. It returns ErrBusy when the source
// has a running scan already.
func (s *Store) Begin(ctx context.Context, source, triggeredBy string) (Scan, error) {
	sc := Scan{Source: source, TriggeredBy: triggeredBy, Status: Running, StartedAt: s.now()}
	err := s.db.QueryRowContext(ctx,
		`INSERT INTO scans (source, triggered_by, status, started_at) VALUES (?, ?, 'running', ?) RETURNING id`,
		source, triggeredBy, fmtTime(sc.StartedAt)).Scan(&sc.ID)
	if err != nil {
		if isUniqueViolation(err) {
			return Scan{}, ErrBusy
		}
		return Scan{}, fmt.Errorf("record scan of %s: %w", source, err)
	}
	sc.StartedAt, _ = parseTime(fmtTime(sc.StartedAt)) // the stored precision
	return sc, nil
}

// Fail records that running scan id failed with msg.
func (s *Store) Fail(ctx context.Context, id int64, msg string) error {
	res, err := s.db.ExecContext(ctx,
		`UPDATE scans SET status = 'failed', finished_at = ?, error = ? WHERE id = ? AND status = 'running'`,
		fmtTime(s.now()), msg, id)
	if err != nil {
		return fmt.Errorf("record failure of scan %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("scan %d: %w", id, ErrNotRunning)
	}
	return nil
}

// Succeed records the report of running scan id and updates the findings of
// its source: findings seen again get a new last-seen time, findings not seen
// before are opened, open findings not seen any more are resolved. It returns
// what was opened and resolved.
func (s *Store) Succeed(ctx context.Context, id int64, rep *report.Report) (Changes, error) {
	tallied := *rep
	tallied.Tally()
	body, err := json.Marshal(&tallied)
	if err != nil {
		return Changes{}, fmt.Errorf("encode report of scan %d: %w", id, err)
	}
	now := s.now()
	nowText := fmtTime(now)
	now, _ = parseTime(nowText)

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Changes{}, fmt.Errorf("record scan %d: %w", id, err)
	}
	defer tx.Rollback()

	sc := succeedingScan{tx: tx, id: id, now: now, nowText: nowText}
	if err := sc.load(ctx); err != nil {
		return Changes{}, err
	}
	open, err := queryFindings(ctx, tx, `WHERE source = ? AND resolved_scan IS NULL`, sc.source)
	if err != nil {
		return Changes{}, err
	}
	openByKey := make(map[string]storedFinding, len(open))
	for _, f := range open {
		openByKey[f.Key] = f
	}
	ch := Changes{New: []Finding{}, Resolved: []Finding{}}
	if ch.New, err = sc.record(ctx, rep.Findings, openByKey); err != nil {
		return Changes{}, err
	}
	if ch.Resolved, err = sc.resolve(ctx, openByKey); err != nil {
		return Changes{}, err
	}

	if _, err := tx.ExecContext(ctx,
		`UPDATE scans SET status = 'succeeded', finished_at = ?, errors = ?, warnings = ?, report = ? WHERE id = ?`,
		nowText, tallied.Summary.Errors, tallied.Summary.Warnings, string(body), id); err != nil {
		return Changes{}, fmt.Errorf("record scan %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Changes{}, fmt.Errorf("record scan %d: %w", id, err)
	}
	return ch, nil
}

// succeedingScan is the scan Succeed records, inside its transaction.
type succeedingScan struct {
	tx               *txx
	id               int64
	now              time.Time
	nowText          string
	source, revision string
}

// load reads the scan's source and revision; the scan must be running.
func (sc *succeedingScan) load(ctx context.Context) error {
	var status Status
	err := sc.tx.QueryRowContext(ctx, `SELECT source, status, revision FROM scans WHERE id = ?`, sc.id).Scan(&sc.source, &status, &sc.revision)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("scan %d: %w", sc.id, ErrNotFound)
	} else if err != nil {
		return fmt.Errorf("record scan %d: %w", sc.id, err)
	}
	if status != Running {
		return fmt.Errorf("scan %d is %s: %w", sc.id, status, ErrNotRunning)
	}
	return nil
}

// record updates the findings still open and inserts the new ones,
// removing the ones it sees from openByKey; it returns the new findings.
func (sc *succeedingScan) record(ctx context.Context, findings []report.Finding, openByKey map[string]storedFinding) ([]Finding, error) {
	tx, id, nowText := sc.tx, sc.id, sc.nowText
	added := []Finding{}
	keys := Keys(findings)
	for i, rf := range findings {
		fj, err := json.Marshal(rf)
		if err != nil {
			return nil, fmt.Errorf("encode finding: %w", err)
		}
		if prev, ok := openByKey[keys[i]]; ok {
			delete(openByKey, keys[i])
			_, err = tx.ExecContext(ctx,
				`UPDATE findings SET check_id = ?, severity = ?, package = ?, finding = ?, last_seen = ?, last_scan = ? WHERE id = ?`,
				rf.Check, string(rf.Severity), rf.Package, string(fj), nowText, id, prev.rowID)
			if err != nil {
				return nil, fmt.Errorf("update finding: %w", err)
			}
			continue
		}
		var rowID int64
		err = tx.QueryRowContext(ctx,
			`INSERT INTO findings (source, key, check_id, severity, package, finding, first_seen, last_seen, first_scan, last_scan)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			sc.source, keys[i], rf.Check, string(rf.Severity), rf.Package, string(fj), nowText, nowText, id, id).Scan(&rowID)
		if err != nil {
			return nil, fmt.Errorf("insert finding: %w", err)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO scan_changes (scan_id, finding_id, change, finding) VALUES (?, ?, 'new', ?)`, id, rowID, string(fj)); err != nil {
			return nil, fmt.Errorf("record new finding: %w", err)
		}
		added = append(added, Finding{Key: keys[i], Source: sc.source, Finding: rf,
			FirstSeen: sc.now, LastSeen: sc.now, FirstScan: id, LastScan: id, Revision: sc.revision})
	}
	return added, nil
}

// resolve marks the findings left in openByKey resolved by this scan, in
// the order they were first stored, and returns them.
func (sc *succeedingScan) resolve(ctx context.Context, openByKey map[string]storedFinding) ([]Finding, error) {
	gone := make([]storedFinding, 0, len(openByKey))
	for _, f := range openByKey {
		gone = append(gone, f)
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].rowID < gone[j].rowID })
	resolved := []Finding{}
	for _, f := range gone {
		if _, err := sc.tx.ExecContext(ctx,
			`UPDATE findings SET resolved_scan = ?, resolved_at = ? WHERE id = ?`, sc.id, sc.nowText, f.rowID); err != nil {
			return nil, fmt.Errorf("resolve finding: %w", err)
		}
		if _, err := sc.tx.ExecContext(ctx,
			`INSERT INTO scan_changes (scan_id, finding_id, change, finding) VALUES (?, ?, 'resolved', ?)`, sc.id, f.rowID, f.raw); err != nil {
			return nil, fmt.Errorf("record resolved finding: %w", err)
		}
		f.Finding.Revision = sc.revision
		resolved = append(resolved, f.Finding)
	}
	return resolved, nil
}

const scanColumns = `id, source, triggered_by, status, started_at, finished_at, error, errors, warnings, revision, fingerprint, offline_reused, replica`

func scanScan(row interface{ Scan(...any) error }) (Scan, error) {
	var sc Scan
	var started string
	var finished sql.NullString
	var reused int
	if err := row.Scan(&sc.ID, &sc.Source, &sc.TriggeredBy, &sc.Status, &started, &finished, &sc.Error, &sc.Errors, &sc.Warnings,
		&sc.Revision, &sc.fingerprint, &reused, &sc.Replica); err != nil {
		return Scan{}, err
	}
	sc.OfflineReused = reused != 0
	var err error
	if sc.StartedAt, err = parseTime(started); err != nil {
		return Scan{}, err
	}
	if finished.Valid {
		t, err := parseTime(finished.String)
		if err != nil {
			return Scan{}, err
		}
		sc.FinishedAt = &t
	}
	return sc, nil
}

// Scan returns scan id.
func (s *Store) Scan(ctx context.Context, id int64) (Scan, error) {
	sc, err := scanScan(s.db.QueryRowContext(ctx, `SELECT `+scanColumns+` FROM scans WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Scan{}, fmt.Errorf("scan %d: %w", id, ErrNotFound)
	} else if err != nil {
		return Scan{}, fmt.Errorf("read scan %d: %w", id, err)
	}
	return sc, nil
}

// Report returns the report of scan id; nil when the scan did not succeed.
func (s *Store) Report(ctx context.Context, id int64) (*report.Report, error) {
	var body sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT report FROM scans WHERE id = ?`, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("scan %d: %w", id, ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("read report of scan %d: %w", id, err)
	}
	if !body.Valid {
		return nil, nil
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(body.String), &rep); err != nil {
		return nil, fmt.Errorf("decode report of scan %d: %w", id, err)
	}
	return &rep, nil
}

// Changes returns what scan id opened and resolved.
func (s *Store) Changes(ctx context.Context, id int64) (Changes, error) {
	rows, err := s.db.QueryContext(ctx, `
		SELECT c.change, c.finding, f.key, f.source, f.first_seen, f.first_scan, s.revision,
		       CASE c.change WHEN 'new' THEN s.finished_at ELSE f.last_seen END,
		       CASE c.change WHEN 'new' THEN c.scan_id ELSE f.last_scan END
		FROM scan_changes c JOIN findings f ON f.id = c.finding_id JOIN scans s ON s.id = c.scan_id
		WHERE c.scan_id = ? ORDER BY c.finding_id`, id)
	if err != nil {
		return Changes{}, fmt.Errorf("read changes of scan %d: %w", id, err)
	}
	defer rows.Close()
	ch := Changes{New: []Finding{}, Resolved: []Finding{}}
	for rows.Next() {
		var change, raw, first, last string
		var f Finding
		if err := rows.Scan(&change, &raw, &f.Key, &f.Source, &first, &f.FirstScan, &f.Revision, &last, &f.LastScan); err != nil {
			return Changes{}, fmt.Errorf("read changes of scan %d: %w", id, err)
		}
		if err := json.Unmarshal([]byte(raw), &f.Finding); err != nil {
			return Changes{}, fmt.Errorf("decode finding: %w", err)
		}
		if f.FirstSeen, err = parseTime(first); err != nil {
			return Changes{}, err
		}
		if f.LastSeen, err = parseTime(last); err != nil {
			return Changes{}, err
		}
		if change == "new" {
			ch.New = append(ch.New, f)
		} else {
			ch.Resolved = append(ch.Resolved, f)
		}
	}
	return ch, rows.Err()
}

// Scans lists the latest scans, newest first, of source (all sources when
// source is ""), at most limit.
func (s *Store) Scans(ctx context.Context, source string, limit int) ([]Scan, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+scanColumns+` FROM scans WHERE (? = '' OR source = ?) ORDER BY id DESC LIMIT ?`,
		source, source, limit)
	if err != nil {
		return nil, fmt.Errorf("list scans: %w", err)
	}
	defer rows.Close()
	out := []Scan{}
	for rows.Next() {
		sc, err := scanScan(rows)
		if err != nil {
			return nil, fmt.Errorf("list scans: %w", err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// LastScans returns the newest scan of each source that has one; with a
// status, the newest scan in that status.
func (s *Store) LastScans(ctx context.Context, status Status) (map[string]Scan, error) {
	rows, err := s.db.QueryContext(ctx,
		`SELECT `+scanColumns+` FROM scans WHERE id IN (
			SELECT MAX(id) FROM scans WHERE (? = '' OR status = ?) GROUP BY source)`,
		string(status), string(status))
	if err != nil {
		return nil, fmt.Errorf("read last scans: %w", err)
	}
	defer rows.Close()
	out := map[string]Scan{}
	for rows.Next() {
		sc, err := scanScan(rows)
		if err != nil {
			return nil, fmt.Errorf("read last scans: %w", err)
		}
		out[sc.Source] = sc
	}
	return out, rows.Err()
}

// OpenFindings lists the open findings, optionally of one source and one
// severity, ordered by source, package, check.
func (s *Store) OpenFindings(ctx context.Context, source string, severity report.Severity) ([]Finding, error) {
	fs, err := queryFindings(ctx, s.db,
		`WHERE resolved_scan IS NULL AND (? = '' OR source = ?) AND (? = '' OR severity = ?)
		 ORDER BY source, package, check_id, id`,
		source, source, string(severity), string(severity))
	if err != nil {
		return nil, err
	}
	out := make([]Finding, len(fs))
	for i, f := range fs {
		out[i] = f.Finding
	}
	return out, nil
}

type storedFinding struct {
	Finding
	rowID int64
	raw   string
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryFindings(ctx context.Context, q querier, where string, args ...any) ([]storedFinding, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT id, key, source, finding, first_seen, last_seen, first_scan, last_scan,
		        COALESCE((SELECT revision FROM scans WHERE scans.id = findings.last_scan), '') FROM findings `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read findings: %w", err)
	}
	defer rows.Close()
	var out []storedFinding
	for rows.Next() {
		var f storedFinding
		var first, last string
		if err := rows.Scan(&f.rowID, &f.Key, &f.Source, &f.raw, &first, &last, &f.FirstScan, &f.LastScan, &f.Revision); err != nil {
			return nil, fmt.Errorf("read findings: %w", err)
		}
		if err := json.Unmarshal([]byte(f.raw), &f.Finding.Finding); err != nil {
			return nil, fmt.Errorf("decode finding %d: %w", f.rowID, err)
		}
		if f.FirstSeen, err = parseTime(first); err != nil {
			return nil, err
		}
		if f.LastSeen, err = parseTime(last); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// Key identifies a finding across scans: its check, package, provider and
// file, not its message (which may quote changing values such as digests or
// line numbers). Keys are 24 hex digits.
func Key(f report.Finding) string {
	h := sha256.New()
	for _, s := range []string{f.Check, f.Package, f.Provider, f.File} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// Keys returns the key of each finding in order; the second and later
// findings with the same key get "#2", "#3", ... appended so that each key in
// one report is unique.
func Keys(fs []report.Finding) []string {
	keys := make([]string, len(fs))
	seen := make(map[string]int, len(fs))
	for i, f := range fs {
		k := Key(f)
		seen[k]++
		if n := seen[k]; n > 1 {
			k += "#" + strconv.Itoa(n)
		}
		keys[i] = k
	}
	return keys
}

// Sources lists the sources that have scans in the history, configured or
// not.
func (s *Store) Sources(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT source FROM scans ORDER BY source`)
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var src string
		if err := rows.Scan(&src); err != nil {
			return nil, fmt.Errorf("list sources: %w", err)
		}
		out = append(out, src)
	}
	return out, rows.Err()
}

// Prune applies retention to source: it deletes the scans beyond the newest
// keep (keep < 1: no count bound) and those that finished before before
// (zero: no age bound), never a running scan nor the newest successful one
// (the base of the next scan's changes and of the last-success time). With
// a deleted scan go its report, what it opened and resolved, and the
// findings it resolved (history older than the retention); findings still
// open keep their first-seen time and scan number. It returns how many
// scans it deleted. One transaction; plain SQL.
func (s *Store) Prune(ctx context.Context, source string, keep int, before time.Time) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("prune scans of %s: %w", source, err)
	}
	defer tx.Rollback()

	// Scans with an id below cut are beyond the newest keep.
	var cut int64
	if keep > 0 {
		err := tx.QueryRowContext(ctx, `SELECT id FROM scans WHERE source = ? ORDER BY id DESC LIMIT 1 OFFSET ?`,
			source, keep-1).Scan(&cut)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("prune scans of %s: %w", source, err)
		}
	}
	var lastOK sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(id) FROM scans WHERE source = ? AND status = 'succeeded'`,
		source).Scan(&lastOK); err != nil {
		return 0, fmt.Errorf("prune scans of %s: %w", source, err)
	}
	// The zero time (year 1) is before every stored time, and a valid
	// timestamp for a database that types the column.
	cutoff := fmtTime(before)
	const doomed = `SELECT id FROM scans WHERE source = ? AND status <> 'running' AND id <> ? AND (id < ? OR finished_at < ?)`
	args := []any{source, lastOK.Int64, cut, cutoff}
	steps := []struct{ what, sql string }{
		{"changes of the findings they resolved", `DELETE FROM scan_changes WHERE finding_id IN (SELECT id FROM findings WHERE resolved_scan IN (` + doomed + `))`},
		{"the findings they resolved", `DELETE FROM findings WHERE resolved_scan IN (` + doomed + `)`},
		{"their changes", `DELETE FROM scan_changes WHERE scan_id IN (` + doomed + `)`},
	}
	for _, st := range steps {
		if _, err := tx.ExecContext(ctx, st.sql, args...); err != nil {
			return 0, fmt.Errorf("prune scans of %s: delete %s: %w", source, st.what, err)
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM scans WHERE id IN (`+doomed+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("prune scans of %s: %w", source, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune scans of %s: %w", source, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("prune scans of %s: %w", source, err)
	}
	return n, nil
}
