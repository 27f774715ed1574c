package bump

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/changes"
)

// crdDoc is a CRD document of proxmox clusters serving the versions given
// (the last one stored), with no conversion webhook: one the API server
// accepts (components-apply), so only the versions it serves change.
func crdDoc(versions ...string) string {
	var b strings.Builder
	b.WriteString("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: proxmoxclusters.infrastructure.cluster.x-k8s.io\nspec:\n  group: infrastructure.cluster.x-k8s.io\n  names:\n    kind: ProxmoxCluster\n    listKind: ProxmoxClusterList\n    plural: proxmoxclusters\n    singular: proxmoxcluster\n  scope: Namespaced\n  versions:\n")
	for i, v := range versions {
		storage := "false"
		if i == len(versions)-1 {
			storage = "true"
		}
		b.WriteString("  - name: " + v + "\n    served: true\n    storage: " + storage + "\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n")
	}
	return b.String()
}

// withCRD makes the stand-in's proxmox release carry the CRD document.
func (u *upstream) withCRD(version, doc string) {
	const repo = "ionos-cloud/cluster-api-provider-proxmox"
	u.Replace(repo, version, "infrastructure-components.yaml", append(components(repo, version, false), doc...))
}

// TestBumpBreakingRefused: a new release that stops serving a CRD version
// (no conversion webhook) is refused with the tree byte for byte as it
// was, dry run or not, naming the CRD and the version; with AllowBreaking
// it goes through and its result lists the changes.
func TestBumpBreakingRefused(t *testing.T) {
	u := newUpstream(t)
	u.withCRD("v0.7.7", crdDoc("v1alpha1", "v1alpha2"))
	u.add(release{repo: "ionos-cloud/cluster-api-provider-proxmox", version: "v0.7.9", compName: "infrastructure-components.yaml", series: series("0.6=v1beta1", "0.7=v1beta1")})
	u.withCRD("v0.7.9", crdDoc("v1alpha2"))
	root := fixtureTree(t, u)
	dir := pkgDir(root, "capi-providers-proxmox")
	before := snapshot(t, root)

	for _, dry := range []bool{true, false} {
		o := opts(u, "v0.7.9")
		o.TrustOnFirstUse, o.DryRun = true, dry
		_, err := Bump(context.Background(), dir, o)
		var be *BreakingError
		if !errors.As(err, &be) {
			t.Fatalf("dry run %v: err = %v, want a BreakingError", dry, err)
		}
		for _, want := range []string{"crd-version-removed", "CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io", "v1alpha1 is no longer served", "nothing was changed"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal does not say %q: %v", want, err)
			}
		}
		requireSame(t, before, snapshot(t, root))
	}

	o := opts(u, "v0.7.9")
	o.TrustOnFirstUse, o.AllowBreaking = true, true
	res, err := Bump(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	requireClean(t, root)
	out, _ := json.Marshal(res)
	var got struct{ Changes []changes.Change }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := []changes.Change{
		{Kind: changes.CRDVersionRemoved, Object: "CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io", Breaking: true},
		{Kind: changes.ImageChanged, Object: "Deployment/cluster-api-provider-proxmox-controller-manager"},
	}
	if len(got.Changes) != len(want) {
		t.Fatalf("changes %+v, want %+v", got.Changes, want)
	}
	for i, w := range want {
		g := got.Changes[i]
		if g.Kind != w.Kind || g.Object != w.Object || g.Breaking != w.Breaking || g.Detail == "" {
			t.Errorf("change %d = %+v, want %+v", i, g, w)
		}
	}
	if !strings.Contains(got.Changes[1].Detail, ":v0.7.7 -> ghcr.io/example/cluster-api-provider-proxmox:v0.7.9") {
		t.Errorf("image change: %+v", got.Changes[1])
	}
}

// TestBumpReportsChanges: a bump that breaks nothing still reports what
// changes (the image here).
func TestBumpReportsChanges(t *testing.T) {
	u := newUpstream(t)
	root := fixtureTree(t, u)
	o := opts(u, "v0.7.8")
	o.TrustOnFirstUse, o.DryRun = true, true
	res, err := Bump(context.Background(), pkgDir(root, "capi-providers-proxmox"), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Kind != changes.ImageChanged || len(changes.Breaking(res.Changes)) != 0 {
		t.Errorf("changes %+v, want one image-changed", res.Changes)
	}
}

// TestBumpContractNotServed: a release whose series declares a contract
// the core does not serve is refused by the safety report (breaking
// contract-changed, naming both contracts); AllowBreaking does not let it
// through, since the tree would then fail the contract check.
func TestBumpContractNotServed(t *testing.T) {
	u := newUpstream(t)
	root := fixtureTree(t, u)
	before := snapshot(t, root)
	o := opts(u, "v0.8.0")
	o.TrustOnFirstUse = true
	// The stand-in's v0.8.0 declares 0.8=v1beta2; the core v1.10.1 serves v1beta1.
	_, err := Bump(context.Background(), pkgDir(root, "capi-providers-proxmox"), o)
	var be *BreakingError
	if !errors.As(err, &be) || len(be.Breaking) != 1 || be.Breaking[0].Kind != changes.ContractChanged ||
		!strings.Contains(be.Breaking[0].Detail, "the core provider serves v1beta1, not v1beta2") {
		t.Fatalf("err = %v, want a breaking contract-changed", err)
	}
	o.AllowBreaking = true
	_, err = Bump(context.Background(), pkgDir(root, "capi-providers-proxmox"), o)
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "contract") {
		t.Fatalf("with AllowBreaking: err = %v, want the gate's contract refusal", err)
	}
	requireSame(t, before, snapshot(t, root))
}
