-- 0002: git sources, re-scan skipping and replicas sharing one database.

-- The commit a git source was scanned at ('' for path sources), and what
-- decided the offline checks' result (commit, policy, build): a re-scan
-- with the same fingerprint keeps those results and re-runs only the
-- registry checks. offline_reused says the scan did that.
ALTER TABLE scans ADD COLUMN revision TEXT NOT NULL DEFAULT '';
ALTER TABLE scans ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE scans ADD COLUMN offline_reused INTEGER NOT NULL DEFAULT 0;
-- The replica that ran the scan ('' for a single process).
ALTER TABLE scans ADD COLUMN replica TEXT NOT NULL DEFAULT '';

-- One lease per source: the replica holding it (until expires_at) is the
-- only one scanning the source; next_due is when the schedule wants its
-- next scan, shared by all replicas.
CREATE TABLE leases (
	source     TEXT    PRIMARY KEY,
	holder     TEXT    NOT NULL DEFAULT '',       -- replica id, '' when free
	expires_at TEXT    NOT NULL DEFAULT '',       -- '' sorts before every time: free
	scan_id    INTEGER REFERENCES scans (id),     -- the holder's running scan
	next_due   TEXT    NOT NULL
);
