package outdated

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

const (
	capi   = "kubernetes-sigs/cluster-api"
	capmox = "ionos-cloud/cluster-api-provider-proxmox"
)

// release is a stable release with a metadata.yaml asset listing series.
func release(tag string, series ...string) releaseapi.Release {
	return releaseapi.Release{Tag: tag, Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata(series...)}}}
}

// moving: Cluster API and capmox releases whose series move from v1beta1
// to v1beta2, as the real ones do (Cluster API v1.11, capmox v0.8).
func moving(api *releaseapi.Server) {
	api.Add(capi,
		releaseapi.Release{Tag: "v1.12.0-rc.0", Prerelease: true, Files: release("", "1.12=v1beta2").Files},
		release("v1.11.1", "1.10=v1beta1", "1.11=v1beta2"),
		release("v1.11.0", "1.10=v1beta1", "1.11=v1beta2"),
		release("v1.10.2", "1.9=v1beta1", "1.10=v1beta1"),
		release("v1.10.1", "1.9=v1beta1", "1.10=v1beta1"),
	)
	api.Add(capmox,
		release("v0.9.1", "0.7=v1beta1", "0.8=v1beta2", "0.9=v1beta2"),
		release("v0.9.0", "0.7=v1beta1", "0.8=v1beta2"), // forgot its own series
		releaseapi.Release{Tag: "v0.8.1"},               // no metadata.yaml asset
		releaseapi.Release{Tag: "v0.8.0", Files: []releaseapi.File{{Name: "metadata.yaml", Data: []byte("releaseSeries: [")}}},
		release("v0.7.8", "0.6=v1beta1", "0.7=v1beta1"),
		release("v0.7.7", "0.6=v1beta1", "0.7=v1beta1"),
	)
}

func byProvider(rep *Report) map[string]*Provider {
	out := map[string]*Provider{}
	for i := range rep.Providers {
		out[rep.Providers[i].Provider] = &rep.Providers[i]
	}
	return out
}

func newerOf(p *Provider, tag string) Release {
	for _, r := range p.Newer {
		if r.Tag == tag {
			return r
		}
	}
	return Release{}
}

// TestContracts: each newer stable release's contract comes from its own
// metadata.yaml asset, judged against the tree's core v1.10.1 (v1beta1).
func TestContracts(t *testing.T) {
	api := releaseapi.New(t)
	api.Token = "tok"
	moving(api)
	rep, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: api.URL(), Token: "tok", AllowHosts: []string{api.ObjectsHost()}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Core == nil || rep.Core.Version != "v1.10.1" || strings.Join(rep.Core.Serves, ",") != "v1beta1" {
		t.Fatalf("core = %+v", rep.Core)
	}
	by := byProvider(rep)
	px := by["InfrastructureProvider/proxmox"]
	if px.Contract != "v1beta1" || px.NewestCompatible != "v0.7.8" {
		t.Errorf("proxmox: contract %q newest compatible %q", px.Contract, px.NewestCompatible)
	}
	for tag, want := range map[string]string{
		"v0.9.1": "v1beta2 false",
		"v0.9.0": "no releaseSeries entry for 0.9",
		"v0.8.1": "has no metadata.yaml asset",
		"v0.8.0": "does not parse",
		"v0.7.8": "v1beta1 true",
	} {
		r := newerOf(px, tag)
		got := r.ContractError
		if r.Contract != "" {
			got = fmt.Sprintf("%s %v", r.Contract, *r.Compatible)
		}
		if !strings.Contains(got, want) || r.Compatible == nil {
			t.Errorf("%s: %q (compatible %v), want %q", tag, got, r.Compatible, want)
		}
	}
	if got := rep.Summary(px); got != "v0.9.1 needs contract v1beta2; core v1.10.1 serves v1beta1; newest compatible: v0.7.8 (core v1.11.1 would serve it and every provider: see builder plan)" {
		t.Errorf("summary = %q", got)
	}
	// The core's v1.11 releases serve v1beta2 and still v1beta1: every
	// provider of the tree stays served. The pre-release is not read.
	core := by["CoreProvider/cluster-api"]
	if core.NewestCompatible != "v1.11.1" || newerOf(core, "v1.11.0").Contract != "v1beta2" || rep.Summary(core) != "" {
		t.Errorf("core: %+v", core)
	}
	if len(core.PreReleases) != 1 || core.PreReleases[0].Contract != "" {
		t.Errorf("pre-release: %+v", core.PreReleases)
	}
	for _, r := range api.Requests() {
		if r == "/repos/"+capi+"/releases/assets/1000" {
			t.Errorf("the pre-release's metadata was read: %s", r)
		}
	}
	// The token went to the API host only, never to the objects host.
	for _, a := range api.ObjectAuth() {
		if a != "" {
			t.Errorf("objects host received Authorization %q", a)
		}
	}
}

// TestContractsPagination: releases spread over pages are all judged.
func TestContractsPagination(t *testing.T) {
	api := releaseapi.New(t)
	api.Add(capi, release("v1.11.0", "1.11=v1beta2"))
	for i := 0; i < 230; i++ {
		api.Add(capi, releaseapi.Release{Tag: fmt.Sprintf("v0.%d.%d", i/10, i%10)})
	}
	api.Add(capi, release("v1.10.2", "1.10=v1beta1"), release("v1.10.1", "1.10=v1beta1")) // page 3
	rep, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}})
	if err != nil {
		t.Fatal(err)
	}
	core := byProvider(rep)["CoreProvider/cluster-api"]
	if tags(core.Newer) != "v1.11.0 v1.10.2" || newerOf(core, "v1.10.2").Contract != "v1beta1" || core.NewestCompatible != "v1.11.0" {
		t.Errorf("core: %+v", core)
	}
}

// TestAssetHostNotAllowed: an asset URL, or a redirect, to a host neither
// the API's nor allowed is refused before any request is sent to it.
func TestAssetHostNotAllowed(t *testing.T) {
	watch := netwatch.Listen(t)
	api := releaseapi.New(t)
	api.Add(capmox,
		releaseapi.Release{Tag: "v0.7.9", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1"), URL: watch.URL("/asset")}}},
		releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1"), RedirectTo: watch.URL("/signed")}}},
	)
	// The objects host is not allowed either: the default redirect fails.
	api.Add(capi, release("v1.10.2", "1.10=v1beta1"))
	rep, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: api.URL()})
	if err != nil {
		t.Fatal(err)
	}
	by := byProvider(rep)
	for _, r := range append(by["InfrastructureProvider/proxmox"].Newer, by["CoreProvider/cluster-api"].Newer...) {
		if !strings.Contains(r.ContractError, "host not allowed") || !strings.Contains(r.ContractError, "--allow-host") {
			t.Errorf("%s: %q", r.Tag, r.ContractError)
		}
	}
	if n := watch.Count(); n != 0 {
		t.Errorf("%d connection(s) to a host not allowed", n)
	}
	if _, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: api.URL(), AllowHosts: []string{"https://x"}}); err == nil {
		t.Error("an allowed host with a scheme was accepted")
	}
}

// TestAssetDigest: an asset whose bytes do not hash to the API's digest
// is not used; one without a digest is read as it is.
func TestAssetDigest(t *testing.T) {
	api := releaseapi.New(t)
	api.Add(capmox,
		releaseapi.Release{Tag: "v0.7.9", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1"), WrongDigest: true}}},
		releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1"), NoDigest: true, Direct: true}}},
		releaseapi.Release{Tag: "v0.7.10", Files: []releaseapi.File{{Name: "metadata.yaml", Data: make([]byte, 70<<10), Direct: true}}},
	)
	api.Add(capi, release("v1.10.1", "1.10=v1beta1"))
	rep, err := LookUp(context.Background(), []string{fixture.Root()}, Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}})
	if err != nil {
		t.Fatal(err)
	}
	px := byProvider(rep)["InfrastructureProvider/proxmox"]
	if r := newerOf(px, "v0.7.9"); !strings.Contains(r.ContractError, "does not match the digest") {
		t.Errorf("v0.7.9: %+v", r)
	}
	if r := newerOf(px, "v0.7.10"); !strings.Contains(r.ContractError, "more than the 65536 read") {
		t.Errorf("v0.7.10: %+v", r)
	}
	if r := newerOf(px, "v0.7.8"); r.Contract != "v1beta1" || !*r.Compatible || px.NewestCompatible != "v0.7.8" {
		t.Errorf("v0.7.8: %+v", r)
	}
}

// TestAssetRateLimit: an asset read refused for the rate limit stops the
// look-up with the rate limit error, as a releases page does.
func TestAssetRateLimit(t *testing.T) {
	api := releaseapi.New(t)
	api.Limit = 1 // the releases page, and nothing more
	api.Add(capi, release("v1.10.2", "1.10=v1beta1"))
	core := fixture.Root() + "/packages/system/capi-providers-core"
	_, err := LookUp(context.Background(), []string{core}, Options{APIURL: api.URL(), AllowHosts: []string{api.ObjectsHost()}})
	var rl *RateLimitError
	if !errors.As(err, &rl) || len(api.Requests()) != 2 {
		t.Fatalf("err = %v after %v", err, api.Requests())
	}
}

func TestValidHost(t *testing.T) {
	for h, ok := range map[string]bool{
		"objects.githubusercontent.com": true, "127.0.0.1:8099": true, "[::1]:8099": true,
		"": false, "https://x": false, "x/y": false, "u@x": false, "x:0": false, "x:http": false,
	} {
		if err := ValidHost(h); (err == nil) != ok {
			t.Errorf("ValidHost(%q) = %v", h, err)
		}
	}
}
