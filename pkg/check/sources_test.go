package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestSourcesOfCleanTree: every provider of the clean model is vendored
// and pinned, and neither pin-missing nor contract says otherwise.
func TestSourcesOfCleanTree(t *testing.T) {
	tree := cleanTree()
	ix := NewIndex(tree)
	for _, pkg := range tree.Packages {
		for _, p := range pkg.Providers {
			if s := Source(ix, pkg, p); s.Kind != report.SourceVendored || !s.Pinned || !strings.Contains(s.Status, "SHA-256") {
				t.Errorf("%s: source %+v, want vendored and pinned", p.ID(), s)
			}
		}
	}
	if fs := append(pinMissing(NewInput(tree)), contract(NewInput(tree))...); len(fs) > 0 {
		t.Fatalf("clean tree: %+v", fs)
	}
}

// TestSourceMutations: each way a provider of the clean model stops
// installing bytes the tree holds turns pin-missing red alone, with one
// finding naming what the operator fetches; the contract check warns that
// the contract could not be checked wherever the metadata left the tree.
func TestSourceMutations(t *testing.T) {
	kubevirt := func(t *model.Tree) *model.Provider { return infra(t).Providers[1] }
	tests := []struct {
		name    string
		mutate  func(t *model.Tree)
		kind    string // the provider's source kind afterwards
		pinned  bool
		want    []string // in the pin-missing finding; none: no finding
		setting report.Setting
		// contract warnings expected, by provider
		contract []string
	}{
		{
			name:   "no fetchConfig: clusterctl's built-in list",
			mutate: func(t *model.Tree) { kubevirt(t).Selector = nil },
			kind:   report.SourceDefault,
			want: []string{"InfrastructureProvider/kubevirt", "clusterctl's built-in provider list (cluster-api v1.12.10)", "release v0.1.9-cozystack.0",
				"https://github.com/kubernetes-sigs/cluster-api-provider-kubevirt/releases/download/v0.1.9-cozystack.0/infrastructure-components.yaml",
				"https://github.com/kubernetes-sigs/cluster-api-provider-kubevirt/releases/download/v0.1.9-cozystack.0/metadata.yaml"},
			contract: []string{"InfrastructureProvider/kubevirt"},
		},
		{
			name: "no fetchConfig, a name clusterctl does not know",
			mutate: func(t *model.Tree) {
				kubevirt(t).Selector = nil
				kubevirt(t).Name = "kubevirt-cozystack"
				infra(t).Pins.File.Providers[1].Name = "kubevirt-cozystack"
			},
			kind:     report.SourceDefault,
			want:     []string{"has no InfrastructureProvider named \"kubevirt-cozystack\"", "UnknownProvider"},
			contract: []string{"InfrastructureProvider/kubevirt-cozystack"},
		},
		{
			name: "no fetchConfig, the operator's own store of the release in the tree",
			mutate: func(t *model.Tree) {
				kubevirt(t).Selector = nil
				cm := infra(t).ConfigMaps[1]
				for k, v := range map[string]string{"provider.cluster.x-k8s.io/version": "v0.1.9-cozystack.0", "provider.cluster.x-k8s.io/type": "infrastructure",
					"provider.cluster.x-k8s.io/name": "kubevirt", "managed-by.operator.cluster.x-k8s.io": "true"} {
					cm.Labels[k] = v
				}
			},
			kind: report.SourceVendored, pinned: true,
		},
		{
			name: "fetchConfig.url",
			mutate: func(t *model.Tree) {
				p := infra(t).Providers[0]
				p.Selector = nil
				p.FetchURL = "https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/latest/infrastructure-components.yaml"
			},
			kind:     report.SourceURL,
			want:     []string{"spec.fetchConfig.url", "https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7-infraprovider-proxmox/infrastructure-components.yaml"},
			contract: []string{"InfrastructureProvider/proxmox"},
		},
		{
			name: "fetchConfig.oci, offline",
			mutate: func(t *model.Tree) {
				kubevirt(t).Selector = nil
				kubevirt(t).FetchOCI = "mirror.example.com:5000/capi/kubevirt-components:v0.1.9-cozystack.0"
			},
			kind:     report.SourceOCI,
			want:     []string{"registry mirror.example.com:5000", "did not contact", "mirror.example.com:5000/capi/kubevirt-components:v0.1.9-cozystack.0"},
			setting:  report.SettingAllowRegistry,
			contract: []string{"InfrastructureProvider/kubevirt"},
		},
		{
			name: "fetchConfig.oci, read from the registry",
			mutate: func(t *model.Tree) {
				kubevirt(t).Selector = nil
				kubevirt(t).FetchOCI = "mirror.example.com/capi/kubevirt-components"
				kubevirt(t).Artifact = &model.Artifact{Ref: "mirror.example.com/capi/kubevirt-components:v0.1.9-cozystack.0", Repository: "mirror.example.com/capi/kubevirt-components", Found: true, Digest: "sha256:" + strings.Repeat("a", 64), OCISource: true}
			},
			kind: report.SourceOCI, pinned: true,
			contract: []string{"InfrastructureProvider/kubevirt"},
		},
		{
			name: "fetchConfig.oci on a registry not allowed: registry-digest says so",
			mutate: func(t *model.Tree) {
				kubevirt(t).Selector = nil
				kubevirt(t).FetchOCI = "mirror.example.com/capi/kubevirt-components"
				kubevirt(t).Artifact = &model.Artifact{Ref: "mirror.example.com/capi/kubevirt-components:v0.1.9-cozystack.0", Repository: "mirror.example.com/capi/kubevirt-components", OCISource: true, Refused: "registry mirror.example.com is not allowed"}
			},
			kind:     report.SourceOCI,
			contract: []string{"InfrastructureProvider/kubevirt"},
		},
		{
			name:     "the core provider with no fetchConfig: no contract can be checked",
			mutate:   func(t *model.Tree) { core(t).Providers[0].Selector = nil },
			kind:     report.SourceDefault,
			want:     []string{"https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1-core/core-components.yaml"},
			contract: []string{"CoreProvider/cluster-api", "InfrastructureProvider/kubevirt", "InfrastructureProvider/proxmox"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := cleanTree()
			tc.mutate(tree)
			var changed *model.Provider
			var in *model.Package
			for _, pkg := range tree.Packages {
				for _, p := range pkg.Providers {
					if p.Selector == nil {
						changed, in = p, pkg
					}
				}
			}
			s := Source(NewIndex(tree), in, changed)
			if s.Kind != tc.kind || s.Pinned != tc.pinned || s.Status == "" {
				t.Errorf("source %+v, want kind %s pinned %v", s, tc.kind, tc.pinned)
			}
			fs := pinMissing(NewInput(tree))
			if len(tc.want) == 0 {
				if len(fs) > 0 {
					t.Fatalf("pin-missing: %+v, want none", fs)
				}
			} else {
				if len(fs) != 1 {
					t.Fatalf("pin-missing: %+v, want one finding", fs)
				}
				f := fs[0]
				for _, w := range tc.want {
					if !strings.Contains(f.Message, w) {
						t.Errorf("pin-missing message lacks %q: %s", w, f.Message)
					}
				}
				if f.Provider != changed.ID() || f.File != in.Path+"/templates/providers.yaml" || f.Hint == "" {
					t.Errorf("pin-missing finding %+v: want provider %s at its object", f, changed.ID())
				}
				if tc.setting != "" && !slices.Contains(f.Settings, tc.setting) {
					t.Errorf("settings %q lack %q", f.Settings, tc.setting)
				}
			}
			var got []string
			for _, f := range contract(NewInput(tree)) {
				if f.Severity != report.Warning || !strings.Contains(f.Message, "could not be checked") || !strings.Contains(f.Message, "not in the tree") {
					t.Errorf("contract finding %+v: want a warning that it could not be checked", f)
				}
				got = append(got, f.Provider)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.contract) {
				t.Errorf("contract warnings for %q, want %q", got, tc.contract)
			}
			// The other checks stay as they were.
			for _, f := range runAll(tree) {
				if f.Check != PinMissing && f.Check != Contract && f.Check != OCISource {
					t.Errorf("%s went red too: %s", f.Check, f.Message)
				}
			}
		})
	}
}
