package check

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// pinnedRelease is the release of pkg that pins p's metadata.yaml and
// holds it vendored, when p installs from spec.fetchConfig.oci (what
// `builder vendor --to-oci` leaves: pins and files, no ConfigMap). The
// artifact the operator copies carries that file as its metadata layer,
// so its contract is the one the operator installs. nil when there is
// none.
func pinnedRelease(pkg *model.Package, p *model.Provider) *model.LayoutRelease {
	if p.FetchOCI == "" || p.Selector != nil || pkg.Layout == nil {
		return nil
	}
	for _, r := range pkg.Layout.Releases {
		if r.PinnedMetadata != nil && r.Pin.Kind == p.Kind && r.Pin.Name == p.Name && r.Pin.Release == p.Version {
			return r
		}
	}
	return nil
}

// pinnedContract is the contract r's vendored metadata declares for its
// pinned upstream version.
func pinnedContract(r *model.LayoutRelease) (string, *version.Version, error) {
	v, err := version.ParseSemantic(r.Pin.Version)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("the pinned version %q is not a semantic version", r.Pin.Version)
	case r.PinnedMetadata.Err != nil:
		return "", v, r.PinnedMetadata.Err
	}
	s, ok := series(r.PinnedMetadata, v.Major(), v.Minor())
	if !ok || s.Contract == "" {
		return "", v, fmt.Errorf("it has no releaseSeries with a contract for %d.%d (it has %s)", v.Major(), v.Minor(), listSeries(r.PinnedMetadata))
	}
	return s.Contract, v, nil
}

// pinnedContractFindings checks the contract of p's pinned, vendored
// metadata (r) against the contracts the core provider serves (accepted).
func pinnedContractFindings(pkg *model.Package, p *model.Provider, r *model.LayoutRelease, core *model.Provider, corePkg *model.Package, accepted []string, served string) []report.Finding {
	loc := model.Location{File: r.Metadata}
	c, v, err := pinnedContract(r)
	if err != nil {
		return []report.Finding{pinnedUncheckable(pkg, p, r, err)}
	}
	if slices.Contains(accepted, c) {
		return nil
	}
	return []report.Finding{newFinding(Contract, pkg, p.ID(), loc,
		fmt.Sprintf("release %s of %s declares contract %s (releaseSeries %d.%d in %s), but the core provider %s %s (%s) serves %s",
			p.Version, p.ID(), c, v.Major(), v.Minor(), r.Metadata, core.ID(), core.Version, pkgPath(corePkg), strings.Join(accepted, ", ")),
		fmt.Sprintf("use a release of %s whose series declares %s, or upgrade the core provider to a release serving %s", p.ID(), served, c))}
}

// pinnedUncheckable is the contract warning for p, whose pinned, vendored
// metadata (r) does not say its contract (err says why).
func pinnedUncheckable(pkg *model.Package, p *model.Provider, r *model.LayoutRelease, err error) report.Finding {
	f := newFinding(Contract, pkg, p.ID(), model.Location{File: r.Metadata},
		fmt.Sprintf("the contract of %s %s could not be checked: its vendored %s: %v", p.ID(), p.Version, r.Metadata, err),
		fmt.Sprintf("vendor the metadata.yaml of %s's release %s again (builder vendor --to-oci)", p.ID(), r.Pin.Version))
	f.Severity = report.Warning
	return f
}
