package check

import (
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/model"
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

// TestOCISource: the check reports each problem internal/operator finds, one
// finding per rule, at the line of spec.fetchConfig.oci (else the
// provider's), naming the rule and the operator source; rules only old
// operators break are warnings.
func TestOCISource(t *testing.T) {
	if fs := ociSource(NewInput(ociTree(nil))); len(fs) != 0 {
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
		fs := ociSource(NewInput(ociTree(tc.mutate)))
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

// TestOCISourcePreloaded: ConfigMaps labelled as the operator's own store
// of the provider's release (as `clusterctl operator preload` writes them)
// are installed instead of the artifact: one is a warning, two an error;
// one for another release, type or namespace is nothing.
func TestOCISourcePreloaded(t *testing.T) {
	store := func(typ, version, namespace string) *model.ConfigMap {
		return &model.ConfigMap{Name: typ + "-proxmox-" + version, Namespace: namespace,
			Labels:   operator.StoreLabels(typ, "proxmox", version),
			Location: model.Location{File: "templates/preloaded.yaml", Line: 1}}
	}
	const release = "v0.7.7-infraprovider-proxmox"
	tests := []struct {
		name string
		cms  []*model.ConfigMap
		sev  report.Severity // "": the policy's, error by default
		want string          // "": no finding
	}{
		{"one", []*model.ConfigMap{store("infrastructure", release, ns)}, report.Warning,
			`ConfigMap "infrastructure-proxmox-` + release + `" (packages/system/capi-providers-proxmox/templates/preloaded.yaml:1) carries the labels`},
		{"two", []*model.ConfigMap{store("infrastructure", release, ns), store("infrastructure", release, ns)}, "", "more than one"},
		{"another release", []*model.ConfigMap{store("infrastructure", "v0.7.6-infraprovider-proxmox", ns)}, "", ""},
		{"another type", []*model.ConfigMap{store("bootstrap", release, ns)}, "", ""},
		{"another namespace", []*model.ConfigMap{store("infrastructure", release, "other")}, "", ""},
	}
	for _, tc := range tests {
		tree := ociTree(nil)
		tree.Packages[0].ConfigMaps = tc.cms
		fs := ociSource(NewInput(tree))
		if tc.want == "" {
			if len(fs) != 0 {
				t.Errorf("%s: %+v", tc.name, fs)
			}
			continue
		}
		if len(fs) != 1 || fs[0].Severity != tc.sev || !strings.Contains(fs[0].Message, tc.want) ||
			!strings.Contains(fs[0].Detail, "operator rule preloaded,") || fs[0].Line != 9 || fs[0].Hint == "" {
			t.Errorf("%s: %+v, want one %s finding with %q", tc.name, fs, tc.sev, tc.want)
		}
	}
}
