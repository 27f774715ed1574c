package check

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/operator"
	"github.com/pinseal/pinseal/pkg/report"
)

// ociSource: every provider that installs from spec.fetchConfig.oci names
// it so that the cluster-api-operator can read it and fetches from it the
// release spec.version names. pkg/operator holds the rules, each read from
// the operator's source; this needs no registry, so it runs offline, while
// oci-install judges the artifact the value names once a registry is
// given. Rules that only operators before v0.20.0 break are warnings.
func ociSource(t *model.Tree) []report.Finding {
	var out []report.Finding
	providers(t, func(pkg *model.Package, p *model.Provider) {
		spec := operator.Spec{Kind: p.Kind, Name: p.Name, Version: p.Version,
			OCI: p.FetchOCI, URL: p.FetchURL, Selector: p.Selector != nil}
		for _, prob := range operator.Check(spec) {
			loc := p.Location
			if p.FetchOCILine > 0 {
				loc.Line = p.FetchOCILine
			}
			f := newFinding(OCISource, pkg, p.ID(), loc,
				fmt.Sprintf("%s: spec.fetchConfig.oci %q: %s", p.ID(), p.FetchOCI, prob.Message), prob.Hint)
			f.Detail = fmt.Sprintf("operator rule %s, read from %s", prob.Rule, prob.Source)
			if prob.OldReleases {
				f.Severity = report.Warning // current operators install it
			}
			out = append(out, f)
		}
	})
	return out
}

// ociSourceRefused: the artifact of p was not looked up because the
// operator cannot read p's spec.fetchConfig.oci, which oci-source reports.
func ociSourceRefused(a *model.Artifact) bool {
	return a.OCISource && a.Refused != "" && a.Repository == ""
}
