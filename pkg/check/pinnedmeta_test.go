package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/metadata"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// ociVendored turns the clean model's kubevirt provider into what
// `builder vendor --to-oci` leaves: installed from spec.fetchConfig.oci,
// no ConfigMap, its components and metadata.yaml pinned and vendored
// (the metadata parsed from meta, as the loader does).
func ociVendored(t *testing.T, meta string) (*model.Tree, *model.LayoutRelease) {
	t.Helper()
	tree := cleanTree()
	pkg := infra(tree)
	p := pkg.Providers[1]
	p.Selector = nil
	p.FetchOCI = "mirror.example.com/capi/kubevirt-components"
	pkg.ConfigMaps = slices.DeleteFunc(pkg.ConfigMaps, func(cm *model.ConfigMap) bool { return cm.Name == p.Version })
	pkg.Layout = layout.Of(pkg)
	for _, r := range pkg.Layout.Releases {
		if r.Pin != nil && r.Pin.Name == p.Name && r.ConfigMap == nil {
			if r.Metadata == "" {
				t.Fatalf("layout release %+v has no metadata file", r)
			}
			r.PinnedMetadata = metadata.Parse([]byte(meta))
			return tree, r
		}
	}
	t.Fatalf("no pinned release of %s without a ConfigMap in the layout", p.ID())
	return nil, nil
}

// TestContractPinnedMetadata: a provider installed from fetchConfig.oci
// whose metadata.yaml the package pins and vendors has its contract
// checked from that file: no "could not be checked" warning when it
// declares a contract the core serves, an error naming the file when it
// declares another, a warning naming the file when it says nothing for
// the release.
func TestContractPinnedMetadata(t *testing.T) {
	const good = "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 1\n  contract: v1beta1\n"
	tree, _ := ociVendored(t, good)
	if fs := contract(NewInput(tree)); len(fs) > 0 {
		t.Fatalf("pinned metadata declaring a served contract: %+v", fs)
	}

	// Without the vendored metadata, the contract cannot be checked.
	tree, r := ociVendored(t, good)
	r.PinnedMetadata = nil
	fs := contract(NewInput(tree))
	if len(fs) != 1 || fs[0].Severity != report.Warning || !strings.Contains(fs[0].Message, "metadata.yaml is not in the tree") {
		t.Fatalf("no pinned metadata: %+v", fs)
	}

	tree, r = ociVendored(t, strings.Replace(good, "contract: v1beta1", "contract: v1alpha4", 1))
	fs = contract(NewInput(tree))
	// The severity is the catalog's (error), as for a ConfigMap's metadata.
	if len(fs) != 1 || fs[0].Severity == report.Warning || fs[0].Provider != "InfrastructureProvider/kubevirt" || fs[0].File != "packages/system/infra/"+r.Metadata ||
		!strings.Contains(fs[0].Message, "declares contract v1alpha4") || !strings.Contains(fs[0].Message, "serves v1beta1") {
		t.Fatalf("pinned metadata declaring another contract: %+v", fs)
	}

	tree, _ = ociVendored(t, strings.Replace(good, "minor: 1", "minor: 2", 1))
	fs = contract(NewInput(tree))
	if len(fs) != 1 || fs[0].Severity != report.Warning || !strings.Contains(fs[0].Message, "no releaseSeries with a contract for 0.1") {
		t.Fatalf("pinned metadata without the release's series: %+v", fs)
	}
}

// TestContractPinnedCoreMetadata: a core provider installed from
// fetchConfig.oci whose metadata.yaml its package pins and vendors serves
// the contract that file declares: the other providers are checked
// against it, and a core file that says nothing for its release is one
// warning naming it.
func TestContractPinnedCoreMetadata(t *testing.T) {
	vendorCore := func(meta string) *model.Tree {
		tree := cleanTree()
		pkg := core(tree)
		p := pkg.Providers[0]
		p.Selector = nil
		p.FetchOCI = "mirror.example.com/capi/core-cluster-api"
		pkg.ConfigMaps = nil
		pkg.Layout = layout.Of(pkg)
		for _, r := range pkg.Layout.Releases {
			if r.Pin != nil && r.ConfigMap == nil && r.Metadata != "" {
				r.PinnedMetadata = metadata.Parse([]byte(meta))
				return tree
			}
		}
		t.Fatal("no pinned core release without a ConfigMap in the layout")
		return nil
	}
	const meta = "releaseSeries:\n- major: 1\n  minor: 10\n  contract: v1beta1\n"
	if fs := contract(NewInput(vendorCore(meta))); len(fs) > 0 {
		t.Fatalf("pinned core metadata serving the providers' contract: %+v", fs)
	}
	// A core file declaring another contract: every provider's v1beta1 is
	// now red, so the core's contract was read from that file.
	fs := contract(NewInput(vendorCore(strings.Replace(meta, "v1beta1", "v1alpha4", 1))))
	if len(fs) != 2 || fs[0].Severity == report.Warning || !strings.Contains(fs[0].Message, "declares contract v1beta1") || !strings.Contains(fs[0].Message, "serves v1alpha4") {
		t.Fatalf("pinned core metadata declaring another contract: %+v", fs)
	}
	fs = contract(NewInput(vendorCore(strings.Replace(meta, "minor: 10", "minor: 9", 1))))
	if len(fs) != 1 || fs[0].Severity != report.Warning || fs[0].Provider != "CoreProvider/cluster-api" || !strings.Contains(fs[0].Message, "no releaseSeries with a contract for 1.10") {
		t.Fatalf("pinned core metadata without its series: %+v", fs)
	}
}
