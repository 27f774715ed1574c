package plan

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/changes"
	"github.com/pinseal/pinseal/pkg/pin"
)

// capmoxUpstream is the upstream capmox v0.7.7 components the fixture's
// package vendors (before its patch).
func capmoxUpstream(t *testing.T) []byte {
	t.Helper()
	for _, p := range fixture.CleanPackages() {
		for _, pr := range p.Providers {
			if pr.Kind == "InfrastructureProvider" && pr.Name == "proxmox" {
				return fixture.Components(pr)
			}
		}
	}
	t.Fatal("the fixture has no capmox")
	return nil
}

// dropServed is comp with its first served CRD version no longer served
// (the ProxmoxCluster CRD's v1alpha1; it has no conversion webhook).
func dropServed(t *testing.T, comp []byte) []byte {
	t.Helper()
	out := bytes.Replace(comp, []byte("\n    served: true\n"), []byte("\n    served: false\n"), 1)
	if bytes.Equal(out, comp) {
		t.Fatal("no served CRD version to drop")
	}
	return out
}

// safetyAPI serves the core v1.10.1 and capmox v0.7.9 (drops a served CRD
// version) and v0.7.8 (a new image only), with comp8 as v0.7.8's
// components asset.
func safetyAPI(t *testing.T, comp8 releaseapi.File) *releaseapi.Server {
	t.Helper()
	comp := capmoxUpstream(t)
	meta := releaseapi.File{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}
	api := releaseapi.New(t)
	api.Add(capi, releaseapi.Release{Tag: "v1.10.1", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("1.10=v1beta1")}}})
	api.Add(capmox,
		releaseapi.Release{Tag: "v0.7.9", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: dropServed(t, bytes.ReplaceAll(comp, []byte(":v0.7.7"), []byte(":v0.7.9")))}, meta}},
		releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{comp8, meta}},
	)
	return api
}

func capmox8(t *testing.T) releaseapi.File {
	return releaseapi.File{Name: "infrastructure-components.yaml", Data: bytes.ReplaceAll(capmoxUpstream(t), []byte(":v0.7.7"), []byte(":v0.7.8"))}
}

// TestCheckBreakingBlocked: v0.7.9 stops serving a CRD version with no
// conversion webhook, so it is blocked with that change as the reason and
// the plan stops at v0.7.8, whose step lists its harmless change (the
// new image) and carries no --allow-breaking.
func TestCheckBreakingBlocked(t *testing.T) {
	api := safetyAPI(t, capmox8(t))
	opts := Options{Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}}
	pl, err := FromUpstream(context.Background(), []string{fixture.Root()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "InfrastructureProvider/proxmox v0.7.7->v0.7.8; blocked InfrastructureProvider/proxmox v0.7.9" {
		t.Fatalf("plan: %s", got)
	}
	r := pl.Blocked[0].Reason
	for _, want := range []string{"v0.7.9 breaks what clusters run today", "crd-version-removed CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io", "version v1beta1 is no longer served", "--allow-breaking"} {
		if !strings.Contains(r, want) {
			t.Errorf("reason %q lacks %q", r, want)
		}
	}
	s := pl.Steps[0]
	if len(s.Changes) != 1 || s.Changes[0].Kind != changes.ImageChanged || s.Changes[0].Breaking || !strings.Contains(s.Changes[0].Detail, "v0.7.8") {
		t.Errorf("changes of the step to v0.7.8: %+v", s.Changes)
	}
	if strings.Contains(s.Command, "--allow-breaking") || strings.Contains(s.Why, "safety report") {
		t.Errorf("step: %+v", s)
	}

	// Allowed: the plan goes to v0.7.9 with the change, and says so.
	opts.AllowBreaking = true
	if pl, err = FromUpstream(context.Background(), []string{fixture.Root()}, opts); err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "InfrastructureProvider/proxmox v0.7.7->v0.7.9" {
		t.Fatalf("plan --allow-breaking: %s", got)
	}
	s = pl.Steps[0]
	if bad := changes.Breaking(s.Changes); len(bad) != 1 || bad[0].Kind != changes.CRDVersionRemoved ||
		!strings.HasSuffix(s.Command, " --allow-breaking") || !strings.Contains(s.Why, "breaking, allowed by --allow-breaking: crd-version-removed") {
		t.Errorf("step: %+v", s)
	}
}

// TestCheckComponentsHostNotAllowed: a components asset on a host not
// allowed is never asked for; the step stands (the bump downloads
// through its own mirror), without a report, and why says so.
func TestCheckComponentsHostNotAllowed(t *testing.T) {
	watch := netwatch.Listen(t)
	f := capmox8(t)
	f.URL = watch.URL("/components")
	api := safetyAPI(t, f)
	pl, err := FromUpstream(context.Background(), []string{fixture.Root()}, Options{Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "InfrastructureProvider/proxmox v0.7.7->v0.7.8; blocked InfrastructureProvider/proxmox v0.7.9" {
		t.Fatalf("plan: %s", got)
	}
	if s := pl.Steps[0]; s.Changes != nil || !strings.Contains(s.Why, "the safety report could not be made: the infrastructure-components.yaml asset of v0.7.8 is at "+f.URL+": host not allowed") {
		t.Errorf("step: %+v", s)
	}
	if n := watch.Count(); n != 0 {
		t.Errorf("%d connection(s) to a host not allowed", n)
	}
}

// TestComponentsAssetMissing: a components file the pin downloads from
// elsewhere than the release's assets gives no report, and says so; one
// the release lists is the asset.
func TestComponentsAssetMissing(t *testing.T) {
	p := provider("InfrastructureProvider/proxmox", "infra", capmox, "v0.7.7", "v1beta1", infra)
	p.Target.Components = "files/infrastructure-components.yaml"
	p.Target.Sources[0].To = p.Target.Components
	r := rel("v0.7.8", "v1beta1", infra...)
	if a, why := componentsAsset(&p, r); why != "" || a.Name != "infrastructure-components.yaml" {
		t.Errorf("asset %+v, why %q", a, why)
	}
	p.Target.Sources[0] = pin.Source{URL: "https://example.com/capmox/v0.7.7/infrastructure-components.yaml", To: p.Target.Components}
	if _, why := componentsAsset(&p, r); !strings.Contains(why, "(https://example.com/capmox/v0.7.8/infrastructure-components.yaml) is not an asset the releases API lists") {
		t.Errorf("why %q", why)
	}
	p.Target = &bump.Target{Version: "v0.7.7"}
	if _, why := componentsAsset(&p, r); why != "the pin names no components source" {
		t.Errorf("why %q", why)
	}
}

// TestCheckPatchDoesNotApply: the package's patch does not apply to
// v0.7.8's components, so its bump would fail: v0.7.8 is blocked, saying
// so, whatever --allow-breaking says.
func TestCheckPatchDoesNotApply(t *testing.T) {
	comp := capmox8(t)
	if comp.Data = bytes.Replace(comp.Data, []byte("        - containerPort: 9440\n"), nil, 1); bytes.Equal(comp.Data, capmox8(t).Data) {
		t.Fatal("the patch's context is not in the components")
	}
	api := safetyAPI(t, comp)
	pl, err := FromUpstream(context.Background(), []string{fixture.Root()}, Options{AllowBreaking: true, Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}})
	if err != nil {
		t.Fatal(err)
	}
	// v0.7.9 (breaking, allowed) is still a step: the patch applies to it.
	if got := summary(pl); got != "InfrastructureProvider/proxmox v0.7.7->v0.7.9" {
		t.Fatalf("plan: %s", got)
	}
	api = safetyAPI(t, comp)
	if pl, err = FromUpstream(context.Background(), []string{fixture.Root()}, Options{Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}}); err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "blocked InfrastructureProvider/proxmox v0.7.9; blocked InfrastructureProvider/proxmox v0.7.8" {
		t.Fatalf("plan: %s", got)
	}
	if r := pl.Blocked[1].Reason; !strings.Contains(r, "the package's patch patches/0001-capmox-startup-probe.diff does not apply to the new components") || !strings.Contains(r, "`builder bump` to v0.7.8 would fail") {
		t.Errorf("reason: %s", r)
	}
}

// TestCheckComponentsDigestMismatch: a components asset whose bytes are
// not those the API's digest names would fail the printed command's
// --sha256: the release is blocked, saying so.
func TestCheckComponentsDigestMismatch(t *testing.T) {
	comp := capmox8(t)
	comp.WrongDigest = true
	api := safetyAPI(t, comp)
	pl, err := FromUpstream(context.Background(), []string{fixture.Root()}, Options{Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "blocked InfrastructureProvider/proxmox v0.7.9; blocked InfrastructureProvider/proxmox v0.7.8" {
		t.Fatalf("plan: %s", got)
	}
	if r := pl.Blocked[1].Reason; !strings.Contains(r, "the infrastructure-components.yaml asset of v0.7.8 does not match the digest the API gives") || !strings.Contains(r, "--sha256` would refuse") {
		t.Errorf("reason: %s", r)
	}
}

// TestCheckHopReport: the core goes v1.10.1 -> v1.13.5 -> v1.14.0
// (clusterctl skips at most three minors); the second step's report
// compares v1.13.5's assets, not the tree's files, with v1.14.0's, whose
// CRD stops serving a version: blocked, and planned with
// --allow-breaking.
func TestCheckHopReport(t *testing.T) {
	vendored, err := os.ReadFile(filepath.Join(fixture.Root(), "packages", "system", "capi-providers-core", "files", "core-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	core := func(tag string, drop bool) releaseapi.Release {
		comp := bytes.ReplaceAll(vendored, []byte(":v1.10.1"), []byte(":"+tag))
		if drop {
			comp = dropServed(t, comp)
		}
		return releaseapi.Release{Tag: tag, Files: []releaseapi.File{
			{Name: "core-components.yaml", Data: comp},
			{Name: "metadata.yaml", Data: releaseapi.Metadata("1.10=v1beta1", "1.13=v1beta2", "1.14=v1beta2")},
		}}
	}
	api := releaseapi.New(t)
	api.Add(capi, core("v1.14.0", true), core("v1.13.5", false))
	opts := Options{Outdated: outdated.Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}}}
	pl, err := FromUpstream(context.Background(), []string{fixture.Root()}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "CoreProvider/cluster-api v1.10.1->v1.13.5; blocked CoreProvider/cluster-api v1.14.0" ||
		!strings.Contains(pl.Blocked[0].Reason, "v1.14.0 breaks what clusters run today: crd-version-removed") {
		t.Fatalf("plan: %s %+v", got, pl.Blocked)
	}
	opts.AllowBreaking = true
	if pl, err = FromUpstream(context.Background(), []string{fixture.Root()}, opts); err != nil {
		t.Fatal(err)
	}
	if got := summary(pl); got != "CoreProvider/cluster-api v1.10.1->v1.13.5; CoreProvider/cluster-api v1.13.5->v1.14.0" {
		t.Fatalf("plan --allow-breaking: %s", got)
	}
	var details []string
	for _, c := range pl.Steps[1].Changes {
		details = append(details, c.Kind+": "+c.Detail)
	}
	got := strings.Join(details, "\n")
	if !strings.Contains(got, "crd-version-removed") || !strings.Contains(got, "cluster-api-controller:v1.13.5 -> registry.k8s.io/cluster-api/cluster-api-controller:v1.14.0") || strings.Contains(got, "contract-changed") {
		t.Errorf("changes of v1.13.5 -> v1.14.0:\n%s", got)
	}
	if strings.Contains(pl.Steps[0].Command, "--allow-breaking") || !strings.HasSuffix(pl.Steps[1].Command, " --allow-breaking") {
		t.Errorf("commands: %s\n%s", pl.Steps[0].Command, pl.Steps[1].Command)
	}
}
