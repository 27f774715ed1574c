// Package history compares a tree of provider packages with the same tree
// at an earlier revision: the history gate of `verifier check --base REV`
// and of the service's git sources.
//
// What an earlier revision held is reduced to a Snapshot: per provider, its
// release name (spec.version) and the digests of what the cluster gets
// under that name (the inflated components and the metadata of the
// ConfigMap its selector picks). The checks (Checks) are pure functions of
// the current tree that close over the base Snapshot, so they run in the
// engine like any other check; taking the base (from git objects, or from
// the service's store) happens at the edge.
//
// Two rules follow from how the cluster-api-operator installs a release:
//
//   - version-reused: a release name whose components or metadata differ
//     from the same name at the base. The operator keys an install by the
//     provider's spec (spec.version, not the bytes behind it), so clusters
//     that installed the name already never get the change.
//   - version-downgrade: a release name lower than the base's. The operator
//     refuses a release whose major.minor is lower than the installed one
//     (internal/controller/preflight_checks.go, checkProviderVersion, as of
//     v0.28.0: UnsupportedProviderDowngradeReason); a lower patch or
//     pre-release it installs, taking clusters back to older bytes, which
//     is a warning.
package history

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// Catalog IDs of the history checks.
const (
	VersionReused    = check.VersionReused
	VersionDowngrade = check.VersionDowngrade
)

// Snapshot is what a tree released at one revision: one Release per
// provider. It is what the service stores per scanned commit (JSON).
type Snapshot struct {
	// Revision names the base in findings: "REV (abcdef123456)" for a
	// revision the user named, the commit for the service.
	Revision string    `json:"revision"`
	Releases []Release `json:"releases"`
}

// Release is one provider's release as the tree held it.
type Release struct {
	Package   string `json:"package"`   // package path relative to the tree root
	Provider  string `json:"provider"`  // Kind/name
	Namespace string `json:"namespace"` // the provider's namespace as the operator reads it
	Version   string `json:"version"`   // spec.version: the release name
	// Components and Metadata are the digests ("sha256:<hex>") of what the
	// cluster gets under the release name: the components as installed
	// (inflated when the ConfigMap holds gzip) and data.metadata. Both are
	// empty when the tree does not hold the release (no selector, or no
	// ConfigMap picked): only the name is compared then.
	Components string `json:"components,omitempty"`
	Metadata   string `json:"metadata,omitempty"`

	// Where the release is in the current tree (not stored): the provider
	// (its spec.version names the release) and the ConfigMap that holds
	// the bytes, each with its package.
	provider, configMap place
	content             bool
}

type place struct {
	pkg *model.Package
	loc model.Location
}

// Take reduces a loaded tree to its Snapshot.
func Take(t *model.Tree, revision string) *Snapshot {
	if t == nil {
		return &Snapshot{Revision: revision, Releases: []Release{}}
	}
	return take(t, check.NewIndex(t), revision)
}

// take is Take with the tree's index (a check's Input already has one).
func take(t *model.Tree, ix *check.Index, revision string) *Snapshot {
	s := &Snapshot{Revision: revision, Releases: []Release{}}
	for _, pkg := range t.Packages {
		for _, p := range pkg.Providers {
			r := Release{
				Package:   pkgPath(pkg),
				Provider:  p.ID(),
				Namespace: check.Namespace(pkg, p.Namespace),
				Version:   p.Version,
				provider:  place{pkg, p.Location},
			}
			if p.Selector != nil {
				if m, ok := ix.Select(pkg, p).Picked(p.Version); ok && m.ConfigMap.Components != nil {
					r.Components, r.content = componentsDigest(m.ConfigMap.Components)
					r.Metadata = fmt.Sprintf("sha256:%x", sha256.Sum256(m.ConfigMap.MetadataRaw))
					r.configMap = place{m.Package, m.ConfigMap.Location}
				}
			}
			s.Releases = append(s.Releases, r)
		}
	}
	return s
}

// componentsDigest is the digest of the components as the cluster gets
// them, and whether it could be told: gzip is compared inflated (a blob
// recompressed around the same YAML is the same release), and a blob that
// does not inflate, or is not valid base64, is not compared (blob-corrupt
// says why).
func componentsDigest(c *model.Components) (string, bool) {
	switch {
	case c.DecodeErr != nil:
		return "", false
	case c.Gzip:
		if c.Blob == nil || c.Blob.Err != nil {
			return "", false
		}
		return c.Blob.RawSHA256.String(), true
	}
	return c.SHA256.String(), true
}

func pkgPath(pkg *model.Package) string {
	if pkg.Path == "" {
		return "."
	}
	return pkg.Path
}

// Checks are version-reused and version-downgrade against base, to pass
// to the engine (verify.Options.Extra). A nil base yields no checks.
func Checks(base *Snapshot) []check.Check {
	if base == nil {
		return nil
	}
	// Both checks compare the same current snapshot: it is taken once per
	// Input, with the Input's index.
	var (
		mu   sync.Mutex
		last *check.Input
		cur  *Snapshot
	)
	current := func(in *check.Input) *Snapshot {
		mu.Lock()
		defer mu.Unlock()
		if in != last {
			ix := in.Index
			if ix == nil {
				ix = check.NewIndex(in.Tree)
			}
			last, cur = in, take(in.Tree, ix, "")
		}
		return cur
	}
	mk := func(id string, run func(*Snapshot, *Snapshot) []report.Finding) check.Check {
		c, _ := check.Lookup(id)
		c.Run = func(in *check.Input) []report.Finding { return run(base, current(in)) }
		return c
	}
	return []check.Check{mk(VersionReused, reused), mk(VersionDowngrade, downgraded)}
}

// pairs calls f with each release of cur and the base release of the same
// provider: the one in the same package, else the only one of that
// provider in that namespace anywhere in the base (a package moved).
func pairs(base, cur *Snapshot, f func(b, c Release)) {
	type key struct{ provider, namespace string }
	byKey := map[key][]Release{}
	for _, b := range base.Releases {
		k := key{b.Provider, b.Namespace}
		byKey[k] = append(byKey[k], b)
	}
	for _, c := range cur.Releases {
		cands := byKey[key{c.Provider, c.Namespace}]
		i := slices.IndexFunc(cands, func(b Release) bool { return b.Package == c.Package })
		switch {
		case i >= 0:
			f(cands[i], c)
		case len(cands) == 1:
			f(cands[0], c)
		}
	}
}

// reused: same release name, other bytes.
func reused(base, cur *Snapshot) []report.Finding {
	var out []report.Finding
	pairs(base, cur, func(b, c Release) {
		if b.Version != c.Version || !c.content || b.Components == "" {
			return
		}
		var what []string
		if b.Components != c.Components {
			what = append(what, fmt.Sprintf("components (%s, was %s)", short(c.Components), short(b.Components)))
		}
		if b.Metadata != c.Metadata {
			what = append(what, fmt.Sprintf("metadata (%s, was %s)", short(c.Metadata), short(b.Metadata)))
		}
		if len(what) == 0 {
			return
		}
		out = append(out, finding(VersionReused, c, c.configMap,
			fmt.Sprintf("release %s of %s changed since %s: %s; clusters that installed %s never get this change: release it under a new name",
				c.Version, c.Provider, base.Revision, join(what), c.Version),
			fmt.Sprintf("give the change a new release name (spec.version, the ConfigMap's name and version label; `builder bump %s --to …` does all three), or restore the bytes %s released as %s",
				c.provider.pkg.CommandPath(), base.Revision, c.Version)))
	})
	return out
}

// downgraded: a lower release name than the base's, as the operator
// compares them (k8s.io/apimachinery version.ParseSemantic, as in
// checkProviderVersion).
func downgraded(base, cur *Snapshot) []report.Finding {
	var out []report.Finding
	pairs(base, cur, func(b, c Release) {
		bv, err1 := version.ParseSemantic(b.Version)
		cv, err2 := version.ParseSemantic(c.Version)
		if err1 != nil || err2 != nil || !cv.LessThan(bv) {
			return // a release name that is not semver is oci-source's and configmap-version's
		}
		f := finding(VersionDowngrade, c, c.provider,
			fmt.Sprintf("%s goes from release %s at %s down to %s: the cluster-api-operator refuses a provider downgrade (preflight: UnsupportedProviderDowngradeReason), so clusters that installed %s stay on it",
				c.Provider, b.Version, base.Revision, c.Version, b.Version),
			fmt.Sprintf("move %s forward instead (a release above %s), or, to undo a change, release the old bytes under a new, higher name", c.Provider, b.Version))
		if cv.Major() == bv.Major() && cv.Minor() == bv.Minor() {
			// The operator compares major.minor only: it installs this one.
			f.Severity = report.Warning
			f.Message = fmt.Sprintf("%s goes from release %s at %s down to %s: the cluster-api-operator installs a lower patch or pre-release of the same minor, taking clusters back to older bytes",
				c.Provider, b.Version, base.Revision, c.Version)
		}
		out = append(out, f)
	})
	return out
}

// finding is a finding about release r located at at.
func finding(id string, r Release, at place, msg, hint string) report.Finding {
	f := report.Finding{Check: id, Package: r.Package, Provider: r.Provider, Line: at.loc.Line, Message: msg, Hint: hint}
	if at.loc.File != "" {
		f.File = at.loc.File
		if p := pkgPath(at.pkg); p != "." {
			f.File = p + "/" + at.loc.File
		}
	}
	return f
}

// short abbreviates a "sha256:<hex>" digest for messages.
func short(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

func join(parts []string) string {
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return parts[0]
}
