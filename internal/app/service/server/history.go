package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pinseal/pinseal/internal/app/history"
	"github.com/pinseal/pinseal/internal/app/service/store"
)

// withHistory sets opts to compare the scan of commit with what the
// source's previous scanned commit released (the history checks: a release
// name whose bytes changed, or a lower one) and to record what commit
// releases for the next scan. A base that cannot be read leaves the
// comparison out, logged: the scan's other checks still run.
func (s *Server) withHistory(ctx context.Context, source, commit string, opts *CheckOptions) {
	prev, raw, err := s.store.PreviousReleases(ctx, source, commit)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		s.log.Warn("release history not compared", "source", source, "err", err)
	default:
		var base history.Snapshot
		if err := json.Unmarshal(raw, &base); err != nil {
			s.log.Warn("release history not compared", "source", source, "revision", prev, "err", err)
			break
		}
		base.Revision = "commit " + short(prev)
		opts.Base = &base
	}
	opts.Releases = func(snap *history.Snapshot) {
		snap.Revision = commit
		b, err := json.Marshal(snap)
		if err == nil {
			err = s.store.SaveReleases(ctx, source, commit, b)
		}
		if err != nil {
			s.log.Warn("release history not recorded", "source", source, "revision", commit, "err", err)
		}
	}
}

// short is a commit as the dashboard shows it.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
