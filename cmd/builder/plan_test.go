package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
)

// upgradeUpstream serves, on a releases-API stand-in, a Cluster API
// v1.11.1 (contract v1beta2, still serving v1beta1) and a capmox v0.9.1
// (v1beta2) and v0.7.8 (v1beta1) made from the fixture's vendored files,
// as the real series move from v1beta1 to v1beta2.
func upgradeUpstream(t *testing.T, root string) *releaseapi.Server {
	t.Helper()
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(root, "packages", "system", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	core := read("capi-providers-core/files/core-components.yaml")
	upstream := capmoxUpstream(t, root)
	api := releaseapi.New(t)
	file := func(name string, data []byte) releaseapi.File { return releaseapi.File{Name: name, Data: data} }
	api.Add("kubernetes-sigs/cluster-api",
		releaseapi.Release{Tag: "v1.12.0-beta.0", Prerelease: true},
		releaseapi.Release{Tag: "v1.11.1", Files: []releaseapi.File{
			file("core-components.yaml", bytes.ReplaceAll(core, []byte("v1.10.1"), []byte("v1.11.1"))),
			file("metadata.yaml", releaseapi.Metadata("1.10=v1beta1", "1.11=v1beta2")),
		}},
		releaseapi.Release{Tag: "v1.10.1", Files: []releaseapi.File{file("metadata.yaml", releaseapi.Metadata("1.10=v1beta1"))}},
	)
	capmox := func(tag string, series ...string) releaseapi.Release {
		return releaseapi.Release{Tag: tag, Files: []releaseapi.File{
			file("infrastructure-components.yaml", bytes.ReplaceAll(upstream, []byte(":v0.7.7"), []byte(":"+tag))),
			file("metadata.yaml", releaseapi.Metadata(series...)),
		}}
	}
	api.Add("ionos-cloud/cluster-api-provider-proxmox",
		capmox("v0.9.1", "0.7=v1beta1", "0.8=v1beta2", "0.9=v1beta2"),
		capmox("v0.7.8", "0.6=v1beta1", "0.7=v1beta1"),
	)
	return api
}

// capmoxUpstream is the upstream capmox v0.7.7 manifest: the vendored one
// under root without the package's patch (the startupProbe block); the
// pin holds its digest.
func capmoxUpstream(t *testing.T, root string) []byte {
	t.Helper()
	vendored, err := os.ReadFile(filepath.Join(root, "packages", "system", "capi-providers-infraprovider", "files", "proxmox-infrastructure-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(vendored), "\n")
	upstream := []byte(strings.Join(append(append([]string{}, lines[:144]...), lines[150:]...), ""))
	if sum := sha256.Sum256(upstream); hex.EncodeToString(sum[:]) != "e84558cde85f9675db5f5bb1c2a930b56fb2837d6a3d0c4538ba078fd81322d9" {
		t.Fatal("the fixture's capmox upstream could not be rebuilt")
	}
	return upstream
}

type planJSON struct {
	Steps []struct {
		Provider, From, To, Why, Command string
		Changes                          *[]struct {
			Kind, Object, Detail string
			Breaking             bool
		}
	}
	Blocked []struct{ Provider, Release, Reason string }
}

// TestPlanCommandRuns: the plan moves the core first (v1.11.1 serves the
// v1beta2 capmox v0.9.1 needs, and still v1beta1), then capmox; each
// printed command runs `builder bump` successfully on a copy of the
// fixture, after which nothing is left to do.
func TestPlanCommandRuns(t *testing.T) {
	root := fixture.CleanCopy(t)
	api := upgradeUpstream(t, root)
	t.Setenv("PINSEAL_MIRRORS", "https://github.com/="+api.Objects()+"/")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	args := []string{"plan", root, "--api-url", api.URL(), "--allow-host", api.ObjectsHost()}
	out, _, err := runBuildTestCmd(t, append(args, "--output", "json")...)
	var es errSteps
	if !errors.As(err, &es) {
		t.Fatalf("want exit 1 with steps: %v\n%s", err, out)
	}
	validateJSON(t, "plan.schema.json", out)
	var pl planJSON
	if err := json.Unmarshal([]byte(out), &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps) != 2 || pl.Steps[0].Provider != "CoreProvider/cluster-api" || pl.Steps[0].To != "v1.11.1" ||
		pl.Steps[1].Provider != "InfrastructureProvider/proxmox" || pl.Steps[1].To != "v0.9.1" || !strings.HasPrefix(pl.Steps[0].Why, "core first") {
		t.Fatalf("steps:\n%s", out)
	}
	// Each step lists its safety report: new images, the contracts the
	// series move to; nothing breaking.
	for _, s := range pl.Steps {
		kinds := ""
		for _, c := range *s.Changes {
			kinds += " " + c.Kind
			if c.Breaking {
				t.Errorf("%s: breaking %+v", s.Provider, c)
			}
		}
		if kinds != " contract-changed image-changed" {
			t.Errorf("%s: changes%s\n%s", s.Provider, kinds, out)
		}
	}
	// Out of order, capmox's step is refused by the bump's contract check
	// (the core still serves v1beta1 only), with nothing changed.
	before := readTree(t, root)
	if _, _, err := runBuildTestCmd(t, strings.Fields(pl.Steps[1].Command)[1:]...); err == nil || !strings.Contains(err.Error(), "contract") {
		t.Fatalf("capmox before the core: %v", err)
	}
	if after := readTree(t, root); len(after) != len(before) {
		t.Fatalf("a refused step changed the tree")
	} else {
		for p, b := range before {
			if after[p] != b {
				t.Fatalf("a refused step changed %s", p)
			}
		}
	}
	for _, s := range pl.Steps {
		if strings.ContainsAny(s.Command, `'"`) || !strings.HasPrefix(s.Command, "builder bump ") || !strings.Contains(s.Command, "--sha256 ") {
			t.Fatalf("command %q", s.Command)
		}
		if out, _, err := runBuildTestCmd(t, strings.Fields(s.Command)[1:]...); err != nil {
			t.Fatalf("%s: %v\n%s", s.Command, err, out)
		}
	}
	for rel, want := range map[string]string{
		"capi-providers-core/pin.yaml":          "release: v1.11.1-core",
		"capi-providers-infraprovider/pin.yaml": "release: v0.9.1-infraprovider-proxmox",
	} {
		b, _ := os.ReadFile(filepath.Join(root, "packages", "system", rel))
		if !strings.Contains(string(b), want) {
			t.Errorf("%s after the plan:\n%s", rel, b)
		}
	}
	// Nothing left: exit 0.
	if out, _, err := runBuildTestCmd(t, args...); err != nil || !strings.Contains(out, "0 step(s)") {
		t.Errorf("after the steps: %v\n%s", err, out)
	}
}

// TestPlanCommandBlocked: with no core release serving v1beta2, capmox
// stops at v0.7.8 and v0.9.1 is blocked, said in the human output.
func TestPlanCommandBlocked(t *testing.T) {
	root := fixture.CleanCopy(t)
	comp := capmoxUpstream(t, root)
	api := releaseapi.New(t)
	api.Add("kubernetes-sigs/cluster-api", releaseapi.Release{Tag: "v1.10.1", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("1.10=v1beta1")}}})
	api.Add("ionos-cloud/cluster-api-provider-proxmox",
		releaseapi.Release{Tag: "v0.9.1", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.9=v1beta2")}}},
		releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: comp}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}}},
	)
	out, _, err := runBuildTestCmd(t, "plan", root, "--api-url", api.URL(), "--allow-host", api.ObjectsHost())
	var es errSteps
	if !errors.As(err, &es) || es.n != 1 {
		t.Fatalf("err %v\n%s", err, out)
	}
	for _, want := range []string{
		"core CoreProvider/cluster-api v1.10.1 serves v1beta1",
		"1. " + root + "/packages/system/capi-providers-infraprovider InfrastructureProvider/proxmox: v0.7.7 -> v0.7.8 (v1beta1)",
		"blocked " + root + "/packages/system/capi-providers-infraprovider InfrastructureProvider/proxmox v0.9.1: v0.9.1 needs contract v1beta2; core v1.10.1 (the newest the plan reaches) serves v1beta1",
		"1 step(s), 1 release(s) blocked",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := runBuildTestCmd(t, "plan", root, "--output", "yaml"); err == nil {
		t.Error("--output yaml accepted")
	}
	var ue usageError
	if _, _, err := runBuildTestCmd(t, "plan", root, "--api-url", "ftp://x"); !errors.As(err, &ue) {
		t.Errorf("bad --api-url: %v", err)
	}
}

// TestPlanCommandBreaking: capmox v0.7.8 stops serving the ProxmoxCluster
// CRD's v1beta1 (no conversion webhook). The plan blocks it, naming the
// change, and has nothing to do; with --allow-breaking its step lists the
// change, its command carries --allow-breaking, and that command runs.
func TestPlanCommandBreaking(t *testing.T) {
	root := fixture.CleanCopy(t)
	comp := bytes.ReplaceAll(capmoxUpstream(t, root), []byte(":v0.7.7"), []byte(":v0.7.8"))
	dropped := bytes.Replace(comp, []byte("\n    served: true\n"), []byte("\n    served: false\n"), 1)
	if bytes.Equal(dropped, comp) {
		t.Fatal("no served CRD version to drop")
	}
	api := releaseapi.New(t)
	api.Add("kubernetes-sigs/cluster-api", releaseapi.Release{Tag: "v1.10.1", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("1.10=v1beta1")}}})
	api.Add("ionos-cloud/cluster-api-provider-proxmox",
		releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{{Name: "infrastructure-components.yaml", Data: dropped}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.7=v1beta1")}}})
	t.Setenv("PINSEAL_MIRRORS", "https://github.com/="+api.Objects()+"/")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	args := []string{"plan", root, "--api-url", api.URL(), "--allow-host", api.ObjectsHost()}

	out, _, err := runBuildTestCmd(t, args...)
	if err != nil {
		t.Fatalf("want exit 0, nothing to do: %v\n%s", err, out)
	}
	for _, want := range []string{
		"blocked " + root + "/packages/system/capi-providers-infraprovider InfrastructureProvider/proxmox v0.7.8: v0.7.8 breaks what clusters run today: crd-version-removed CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io (version v1beta1 is no longer served",
		"`builder plan --allow-breaking` plans it",
		"0 step(s), 1 release(s) blocked",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	args = append(args, "--allow-breaking")
	out, _, err = runBuildTestCmd(t, append(args, "--output", "json")...)
	var es errSteps
	if !errors.As(err, &es) {
		t.Fatalf("want exit 1 with steps: %v\n%s", err, out)
	}
	validateJSON(t, "plan.schema.json", out)
	var pl planJSON
	if err := json.Unmarshal([]byte(out), &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Steps) != 1 || len(pl.Blocked) != 0 || pl.Steps[0].To != "v0.7.8" || pl.Steps[0].Changes == nil {
		t.Fatalf("plan --allow-breaking:\n%s", out)
	}
	s := pl.Steps[0]
	if cs := *s.Changes; len(cs) != 2 || cs[0].Kind != "crd-version-removed" || !cs[0].Breaking || cs[1].Kind != "image-changed" || cs[1].Breaking {
		t.Errorf("changes:\n%s", out)
	}
	if !strings.HasSuffix(s.Command, " --allow-breaking") || !strings.Contains(s.Why, "breaking, allowed by --allow-breaking") {
		t.Errorf("step:\n%s", out)
	}
	if out, _, err := runBuildTestCmd(t, args...); !errors.As(err, &es) || !strings.Contains(out, "change crd-version-removed CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io (breaking): ") {
		t.Errorf("human output: %v\n%s", err, out)
	}
	if out, _, err := runBuildTestCmd(t, strings.Fields(s.Command)[1:]...); err != nil {
		t.Fatalf("%s: %v\n%s", s.Command, err, out)
	}
	b, _ := os.ReadFile(filepath.Join(root, "packages", "system", "capi-providers-infraprovider", "pin.yaml"))
	if !strings.Contains(string(b), "release: v0.7.8-infraprovider-proxmox") {
		t.Errorf("pin.yaml after the step:\n%s", b)
	}
}
