package check

import (
	"fmt"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// ociSource: every provider that installs from spec.fetchConfig.oci names
// it so that the cluster-api-operator can read it and fetches from it the
// release spec.version names. internal/operator holds the rules, each read from
// the operator's source; this needs no registry, so it runs offline, while
// oci-install judges the artifact the value names once a registry is
// given. Rules that only operators before v0.20.0 break are warnings.
func ociSource(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	providers(t, func(pkg *model.Package, p *model.Provider) {
		spec := operator.Spec{Kind: p.Kind, Name: p.Name, Version: p.Version,
			OCI: p.FetchOCI, URL: p.FetchURL, Selector: p.Selector != nil}
		probs := operator.Check(spec)
		if p.FetchOCI != "" && p.Selector == nil && p.FetchURL == "" && p.Version != "" {
			if prob := operator.Preloaded(p.Version, preloaded(in.Index, pkg, p)); prob != nil {
				probs = append(probs, *prob)
			}
		}
		for _, prob := range probs {
			loc := p.Location
			if p.FetchOCILine > 0 {
				loc.Line = p.FetchOCILine
			}
			f := newFinding(OCISource, pkg, p.ID(), loc,
				fmt.Sprintf("%s: spec.fetchConfig.oci %q: %s", p.ID(), p.FetchOCI, prob.Message), prob.Hint)
			f.Detail = fmt.Sprintf("operator rule %s, read from %s", prob.Rule, prob.Source)
			if prob.Warning {
				f.Severity = report.Warning
			}
			out = append(out, f)
		}
	})
	return out
}

// preloaded describes, as `"NAME" (FILE:LINE)`, the ConfigMaps of the
// tree labelled as the operator's own store of p's release
// (storeConfigMaps).
func preloaded(ix *Index, pkg *model.Package, p *model.Provider) []string {
	ms := storeConfigMaps(ix, pkg, p)
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = describe([]Match{m})
	}
	return out
}

// ociSourceRefused: the artifact of p was not looked up because the
// operator cannot read p's spec.fetchConfig.oci, which oci-source reports.
func ociSourceRefused(a *model.Artifact) bool {
	return a.OCISource && a.Refused != "" && a.Repository == ""
}
