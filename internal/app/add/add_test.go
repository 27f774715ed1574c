package add

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

const (
	capmoxRepo = "ionos-cloud/cluster-api-provider-proxmox"
	ipamRepo   = "kubernetes-sigs/cluster-api-ipam-provider-in-cluster"
)

// repoRoot is the repository's root directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// capmoxSecret is a document whose ${VAR}s without default the
// configSecret stub must name (and the one with a default it must not).
const capmoxSecret = `---
apiVersion: v1
kind: Secret
metadata:
  name: capmox-manager-credentials
  namespace: capmox-system
stringData:
  url: ${PROXMOX_URL}
  token: ${PROXMOX_TOKEN}
  insecure: ${PROXMOX_INSECURE:=false}
`

// standIn is the releases API stand-in with capmox (v0.7.7 and v0.7.8 on
// contract v1beta1; v0.8.0 and v0.9.1 on v1beta2) and the in-cluster IPAM
// provider (v1.0.3 on v1beta1).
func standIn(t *testing.T) *releaseapi.Server {
	t.Helper()
	s := releaseapi.New(t)
	comp, err := os.ReadFile(filepath.Join(repoRoot(), "examples/upstream/cluster-api-provider-proxmox/v0.7.7/infrastructure-components.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	v07 := releaseapi.Metadata("0.6=v1beta1", "0.7=v1beta1")
	v08 := releaseapi.Metadata("0.7=v1beta1", "0.8=v1beta2")
	v09 := releaseapi.Metadata("0.7=v1beta1", "0.8=v1beta2", "0.9=v1beta2")
	files := func(c, m []byte) []releaseapi.File {
		return []releaseapi.File{{Name: "infrastructure-components.yaml", Data: c}, {Name: "metadata.yaml", Data: m}}
	}
	s.Add(capmoxRepo,
		releaseapi.Release{Tag: "v0.10.0-rc.1", Prerelease: true, Files: files(comp, v09)},
		releaseapi.Release{Tag: "v0.9.1", Files: files(append([]byte("# v0.9.1\n"), comp...), v09)},
		releaseapi.Release{Tag: "v0.8.0", Files: files(append([]byte("# v0.8.0\n"), comp...), v08)},
		releaseapi.Release{Tag: "v0.7.8", Files: files(append(slices.Clone(comp), capmoxSecret...), v07)},
		releaseapi.Release{Tag: "v0.7.7", Files: files(comp, v07)},
	)
	ipam := manifestgen.Generate(manifestgen.Spec{
		Provider: "ipam-in-cluster", Prefix: "capi-ipam-in-cluster", Group: "ipam.cluster.x-k8s.io",
		Kinds: []string{"InClusterIPPool", "GlobalInClusterIPPool"}, Versions: []string{"v1alpha2"},
		Image: "registry.k8s.io/capi-ipam-ic/cluster-api-ipam-in-cluster-controller:v1.0.3", Seed: 103,
	})
	s.Add(ipamRepo, releaseapi.Release{Tag: "v1.0.3", Files: []releaseapi.File{{Name: "ipam-components.yaml", Data: ipam}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.1=v1beta1", "1.0=v1beta1")}}})
	return s
}

// exampleTree is examples/packages with the core alone.
func exampleTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "packages")
	if err := fixture.CopyDir(filepath.Join(repoRoot(), "examples/packages/capi-providers-core"), filepath.Join(root, "capi-providers-core")); err != nil {
		t.Fatal(err)
	}
	return root
}

func opts(s *releaseapi.Server, provider, repo string) Options {
	return Options{Provider: provider, Repo: repo, APIURL: s.URL(), AllowHosts: []string{s.ObjectsHost()}}
}

// hashTree is every path under root with the SHA-256 of its content
// (directories and symlinks by kind).
func hashTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if !d.Type().IsRegular() {
			out[rel] = d.Type().String()
			return nil
		}
		b, err := os.ReadFile(p)
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// errorFindings are the error findings of verifier check on root.
func errorFindings(t *testing.T, root string) []string {
	t.Helper()
	_, rep, err := verify.Run(context.Background(), root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range rep.Findings {
		if f.Severity == report.Error {
			out = append(out, f.Package+" "+f.Check+": "+f.Message)
		}
	}
	return out
}

// rebuild runs builder build on dir and fails when it changes anything.
func rebuild(t *testing.T, s *releaseapi.Server, dir string) *build.Result {
	t.Helper()
	m, err := fetch.ParseMirror(s.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Build(context.Background(), dir, build.Options{Fetcher: &fetch.Fetcher{Mirrors: []fetch.Mirror{m}}})
	if err != nil {
		t.Fatalf("build %s: %v", dir, err)
	}
	if res.Changed() {
		t.Errorf("build %s changed files: %+v", dir, res.Files)
	}
	return res
}

// TestAddExampleTree: capmox added beside the example core takes v0.7.8,
// passing over v0.9.1 and v0.8.0 for their contract; the in-cluster IPAM
// provider beside it gets a selector of its own; both have pin.yaml, pass
// the checks, and rebuild byte-identical.
func TestAddExampleTree(t *testing.T) {
	s := standIn(t)
	root := exampleTree(t)
	ctx := context.Background()

	dry, err := Add(ctx, filepath.Join(root, "capi-providers-infraprovider"), func() Options {
		o := opts(s, "InfrastructureProvider/proxmox", capmoxRepo)
		o.DryRun = true
		return o
	}())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "capi-providers-infraprovider")); !errors.Is(err, fs.ErrNotExist) || !dry.DryRun || len(dry.Files) == 0 {
		t.Fatalf("dry run wrote the package, or lists no files: %v %+v", err, dry)
	}

	capmox, err := Add(ctx, filepath.Join(root, "capi-providers-infraprovider"), opts(s, "InfrastructureProvider/proxmox", capmoxRepo))
	if err != nil {
		t.Fatal(err)
	}
	if capmox.Version != "v0.7.8" || capmox.Release != "v0.7.8-infraprovider-proxmox" || capmox.Contract != "v1beta1" {
		t.Errorf("capmox: %s %s %s", capmox.Version, capmox.Release, capmox.Contract)
	}
	if len(capmox.PassedOver) != 2 || capmox.PassedOver[0].Reason != "v0.9.1 needs contract v1beta2; core v1.10.1 serves v1beta1" || capmox.PassedOver[1].Tag != "v0.8.0" {
		t.Errorf("passed over: %+v", capmox.PassedOver)
	}
	if capmox.Sibling != "capi-providers-core" || capmox.Pins != pin.SourcePinFile || capmox.Namespace != "cozy-cluster-api" {
		t.Errorf("shape: sibling %q pins %q namespace %q", capmox.Sibling, capmox.Pins, capmox.Namespace)
	}
	if !slices.Equal(capmox.Variables, []string{"PROXMOX_URL", "PROXMOX_TOKEN"}) {
		t.Errorf("variables %v", capmox.Variables)
	}
	if !slices.Equal(filesOf(capmox), filesOf(dry)) {
		t.Errorf("written %v, dry run said %v", filesOf(capmox), filesOf(dry))
	}
	values, _ := os.ReadFile(filepath.Join(root, "capi-providers-infraprovider", "values.yaml"))
	if !strings.Contains(string(values), "#   PROXMOX_TOKEN\n") || strings.Contains(string(values), "PROXMOX_INSECURE") {
		t.Errorf("values.yaml:\n%s", values)
	}

	ipam, err := Add(ctx, filepath.Join(root, "capi-providers-ipam-in-cluster"), opts(s, "IPAMProvider/in-cluster", ipamRepo))
	if err != nil {
		t.Fatal(err)
	}
	if ipam.Release != "v1.0.3-ipam-in-cluster" || ipam.Sibling != "capi-providers-infraprovider" {
		t.Errorf("ipam: %s followed %s", ipam.Release, ipam.Sibling)
	}
	if ipam.Selector["ipam-provider"] != "in-cluster" || capmox.Selector["infrastructure-provider"] != "proxmox" || len(ipam.Selector) != 2 {
		t.Errorf("selectors: %v, %v", capmox.Selector, ipam.Selector)
	}
	for _, d := range []string{"capi-providers-infraprovider", "capi-providers-ipam-in-cluster"} {
		if _, err := os.Stat(filepath.Join(root, d, pin.FileName)); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	if errs := errorFindings(t, root); len(errs) > 0 {
		t.Errorf("verifier check:\n%s", strings.Join(errs, "\n"))
	}
	// builder outdated (and so plan and bump) sees the new packages as any
	// other (the example core pins the demo server, no GitHub release).
	rep, err := outdated.LookUp(ctx, []string{root}, outdated.Options{APIURL: s.URL(), AllowHosts: []string{s.ObjectsHost()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Providers {
		if p.Provider != "CoreProvider/cluster-api" && (p.Error != "" || p.Target == nil) {
			t.Errorf("outdated %s: %s", p.Provider, p.Error)
		}
		if p.Provider == "InfrastructureProvider/proxmox" && (p.Repo != capmoxRepo || p.Version != "v0.7.8" || len(p.Newer) != 2 || rep.Summary(&p) == "") {
			t.Errorf("outdated capmox: %+v", p)
		}
	}
	before := hashTree(t, root)
	for _, d := range []string{"capi-providers-infraprovider", "capi-providers-ipam-in-cluster"} {
		if res := rebuild(t, s, filepath.Join(root, d)); len(res.Fetched) != 0 {
			t.Errorf("%s: build fetched %v", d, res.Fetched)
		}
	}
	if after := hashTree(t, root); !mapsEqual(before, after) {
		t.Error("a second build changed the tree")
	}
}

func filesOf(r *Result) []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Path+" "+f.SHA256)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestAddRefusals: each refusal says why and leaves the tree
// byte-identical.
func TestAddRefusals(t *testing.T) {
	s := standIn(t)
	s.Add("example/no-components", releaseapi.Release{Tag: "v1.0.0", Files: []releaseapi.File{{Name: "metadata.yaml", Data: releaseapi.Metadata("1.0=v1beta1")}}})
	s.Add("example/elsewhere", releaseapi.Release{Tag: "v1.0.0", Files: []releaseapi.File{
		{Name: "infrastructure-components.yaml", Data: []byte("{}\n")},
		{Name: "metadata.yaml", Data: releaseapi.Metadata("1.0=v1beta1"), URL: "http://downloads.example:9/metadata.yaml"},
	}})
	s.Add("example/all-v1beta2", releaseapi.Release{Tag: "v2.0.0", Files: []releaseapi.File{
		{Name: "infrastructure-components.yaml", Data: []byte("{}\n")}, {Name: "metadata.yaml", Data: releaseapi.Metadata("2.0=v1beta2")},
	}})
	root := exampleTree(t)
	for _, tc := range []struct {
		name     string
		dir      string
		o        Options
		want     error
		contains string
	}{
		{"missing asset", "capi-providers-x", opts(s, "InfrastructureProvider/x", "example/no-components"), ErrMissingAsset, "has no infrastructure-components.yaml"},
		{"unserved version", "capi-providers-x", func() Options {
			o := opts(s, "InfrastructureProvider/proxmox", capmoxRepo)
			o.Version = "v0.9.1"
			return o
		}(), ErrUnserved, "v0.9.1 needs contract v1beta2; core v1.10.1 serves v1beta1"},
		{"no served release", "capi-providers-x", opts(s, "InfrastructureProvider/x", "example/all-v1beta2"), ErrUnserved, "move the core first"},
		{"host not allowed", "capi-providers-x", opts(s, "InfrastructureProvider/x", "example/elsewhere"), ErrHostNotAllowed, "--allow-host downloads.example:9"},
		{"existing directory", "capi-providers-core", opts(s, "InfrastructureProvider/proxmox", capmoxRepo), ErrExists, "capi-providers-core"},
		{"second core", "capi-providers-core2", opts(s, "CoreProvider/cluster-api", "kubernetes-sigs/cluster-api"), ErrInTree, "a tree has one core"},
		{"another core", "capi-providers-core2", opts(s, "CoreProvider/other", "kubernetes-sigs/cluster-api"), ErrInTree, "a tree has one core"},
	} {
		before := hashTree(t, root)
		_, err := Add(context.Background(), filepath.Join(root, tc.dir), tc.o)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: err = %v; want %v saying %q", tc.name, err, tc.want, tc.contains)
		}
		if after := hashTree(t, root); !mapsEqual(before, after) {
			t.Errorf("%s: the tree changed", tc.name)
		}
	}
	// With --allow-breaking the unserved release is added, and says so.
	o := opts(s, "InfrastructureProvider/proxmox", capmoxRepo)
	o.Version, o.AllowBreaking, o.DryRun = "v0.9.1", true, true
	res, err := Add(context.Background(), filepath.Join(root, "capi-providers-infraprovider"), o)
	if err != nil || !res.Breaking || res.Version != "v0.9.1" {
		t.Errorf("allow-breaking: %v %+v", err, res)
	}
}

func TestValidate(t *testing.T) {
	good := Options{Provider: "InfrastructureProvider/proxmox", Repo: "ionos-cloud/cluster-api-provider-proxmox"}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, mut := range []func(*Options){
		func(o *Options) { o.Provider = "proxmox" },
		func(o *Options) { o.Provider = "Infra/proxmox" },
		func(o *Options) { o.Provider = "InfrastructureProvider/Prox_mox" },
		func(o *Options) { o.Repo = "cluster-api-provider-proxmox" },
		func(o *Options) { o.Repo = "a/b/c" },
		func(o *Options) { o.Version = "0.7.7" },
		func(o *Options) { o.AllowBreaking = true },
		func(o *Options) { o.AllowHosts = []string{"http://x"} },
		func(o *Options) { o.APIURL = "ftp://x" },
	} {
		o := good
		mut(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
