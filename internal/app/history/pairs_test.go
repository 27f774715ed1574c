package history

import (
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

// TestPairs: a provider is compared with the same provider (kind, name,
// namespace) in the same package at the base, else with the only one of
// it anywhere in the base (a package moved); with several elsewhere, or
// none, it is new.
func TestPairs(t *testing.T) {
	rel := func(pkg, provider, ns, version string) Release {
		return Release{Package: pkg, Provider: provider, Namespace: ns, Version: version, provider: place{pkg: &model.Package{Path: pkg}}}
	}
	base := &Snapshot{Releases: []Release{
		rel("a", "CoreProvider/cluster-api", "capi", "v1.10.0"),
		rel("x", "InfrastructureProvider/proxmox", "capi", "v0.7.0"),
		rel("y", "InfrastructureProvider/proxmox", "capi", "v0.8.1"),
		rel("z", "InfrastructureProvider/kubevirt", "other", "v0.1.0"),
	}}
	cur := &Snapshot{Releases: []Release{
		rel("moved", "CoreProvider/cluster-api", "capi", "v1.9.0"),    // only one at the base: paired
		rel("y", "InfrastructureProvider/proxmox", "capi", "v0.8.0"),  // same package: paired with y's
		rel("w", "InfrastructureProvider/proxmox", "capi", "v0.1.0"),  // two elsewhere: new
		rel("z", "InfrastructureProvider/kubevirt", "capi", "v0.0.1"), // another namespace: new
		rel("n", "BootstrapProvider/talos", "capi", "v0.0.1"),         // not at the base: new
	}}
	got := map[string]string{}
	pairs(base, cur, func(b, c Release) { got[c.Package] = b.Package })
	want := map[string]string{"moved": "a", "y": "y"}
	if len(got) != len(want) || got["moved"] != "a" || got["y"] != "y" {
		t.Fatalf("pairs %v, want %v", got, want)
	}
	fs := downgraded(base, cur)
	if len(fs) != 2 || fs[0].Package != "moved" || fs[1].Package != "y" || fs[1].Severity != "warning" {
		t.Fatalf("downgrades %+v, want moved (v1.10.0 -> v1.9.0, error) and y (v0.8.1 -> v0.8.0, a warning)", fs)
	}
	if fs[0].Severity != "" {
		t.Errorf("a minor downgrade carries severity %q; the policy sets it", fs[0].Severity)
	}
}
