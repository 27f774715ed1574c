package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/pin"
)

// rel is a newer release whose metadata says contract (""= unreadable,
// with why) and which carries the assets named.
func rel(tag, contract string, assets ...string) outdated.Release {
	r := outdated.Release{Tag: tag, Contract: contract}
	if contract == "" {
		r.ContractError = "the metadata.yaml of " + tag + ": no releaseSeries entry"
	}
	for _, a := range assets {
		digest := "sha256:" + strings.Repeat(fmt.Sprintf("%x", len(a)%16), 64)
		if strings.HasSuffix(a, "!") { // no digest given
			a, digest = strings.TrimSuffix(a, "!"), ""
		}
		r.Assets = append(r.Assets, outdated.Asset{Name: a, Digest: digest})
	}
	return r
}

// provider is a provider of the tree under /t at version, pinned to the
// release's files of repo.
func provider(id, pkg, repo, ver, contract string, files []string, newer ...outdated.Release) outdated.Provider {
	t := &bump.Target{Version: ver}
	for _, f := range files {
		t.Sources = append(t.Sources, pin.Source{URL: "https://github.com/" + repo + "/releases/download/" + ver + "/" + f, SHA256: strings.Repeat("0", 64)})
	}
	return outdated.Provider{Package: pkg, Root: "/t", Provider: id, Version: ver, Release: ver, Repo: repo, Contract: contract, Newer: newer, Target: t}
}

const (
	capi   = "kubernetes-sigs/cluster-api"
	capmox = "ionos-cloud/cluster-api-provider-proxmox"
	capk   = "kubernetes-sigs/cluster-api-provider-kubevirt"
)

var (
	coreFiles = []string{"core-components.yaml", "metadata.yaml"}
	infra     = []string{"infrastructure-components.yaml", "metadata.yaml"}
)

func report(core outdated.Provider, others ...outdated.Provider) *outdated.Report {
	rep := &outdated.Report{Providers: append([]outdated.Provider{core}, others...)}
	rep.Core = &outdated.Core{Provider: core.Provider, Version: core.Version, Contract: core.Contract, Serves: operator.Served(core.Version, core.Contract)}
	return rep
}

func summary(pl *Plan) string {
	var b strings.Builder
	for _, s := range pl.Steps {
		fmt.Fprintf(&b, "%s %s->%s; ", s.Provider, s.From, s.To)
	}
	for _, x := range pl.Blocked {
		fmt.Fprintf(&b, "blocked %s %s; ", x.Provider, x.Release)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// TestCoreFirst: proxmox v0.9.1 needs v1beta2, which only a v1.11 core
// serves, and v1.11 still serves kubevirt's v1beta1: the core moves
// first, then proxmox.
func TestCoreFirst(t *testing.T) {
	pl := Make(report(
		provider("CoreProvider/cluster-api", "core", capi, "v1.10.1", "v1beta1", coreFiles,
			rel("v1.11.1", "v1beta2", coreFiles...), rel("v1.10.2", "v1beta1", coreFiles...)),
		provider("InfrastructureProvider/proxmox", "infra", capmox, "v0.7.7", "v1beta1", infra,
			rel("v0.9.1", "v1beta2", infra...), rel("v0.7.8", "v1beta1", infra...)),
		provider("InfrastructureProvider/kubevirt", "infra", capk, "v0.1.9", "v1beta1", infra),
	), "")
	if got := summary(pl); got != "CoreProvider/cluster-api v1.10.1->v1.11.1; InfrastructureProvider/proxmox v0.7.7->v0.9.1" {
		t.Fatalf("plan: %s", got)
	}
	core := pl.Steps[0]
	if !strings.HasPrefix(core.Why, "core first: v1.11.1 serves v1beta2, v1beta1, which InfrastructureProvider/proxmox v0.9.1 (v1beta2) needs") {
		t.Errorf("why: %s", core.Why)
	}
	want := "builder bump /t/core --provider CoreProvider/cluster-api --to v1.11.1 --tree /t --sha256 https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.11.1/core-components.yaml=" + strings.Repeat("4", 64) +
		" --sha256 https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.11.1/metadata.yaml=" + strings.Repeat("d", 64)
	if core.Command != want {
		t.Errorf("command:\n%s\nwant\n%s", core.Command, want)
	}
	if pl.Steps[1].Contract != "v1beta2" || !strings.Contains(pl.Steps[1].Why, "core v1.11.1 serves") {
		t.Errorf("proxmox step: %+v", pl.Steps[1])
	}
}

// TestBlockedContract: no core release serves v1beta2; proxmox stops at
// v0.7.8 and v0.9.1 is blocked with the reason.
func TestBlockedContract(t *testing.T) {
	pl := Make(report(
		provider("CoreProvider/cluster-api", "core", capi, "v1.10.1", "v1beta1", coreFiles, rel("v1.10.2", "v1beta1", coreFiles...)),
		provider("InfrastructureProvider/proxmox", "infra", capmox, "v0.7.7", "v1beta1", infra,
			rel("v0.9.1", "v1beta2", infra...), rel("v0.9.0", ""), rel("v0.8.0", "v1beta2", "metadata.yaml"), rel("v0.7.8", "v1beta1", infra...)),
	), "")
	if got := summary(pl); got != "CoreProvider/cluster-api v1.10.1->v1.10.2; InfrastructureProvider/proxmox v0.7.7->v0.7.8; blocked InfrastructureProvider/proxmox v0.9.1; blocked InfrastructureProvider/proxmox v0.9.0; blocked InfrastructureProvider/proxmox v0.8.0" {
		t.Fatalf("plan: %s", got)
	}
	for i, want := range []string{
		"v0.9.1 needs contract v1beta2; core v1.10.2 (the newest the plan reaches) serves v1beta1",
		"contract unknown: the metadata.yaml of v0.9.0: no releaseSeries entry",
		"release v0.8.0 has no asset infrastructure-components.yaml, which the pin downloads",
	} {
		if !strings.HasPrefix(pl.Blocked[i].Reason, want) {
			t.Errorf("blocked %s: %q, want %q", pl.Blocked[i].Release, pl.Blocked[i].Reason, want)
		}
	}
}

// TestCoreKeepsProvidersServed: a v1.16 core no longer serves v1beta1,
// and kubevirt has no newer release: the core stops at v1.15.
func TestCoreKeepsProvidersServed(t *testing.T) {
	pl := Make(report(
		provider("CoreProvider/cluster-api", "core", capi, "v1.13.0", "v1beta2", coreFiles,
			rel("v1.16.0", "v1beta2", coreFiles...), rel("v1.15.2", "v1beta2", coreFiles...)),
		provider("InfrastructureProvider/kubevirt", "infra", capk, "v0.1.9", "v1beta1", infra),
	), "")
	if got := summary(pl); got != "CoreProvider/cluster-api v1.13.0->v1.15.2; blocked CoreProvider/cluster-api v1.16.0" {
		t.Fatalf("plan: %s", got)
	}
	if r := pl.Blocked[0].Reason; !strings.Contains(r, "InfrastructureProvider/kubevirt v0.1.9 (v1beta1)") {
		t.Errorf("reason: %s", r)
	}
	// With a v1beta2 kubevirt release the provider moves first, then the core.
	pl = Make(report(
		provider("CoreProvider/cluster-api", "core", capi, "v1.13.0", "v1beta2", coreFiles, rel("v1.16.0", "v1beta2", coreFiles...)),
		provider("InfrastructureProvider/kubevirt", "infra", capk, "v0.1.9", "v1beta1", infra, rel("v0.2.0", "v1beta2", infra...)),
	), "")
	if got := summary(pl); got != "InfrastructureProvider/kubevirt v0.1.9->v0.2.0; CoreProvider/cluster-api v1.13.0->v1.16.0" {
		t.Fatalf("plan: %s", got)
	}
}

// TestMinorSkip: clusterctl skips at most three minors of the core from
// v1.10 on: v1.10 -> v1.14 goes through v1.13; with nothing in between
// it is blocked.
func TestMinorSkip(t *testing.T) {
	pl := Make(report(provider("CoreProvider/cluster-api", "core", capi, "v1.10.1", "v1beta1", coreFiles,
		rel("v1.14.0", "v1beta2", coreFiles...), rel("v1.13.5", "v1beta2", coreFiles...), rel("v1.12.0", "v1beta2", coreFiles...))), "")
	if got := summary(pl); got != "CoreProvider/cluster-api v1.10.1->v1.13.5; CoreProvider/cluster-api v1.13.5->v1.14.0" {
		t.Fatalf("plan: %s", got)
	}
	if !strings.Contains(pl.Steps[0].Why, "on the way to v1.14.0") {
		t.Errorf("why: %s", pl.Steps[0].Why)
	}
	pl = Make(report(provider("CoreProvider/cluster-api", "core", capi, "v1.10.1", "v1beta1", coreFiles, rel("v1.14.0", "v1beta2", coreFiles...))), "")
	if got := summary(pl); got != "blocked CoreProvider/cluster-api v1.14.0" || !strings.Contains(pl.Blocked[0].Reason, "skips at most 3 minor versions") {
		t.Fatalf("plan: %s %+v", got, pl.Blocked)
	}
	// Before v1.10 clusterctl does not bound the skip.
	pl = Make(report(provider("CoreProvider/cluster-api", "core", capi, "v1.8.1", "v1beta1", coreFiles, rel("v1.14.0", "v1beta2", coreFiles...))), "")
	if got := summary(pl); got != "CoreProvider/cluster-api v1.8.1->v1.14.0" {
		t.Fatalf("plan: %s", got)
	}
}

// TestTrustOnFirstUse: an asset the API gives no digest for is trusted on
// first use, and the step says so.
func TestTrustOnFirstUse(t *testing.T) {
	pl := Make(report(
		provider("CoreProvider/cluster-api", "core", capi, "v1.10.1", "v1beta1", coreFiles),
		provider("InfrastructureProvider/proxmox", "infra", capmox, "v0.7.7", "v1beta1", infra, rel("v0.7.8", "v1beta1", "infrastructure-components.yaml!", "metadata.yaml")),
	), "pinseal-builder")
	if len(pl.Steps) != 1 || !strings.HasSuffix(pl.Steps[0].Command, " --trust-on-first-use") || !strings.HasPrefix(pl.Steps[0].Command, "pinseal-builder bump ") ||
		strings.Contains(pl.Steps[0].Command, "infrastructure-components.yaml=") || !strings.Contains(pl.Steps[0].Why, "trusts it on first use") {
		t.Fatalf("%+v", pl.Steps)
	}
}

// TestNoCore: without a core provider nothing can be judged.
func TestNoCore(t *testing.T) {
	rep := &outdated.Report{Providers: []outdated.Provider{provider("InfrastructureProvider/proxmox", "infra", capmox, "v0.7.7", "v1beta1", infra, rel("v0.7.8", "v1beta1", infra...))}}
	pl := Make(rep, "")
	if len(pl.Steps) != 0 || len(pl.Blocked) != 1 || !strings.Contains(pl.Blocked[0].Reason, "no core provider") {
		t.Fatalf("%+v", pl)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"a/b-c.yaml": "a/b-c.yaml", "my dir": "'my dir'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestKubeadmSkip: the kubeadm bootstrap provider is bound like the core;
// another provider of the same versions is not.
func TestKubeadmSkip(t *testing.T) {
	bs := []string{"bootstrap-components.yaml", "metadata.yaml"}
	pl := Make(report(
		provider("CoreProvider/cluster-api", "core", capi, "v1.14.0", "v1beta2", coreFiles),
		provider("BootstrapProvider/kubeadm", "bootstrap", capi, "v1.10.1", "v1beta1", bs, rel("v1.14.0", "v1beta2", bs...), rel("v1.12.2", "v1beta2", bs...)),
		provider("BootstrapProvider/talos", "talos", "siderolabs/cluster-api-bootstrap-provider-talos", "v1.10.1", "v1beta1", bs, rel("v1.14.0", "v1beta2", bs...), rel("v1.12.2", "v1beta2", bs...)),
	), "")
	if got := summary(pl); got != "BootstrapProvider/kubeadm v1.10.1->v1.12.2; BootstrapProvider/talos v1.10.1->v1.14.0; BootstrapProvider/kubeadm v1.12.2->v1.14.0" {
		t.Fatalf("plan: %s", got)
	}
	if !strings.Contains(pl.Steps[0].Why, "on the way to v1.14.0") {
		t.Errorf("why: %s", pl.Steps[0].Why)
	}
}

// TestTreeOf: a package under another DIR than the core's is bumped with
// the directory holding both as --tree.
func TestTreeOf(t *testing.T) {
	core := provider("CoreProvider/cluster-api", "capi-providers-core", capi, "v1.10.1", "v1beta1", coreFiles)
	core.Root = "/t/packages/system"
	px := provider("InfrastructureProvider/proxmox", "capi-providers-infraprovider", capmox, "v0.7.7", "v1beta1", infra, rel("v0.7.8", "v1beta1", infra...))
	px.Root = "/t/packages/extra"
	pl := Make(report(core, px), "")
	if len(pl.Steps) != 1 || !strings.Contains(pl.Steps[0].Command, " --tree /t/packages --") {
		t.Fatalf("%+v", pl.Steps)
	}
}
