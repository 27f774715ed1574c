package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/internal/app/service/store"
)

// clusterTreeDir is the directory the tree of cluster source name is read
// from. A tree naming a git source is that source's checkout of the commit
// its newest successful scan saw (sources.go fetches it to
// DATADIR/git/SOURCE/COMMIT and keeps only the newest): the cluster is
// compared with what the service last checked of that tree, and the git
// remote is contacted by the git source's own scans only. Any other tree
// is a path source's path or a directory (Config.clusterTree).
func (s *Server) clusterTreeDir(ctx context.Context, name, tree string) (string, error) {
	src, ok := s.sources[tree]
	if !ok || src.Git == nil {
		return s.cfg.clusterTree(tree), nil
	}
	last, err := s.store.LastScans(ctx, store.Succeeded)
	if err != nil {
		return "", err
	}
	sc, ok := last[tree]
	if !ok || sc.Revision == "" {
		return "", fmt.Errorf("source %s: its tree, git source %s, has no successful scan yet: scan %s first (POST /v1/scans), then this source", name, tree, tree)
	}
	dir := filepath.Join(s.cfg.gitCheckouts(tree), sc.Revision)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		// Each replica keeps its own checkouts; a newer fetch of the git
		// source replaces this one.
		return "", fmt.Errorf("source %s: the checkout of git source %s at commit %s, its newest successful scan, is not on this replica: scan %s again, then this source", name, tree, sc.Revision, tree)
	}
	return dir, nil
}

// gitCheckouts is the directory git source name's checkouts are fetched
// into, one per commit (gitsource.Fetch).
func (c *Config) gitCheckouts(name string) string {
	return filepath.Join(c.DataDir, "git", name)
}
