-- 0001: scan history, findings with first/last seen, per-scan changes.

CREATE TABLE scans (
	id           INTEGER PRIMARY KEY,
	source       TEXT    NOT NULL,
	triggered_by TEXT    NOT NULL,                -- schedule, api
	status       TEXT    NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
	started_at   TEXT    NOT NULL,                -- RFC 3339, UTC, fixed width
	finished_at  TEXT,
	error        TEXT    NOT NULL DEFAULT '',
	errors       INTEGER NOT NULL DEFAULT 0,
	warnings     INTEGER NOT NULL DEFAULT 0,
	report       TEXT                             -- report JSON, set when succeeded
);
CREATE INDEX scans_by_source ON scans (source, id DESC);
-- At most one running scan per source, whatever the process does.
CREATE UNIQUE INDEX scans_one_running ON scans (source) WHERE status = 'running';

-- One row per occurrence of a finding: opened by the scan that first saw it,
-- resolved by the first later scan that did not.
CREATE TABLE findings (
	id            INTEGER PRIMARY KEY,
	source        TEXT    NOT NULL,
	key           TEXT    NOT NULL,               -- check+package+provider+file, no message
	check_id      TEXT    NOT NULL,
	severity      TEXT    NOT NULL,
	package       TEXT    NOT NULL,
	finding       TEXT    NOT NULL,               -- latest report.Finding JSON
	first_seen    TEXT    NOT NULL,
	last_seen     TEXT    NOT NULL,
	first_scan    INTEGER NOT NULL REFERENCES scans (id),
	last_scan     INTEGER NOT NULL REFERENCES scans (id),
	resolved_scan INTEGER REFERENCES scans (id),
	resolved_at   TEXT
);
CREATE UNIQUE INDEX findings_open ON findings (source, key) WHERE resolved_scan IS NULL;

-- What each successful scan opened and resolved, with the finding as it was then.
CREATE TABLE scan_changes (
	scan_id    INTEGER NOT NULL REFERENCES scans (id),
	finding_id INTEGER NOT NULL REFERENCES findings (id),
	change     TEXT    NOT NULL CHECK (change IN ('new', 'resolved')),
	finding    TEXT    NOT NULL,
	PRIMARY KEY (scan_id, finding_id)
);
