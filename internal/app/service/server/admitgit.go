package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/internal/app/service/gitsource"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
)

// admitGitFetchTimeout bounds the fetch and load of one trusted commit.
// The fetch runs on after the decision that started it has answered
// (that decision says unverified), so a tree bigger than one webhook
// timeout is read once and vouches from the next request on.
const admitGitFetchTimeout = 2 * time.Minute

// gitTrees implements admission.Trees for the config's git sources: the
// tree of each (source, commit) is fetched once (gitsource.FetchCommit,
// bounded by the limits of git sources, into dataDir/admission-git),
// loaded as `verifier check` loads a tree (pkg/load, charts rendered with
// the engine's limits), and the components ConfigMaps it renders are kept
// in memory. A failed read is not kept: the next decision tries again.
type gitTrees struct {
	cfg  *Config
	opts load.Options
	log  *slog.Logger

	mu      sync.Mutex
	entries map[string]*treeEntry // source@commit
}

type treeEntry struct {
	done chan struct{}
	rels []admission.TreeRelease
	err  error
}

func newGitTrees(cfg *Config, eng Engine, log *slog.Logger) *gitTrees {
	t := &gitTrees{cfg: cfg, log: log, entries: map[string]*treeEntry{}}
	switch e := eng.(type) {
	case VerifyEngine:
		t.opts = load.Options{Render: e.Render, Sandbox: e.Sandbox}
	case *VerifyEngine:
		t.opts = load.Options{Render: e.Render, Sandbox: e.Sandbox}
	default:
		t.opts = load.Options{Render: cfg.Limits.Render()}
	}
	return t
}

// Releases implements admission.Trees: it waits for the tree of source
// at commit, at most until ctx is done.
func (t *gitTrees) Releases(ctx context.Context, source, commit string) ([]admission.TreeRelease, error) {
	key := source + "@" + commit
	t.mu.Lock()
	e := t.entries[key]
	if e != nil {
		select {
		case <-e.done:
			if e.err != nil {
				e = nil // failed: fetch again
			}
		default:
		}
	}
	if e == nil {
		e = &treeEntry{done: make(chan struct{})}
		t.entries[key] = e
		go t.read(e, source, commit)
	}
	t.mu.Unlock()
	select {
	case <-e.done:
		return e.rels, e.err
	case <-ctx.Done():
		return nil, fmt.Errorf("the tree is still being fetched when the webhook's time ran out (%w); it is kept once read", ctx.Err())
	}
}

func (t *gitTrees) read(e *treeEntry, source, commit string) {
	defer close(e.done)
	ctx, cancel := context.WithTimeout(context.Background(), admitGitFetchTimeout)
	defer cancel()
	start := time.Now()
	e.rels, e.err = t.fetch(ctx, source, commit)
	if e.err != nil {
		t.log.Warn("admission: git source", "source", source, "commit", commit, "err", e.err)
		return
	}
	t.log.Info("admission: git source read", "source", source, "commit", commit, "releases", len(e.rels), "took", time.Since(start).Round(time.Millisecond))
}

func (t *gitTrees) fetch(ctx context.Context, source, commit string) ([]admission.TreeRelease, error) {
	var git *GitConfig
	for _, src := range t.cfg.Sources {
		if src.Name == source {
			git = src.Git
		}
	}
	if git == nil {
		return nil, fmt.Errorf("the service config has no git source %q: name a sources: entry with git: in admission.gitSources", source)
	}
	spec, err := gitSpec(git)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", source, err)
	}
	spec.MaxFiles, spec.MaxBytes, spec.MaxFileBytes = t.cfg.Limits.GitMaxFiles, t.cfg.Limits.GitMaxBytes, t.cfg.Limits.GitMaxFileBytes
	co, err := gitsource.FetchCommit(ctx, spec, commit, t.cfg.admissionGit(source))
	if err != nil {
		return nil, err
	}
	tree, err := load.Tree(ctx, co.Dir, t.opts)
	if err != nil {
		return nil, fmt.Errorf("load the tree of %s at %s: %w", source, commit, err)
	}
	return treeReleases(tree), nil
}

// admissionGit is where the trusted commits of git source name are
// checked out for the admission webhook: apart from the scans' checkouts,
// which keep only the ref's newest commit.
func (c *Config) admissionGit(name string) string {
	return filepath.Join(c.DataDir, "admission-git", name)
}

// treeReleases are the components ConfigMaps tree renders, as the
// operator installs them: components inflated when the compressed
// annotation is "true" (else as stored), metadata as written.
func treeReleases(tree *model.Tree) []admission.TreeRelease {
	var out []admission.TreeRelease
	for _, p := range tree.Packages {
		for _, cm := range p.ConfigMaps {
			id, rel := admission.ReleaseOf(cm.Name, cm.Labels)
			c := cm.Components
			if id == "" || c == nil || c.DecodeErr != nil || cm.MetadataRaw == nil {
				continue
			}
			comps := c.SHA256.Hex()
			compressed := cm.Annotations[admission.CompressedAnnotation] == "true"
			if !compressed && c.InBinaryData {
				continue // the operator reads data.components only
			}
			if compressed {
				if !c.InBinaryData || c.Blob == nil || c.Blob.Err != nil {
					continue // the operator cannot install it; nothing to vouch for
				}
				comps = c.Blob.RawSHA256.Hex()
			}
			meta := sha256.Sum256(cm.MetadataRaw)
			out = append(out, admission.TreeRelease{Identity: id, Release: rel, Components: comps,
				Metadata: hex.EncodeToString(meta[:]), File: path.Join(p.Path, cm.File)})
		}
	}
	return out
}
