package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

// TestOutdatedCommand: exit 1 with a newer stable release, 0 without, 2
// when the API refuses (rate limit); the token comes from GITHUB_TOKEN.
func TestOutdatedCommand(t *testing.T) {
	const repo = "kubernetes-sigs/cluster-api"
	newer, same := releaseapi.New(t), releaseapi.New(t)
	newer.Token, same.Token = "tok-from-env", "tok-from-env"
	newer.Add(repo, releaseapi.Release{Tag: "v1.11.0"}, releaseapi.Release{Tag: "v1.10.1"})
	same.Add(repo, releaseapi.Release{Tag: "v1.10.0"}, releaseapi.Release{Tag: "v1.10.1"})
	t.Setenv("GITHUB_TOKEN", "tok-from-env")
	root := fixture.Root()
	core := root + "/packages/system/capi-providers-core"

	out, _, err := runBuildTestCmd(t, "outdated", core, "--api-url", newer.URL())
	var eo errOutdated
	if !errors.As(err, &eo) || !strings.Contains(out, "v1.11.0") {
		t.Fatalf("newer release: err %v, output:\n%s", err, out)
	}
	out, _, err = runBuildTestCmd(t, "outdated", core, "--api-url", newer.URL(), "--output", "json")
	var rep struct {
		Outdated  int
		Providers []struct{ Provider, Version string }
	}
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil || rep.Outdated != 1 || !errors.As(err, &eo) {
		t.Fatalf("json: %v %v\n%s", jerr, err, out)
	}
	validateJSON(t, "outdated.schema.json", out)

	if out, _, err = runBuildTestCmd(t, "outdated", core, "--api-url", same.URL()); err != nil {
		t.Fatalf("nothing newer: err %v\n%s", err, out)
	}

	same.UseUp()
	_, _, err = runBuildTestCmd(t, "outdated", core, "--api-url", same.URL())
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "rate limit") {
		t.Fatalf("rate limited: %v", err)
	}
	auth := append(newer.Auth(), same.Auth()...)
	if len(auth) < 4 {
		t.Errorf("the API got %d requests, want one a run", len(auth))
	}
	for _, a := range auth {
		if a != "Bearer tok-from-env" {
			t.Errorf("Authorization %q", a)
		}
	}
	if _, _, err := runBuildTestCmd(t, "outdated", core, "--api-url", "ftp://x"); !errors.As(err, &ue) {
		t.Errorf("bad --api-url: %v", err)
	}
}

// TestOutdatedContractsCommand: the human output says in one line why the
// newest release is not the one to take; the JSON carries the contracts
// (api/outdated.schema.json).
func TestOutdatedContractsCommand(t *testing.T) {
	api := releaseapi.New(t)
	api.Add("kubernetes-sigs/cluster-api", releaseapi.Release{Tag: "v1.10.1", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("1.10=v1beta1")}}})
	api.Add("ionos-cloud/cluster-api-provider-proxmox",
		releaseapi.Release{Tag: "v0.9.1", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1", "0.9=v1beta2")}}},
		releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}}},
	)
	root := fixture.Root()
	args := []string{"outdated", root + "/packages/system/capi-providers-core", root + "/packages/system/capi-providers-infraprovider", "--api-url", api.URL(), "--allow-host", api.ObjectsHost()}
	out, _, err := runBuildTestCmd(t, args...)
	var eo errOutdated
	want := "InfrastructureProvider/proxmox: v0.9.1 needs contract v1beta2; core v1.10.1 serves v1beta1; newest compatible: v0.7.8"
	if !errors.As(err, &eo) || !strings.Contains(out, want) {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	out, _, _ = runBuildTestCmd(t, append(args, "--output", "json")...)
	validateJSON(t, "outdated.schema.json", out)
	var rep struct {
		Providers []struct {
			Provider         string
			NewestCompatible *string
			Newer            []struct {
				Tag, Contract string
				Compatible    *bool
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Providers {
		if p.Provider != "InfrastructureProvider/proxmox" {
			continue
		}
		if p.NewestCompatible == nil || *p.NewestCompatible != "v0.7.8" || len(p.Newer) != 2 || p.Newer[0].Contract != "v1beta2" || *p.Newer[0].Compatible {
			t.Errorf("proxmox: %s", out)
		}
	}
	if _, _, err := runBuildTestCmd(t, "outdated", root, "--api-url", api.URL(), "--allow-host", "http://x/"); err == nil {
		t.Error("--allow-host with a scheme was accepted")
	}
}

// TestOutdatedFetchedProvider: a provider the operator downloads at
// install time has nothing pinned: its PINNED column says so, the advice
// is not `verifier check` (which passes on it) but vendoring it, and the
// line names the provider once.
func TestOutdatedFetchedProvider(t *testing.T) {
	root := t.TempDir()
	if err := fixture.WriteFetched(root); err != nil {
		t.Fatal(err)
	}
	var p fixture.FetchedProvider
	for _, fp := range fixture.FetchedProviders {
		if fp.ID() == "InfrastructureProvider/kubevirt" {
			p = fp
		}
	}
	api := releaseapi.New(t)
	out, _, _ := runBuildTestCmd(t, "outdated", fixture.FetchedChartDir(root, p.Chart), "--api-url", api.URL())
	var row, why string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "? "):
			why = l
		case strings.Contains(l, p.ID()):
			row = l
		}
	}
	if row == "" || why == "" {
		t.Fatalf("no row or no reason for %s:\n%s", p.ID(), out)
	}
	if f := strings.Fields(row); len(f) < 3 || f[2] != "-" {
		t.Errorf("PINNED column of a provider nothing pins: %q", row)
	}
	if strings.Contains(why, "verifier check") || !strings.Contains(why, "builder vendor") {
		t.Errorf("advice for a provider downloaded at install time: %s", why)
	}
	if n := strings.Count(why, p.ID()); n > 2 || strings.Count(why, p.ID()+": "+p.ID()) > 0 {
		t.Errorf("provider named over again: %s", why)
	}
}
