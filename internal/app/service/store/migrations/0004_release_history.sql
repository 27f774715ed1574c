-- 0004: what each scanned commit of a git source released (history.Snapshot
-- JSON: per provider its release name and the digests of its components and
-- metadata), so that the next commit's scan compares with it. Keyed by
-- commit, not scan: a re-scan of a commit releases the same. SaveReleases
-- keeps the newest few per source.
CREATE TABLE release_history (
	source   TEXT NOT NULL,
	revision TEXT NOT NULL,
	saved_at TEXT NOT NULL,
	releases TEXT NOT NULL,
	PRIMARY KEY (source, revision)
);
