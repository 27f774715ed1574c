-- 0003: retention deletes old scans (Store.Prune). A finding still open, or
-- resolved by a scan that is kept, may have been first (or last) seen by a
-- scan that is deleted: its first_scan, last_scan and resolved_scan stay as
-- numbers (firstSeen and lastSeen keep the times) but are no longer foreign
-- keys. The tables are rebuilt, as SQLite cannot drop a constraint; every
-- step keeps the remaining foreign keys (scan_changes -> scans, findings)
-- satisfied, so this runs with foreign keys on, inside the migration's
-- transaction.

CREATE TABLE findings_new (
	id            INTEGER PRIMARY KEY,
	source        TEXT    NOT NULL,
	key           TEXT    NOT NULL,               -- check+package+provider+file, no message
	check_id      TEXT    NOT NULL,
	severity      TEXT    NOT NULL,
	package       TEXT    NOT NULL,
	finding       TEXT    NOT NULL,               -- latest report.Finding JSON
	first_seen    TEXT    NOT NULL,
	last_seen     TEXT    NOT NULL,
	first_scan    INTEGER NOT NULL,               -- scan ids; the scans may be deleted by retention
	last_scan     INTEGER NOT NULL,
	resolved_scan INTEGER,
	resolved_at   TEXT
);
INSERT INTO findings_new (id, source, key, check_id, severity, package, finding, first_seen, last_seen, first_scan, last_scan, resolved_scan, resolved_at)
	SELECT id, source, key, check_id, severity, package, finding, first_seen, last_seen, first_scan, last_scan, resolved_scan, resolved_at FROM findings;

CREATE TABLE scan_changes_new (
	scan_id    INTEGER NOT NULL REFERENCES scans (id),
	finding_id INTEGER NOT NULL REFERENCES findings_new (id),
	change     TEXT    NOT NULL CHECK (change IN ('new', 'resolved')),
	finding    TEXT    NOT NULL,
	PRIMARY KEY (scan_id, finding_id)
);
INSERT INTO scan_changes_new (scan_id, finding_id, change, finding)
	SELECT scan_id, finding_id, change, finding FROM scan_changes;

DROP TABLE scan_changes;
DROP TABLE findings;
ALTER TABLE findings_new RENAME TO findings;         -- scan_changes_new's reference follows
ALTER TABLE scan_changes_new RENAME TO scan_changes;

CREATE UNIQUE INDEX findings_open ON findings (source, key) WHERE resolved_scan IS NULL;
-- Retention deletes by these.
CREATE INDEX findings_by_resolved_scan ON findings (resolved_scan);
CREATE INDEX scan_changes_by_finding ON scan_changes (finding_id);
