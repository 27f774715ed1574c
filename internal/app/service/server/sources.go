package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/pinseal/pinseal/internal/app/service/gitsource"
	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// checkSourceMeta scans a source. A git source is fetched first (a fetch
// failure fails the scan with the git error) and scanned at the fetched
// commit, which is recorded with the scan. When an earlier successful scan
// saw the same commit under the same policy and build (its fingerprint),
// the offline checks are not run again: their results are kept and only
// the registry checks run, since the registry can drift on its own.
func (s *Server) checkSourceMeta(ctx context.Context, name string) (*report.Report, store.Meta, error) {
	src := s.sources[name]
	if src.Cluster != nil {
		rep, err := s.checkCluster(ctx, name)
		return rep, store.Meta{}, err
	}
	if src.Git == nil {
		rep, err := s.checkSource(ctx, name)
		return rep, store.Meta{}, err
	}
	spec, err := gitSpec(src.Git)
	if err != nil {
		return nil, store.Meta{}, fmt.Errorf("source %s: %w", name, err)
	}
	spec.MaxFiles, spec.MaxBytes, spec.MaxFileBytes = s.cfg.Limits.GitMaxFiles, s.cfg.Limits.GitMaxBytes, s.cfg.Limits.GitMaxFileBytes
	co, err := gitsource.Fetch(ctx, spec, s.cfg.gitCheckouts(name))
	if err != nil {
		return nil, store.Meta{}, err
	}
	meta := store.Meta{Revision: co.Commit}
	pol, polFP, err := s.sourcePolicy(name)
	if err != nil {
		return nil, meta, err
	}
	meta.Fingerprint = fingerprint(co.Commit, polFP)
	opts := CheckOptions{Registry: src.Registry, Policy: pol}
	s.withHistory(ctx, name, co.Commit, &opts)
	if prev, err := s.reusable(ctx, name, meta.Fingerprint); err == nil && prev != nil {
		meta.OfflineReused = true
		if src.Registry == "" {
			return prev, meta, nil
		}
		opts.RegistryOnly = true
		rep, err := s.engine.CheckTree(ctx, co.Dir, opts)
		if err != nil {
			return nil, meta, configHint(err, src.Policy)
		}
		return mergeRegistry(prev, checkoutRoot(rep, name, co.Commit)), meta, nil
	}
	rep, err := s.engine.CheckTree(ctx, co.Dir, opts)
	return checkoutRoot(rep, name, co.Commit), meta, configHint(err, src.Policy)
}

// checkoutRoot names a git source's checkout in its report as the path
// scrubber shows it ("[dataDir]/git/SOURCE/COMMIT"), not by the path on
// this replica's disk: the report is stored once and served by every
// replica, each with a data directory of its own, and no server path
// reaches a client.
func checkoutRoot(rep *report.Report, source, commit string) *report.Report {
	if rep != nil {
		rep.Root = "[dataDir]/git/" + source + "/" + commit
	}
	return rep
}

// reusable returns the report of the newest successful scan of source with
// fingerprint fp, or nil.
func (s *Server) reusable(ctx context.Context, source, fp string) (*report.Report, error) {
	sc, err := s.store.LastFingerprinted(ctx, source, fp)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return s.store.Report(ctx, sc.ID)
}

// registryChecks are the checks that read the registry.
var registryChecks = func() []string {
	var ids []string
	for _, c := range check.Registry(nil) {
		ids = append(ids, c.ID)
	}
	return ids
}()

// mergeRegistry is prev with its registry findings replaced by those of
// fresh (a registry-only run over the same tree).
func mergeRegistry(prev, fresh *report.Report) *report.Report {
	out := *prev
	out.Findings = nil
	for _, f := range prev.Findings {
		if !slices.Contains(registryChecks, f.Check) {
			out.Findings = append(out.Findings, f)
		}
	}
	for _, f := range fresh.Findings {
		if slices.Contains(registryChecks, f.Check) {
			out.Findings = append(out.Findings, f)
		}
	}
	verify.SortFindings(out.Findings)
	if fresh.Packages != nil {
		out.Packages = fresh.Packages
	}
	out.Tally()
	return &out
}

// fingerprint identifies what decides the offline checks' results of a
// commit: the commit and the policy's fingerprint (policyWatch: the policy
// file's content, the key files it names and this build).
func fingerprint(commit, policyFP string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", version.Version, commit, policyFP)
	return hex.EncodeToString(h.Sum(nil))
}

// linkFindings sets the link of each finding of a git source to its file
// at the finding's revision.
func (s *Server) linkFindings(fs []store.Finding) {
	for i := range fs {
		f := &fs[i]
		src, ok := s.sources[f.Source]
		if !ok || src.Git == nil || f.Revision == "" || f.File == "" {
			continue
		}
		f.Link = gitsource.WebURL(src.Git.URL, f.Revision, f.File, f.Line)
	}
}

// gitSpec reads a git source's credentials from their files or the
// environment.
func gitSpec(g *GitConfig) (gitsource.Spec, error) {
	spec := gitsource.Spec{URL: g.URL, Ref: g.Ref, Depth: g.Depth}
	if cr := g.Credentials; cr != nil {
		spec.Auth.Username = cr.Username
		spec.Auth.KnownHostsFile = cr.KnownHostsFile
		pw, err := readSecret(cr.PasswordFile, cr.PasswordEnv)
		if err != nil {
			return spec, fmt.Errorf("git credentials: %w", err)
		}
		spec.Auth.Password = pw
		if cr.SSHKeyFile != "" {
			if spec.Auth.SSHKey, err = os.ReadFile(cr.SSHKeyFile); err != nil {
				return spec, fmt.Errorf("git credentials: %w", err)
			}
		}
	}
	return spec, nil
}
