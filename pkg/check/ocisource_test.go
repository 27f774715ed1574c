package check

import (
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/operator"
	"github.com/pinseal/pinseal/pkg/report"
)

// ociTree is one package with a provider that installs from
// spec.fetchConfig.oci (line 9 of its template) and one that uses a
// selector.
func ociTree(mutate func(p *model.Provider)) *model.Tree {
	p := &model.Provider{Kind: "InfrastructureProvider", Name: "proxmox", Namespace: ns, Version: "v0.7.7-infraprovider-proxmox",
		FetchOCI: "registry.example.com/capi/infrastructure-proxmox:v0.7.7-infraprovider-proxmox", FetchOCILine: 9,
		Location: model.Location{File: "templates/providers.yaml", Line: 4}}
	if mutate != nil {
		mutate(p)
	}
	sel := &model.Provider{Kind: "CoreProvider", Name: "cluster-api", Namespace: ns, Version: "v1.10.1",
		Selector: &model.Selector{MatchLabels: map[string]string{"core": "cozy"}}}
	return &model.Tree{Packages: []*model.Package{{Path: "packages/system/capi-providers-proxmox", Namespace: ns,
		Providers: []*model.Provider{p, sel}}}}
}

// TestOCISource: the check reports each problem pkg/operator finds, one
// finding per rule, at the line of spec.fetchConfig.oci (else the
// provider's), naming the rule and the operator source; rules only old
// operators break are warnings.
func TestOCISource(t *testing.T) {
	if fs := ociSource(ociTree(nil)); len(fs) != 0 {
		t.Fatalf("clean: %+v", fs)
	}
	tests := []struct {
		name   string
		mutate func(p *model.Provider)
		rules  []operator.Rule
		line   int
		sev    report.Severity
	}{
		{"tag other than spec.version", func(p *model.Provider) { p.Version = "v0.7.8-infraprovider-proxmox" }, []operator.Rule{operator.RuleTagVersion}, 9, ""},
		{"no line known", func(p *model.Provider) { p.FetchOCILine = 0; p.FetchOCI = "https://" + p.FetchOCI }, []operator.Rule{operator.RuleScheme}, 4, ""},
		{"selector beside oci", func(p *model.Provider) { p.Selector = &model.Selector{} }, []operator.Rule{operator.RuleExclusive}, 9, ""},
		{"port and no tag", func(p *model.Provider) { p.FetchOCI = "registry.example.com:5000/capi/infrastructure-proxmox" }, []operator.Rule{operator.RulePortNoTag}, 9, report.Warning},
		{"two rules", func(p *model.Provider) { p.FetchURL = "https://example.com"; p.Version = "latest" }, []operator.Rule{operator.RuleExclusive, operator.RuleTagVersion, operator.RuleVersion}, 9, ""},
	}
	for _, tc := range tests {
		fs := ociSource(ociTree(tc.mutate))
		if len(fs) != len(tc.rules) {
			t.Errorf("%s: %d findings, want %v: %+v", tc.name, len(fs), tc.rules, fs)
			continue
		}
		for i, f := range fs {
			if f.Check != OCISource || f.Provider != "InfrastructureProvider/proxmox" || f.Package != "packages/system/capi-providers-proxmox" ||
				f.File != "packages/system/capi-providers-proxmox/templates/providers.yaml" || f.Line != tc.line || f.Severity != tc.sev ||
				!strings.Contains(f.Detail, "operator rule "+string(tc.rules[i])+", read from cluster-api-operator") || f.Hint == "" ||
				!strings.HasPrefix(f.Message, "InfrastructureProvider/proxmox: spec.fetchConfig.oci ") {
				t.Errorf("%s: finding %d %+v, want rule %s at line %d", tc.name, i, f, tc.rules[i], tc.line)
			}
		}
	}
}
