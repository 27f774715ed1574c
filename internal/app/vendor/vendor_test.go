package vendor_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/internal/app/vendor"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/netwatch"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/internal/testkit/rendertest"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// TestMain lets this test binary be the bounded chart-render child.
func TestMain(m *testing.M) { rendertest.Main(m) }

// world is the fetched tree and a stand-in of the upstream release host
// that publishes every provider's release.
type world struct {
	root string
	host *releaseapi.Server
	opts vendor.Options
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{root: t.TempDir(), host: releaseapi.New(t)}
	if err := fixture.WriteFetched(w.root); err != nil {
		t.Fatal(err)
	}
	for _, p := range fixture.FetchedProviders {
		comp, meta := fixture.FetchedRelease(p)
		w.host.Add(p.Repo, releaseapi.Release{Tag: p.Version, Files: []releaseapi.File{{Name: p.Asset, Data: comp}, {Name: "metadata.yaml", Data: meta}}})
	}
	m, err := fetch.ParseMirror(w.host.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	w.opts = vendor.Options{APIURL: w.host.URL(), Mirrors: []fetch.Mirror{m}, AllowHosts: []string{w.host.ObjectsHost()}}
	return w
}

func fetchedProvider(t *testing.T, id string) fixture.FetchedProvider {
	t.Helper()
	for _, p := range fixture.FetchedProviders {
		if p.ID() == id {
			return p
		}
	}
	t.Fatalf("no fetched provider %s", id)
	return fixture.FetchedProvider{}
}

func (w *world) chart(id string, t *testing.T) string {
	return fixture.FetchedChartDir(w.root, fetchedProvider(t, id).Chart)
}

// snapshot is every file under root with its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func run(t *testing.T, root string) (*model.Tree, *report.Report) {
	t.Helper()
	tree, r, err := verify.Run(context.Background(), root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tree, r
}

func sourceOf(r *report.Report, id string) *report.Source {
	for _, p := range r.Packages {
		for _, pr := range p.Providers {
			if pr.Kind+"/"+pr.Name == id {
				return pr.Source
			}
		}
	}
	return nil
}

// TestVendorConfigMap: a provider with no fetchConfig (whose chart
// switches it to a mirror when a registry value is set) and one with
// fetchConfig.url become ConfigMap packages: verifier check holds them
// as vendored and pinned with no finding of theirs, the operator's
// selection picks exactly their ConfigMap of the release, which carries
// the upstream bytes as the operator reads them, `builder build` finds
// every file byte-identical, and outdated and bump treat them as pinned
// providers.
func TestVendorConfigMap(t *testing.T) {
	w := newWorld(t)
	_, before := run(t, w.root)
	if before.Summary.Sources.Pinned != 0 {
		t.Fatalf("the fixture starts with %d pinned providers", before.Summary.Sources.Pinned)
	}
	ctx := context.Background()
	// The platform's registry value switched the core provider to a
	// mirror: the edit replaces that switch, and holds with the value too.
	values := filepath.Join(t.TempDir(), "platform.yaml")
	if err := os.WriteFile(values, []byte("registry: mirror.example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"CoreProvider/cluster-api", "InfrastructureProvider/proxmox"} {
		opts := w.opts
		opts.Provider = id
		if id == "CoreProvider/cluster-api" {
			opts.Values = []string{values}
		}
		res, err := vendor.Vendor(ctx, w.chart(id, t), opts)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if res.Form != vendor.FormConfigMap || len(res.Digests) != 2 || res.Digests[0].From != vendor.FromAssetDigest || len(res.Files) != 6 {
			t.Fatalf("%s: result %+v", id, res)
		}
	}

	tree, r := run(t, w.root)
	if !r.Summary.Passed || r.Summary.Sources.Pinned != 2 || r.Summary.Sources.Fetched != len(fixture.FetchedProviders)-2 {
		t.Fatalf("summary %+v sources %+v", r.Summary, r.Summary.Sources)
	}
	ix := check.NewIndex(tree)
	for _, id := range []string{"CoreProvider/cluster-api", "InfrastructureProvider/proxmox"} {
		fp := fetchedProvider(t, id)
		if s := sourceOf(r, id); s == nil || s.Kind != report.SourceVendored || !s.Pinned {
			t.Errorf("%s: source %+v, want vendored and pinned", id, s)
		}
		for _, f := range r.Findings {
			if f.Provider == id && (f.Check != check.Contract || id == "CoreProvider/cluster-api") {
				t.Errorf("%s: finding %s: %s", id, f.Check, f.Message)
			}
		}
		checkInstallable(t, tree, ix, fp)
	}

	// builder build rebuilds every vendored file byte for byte.
	m, _ := fetch.ParseMirror(w.host.Mirror())
	for _, id := range []string{"CoreProvider/cluster-api", "InfrastructureProvider/proxmox"} {
		res, err := build.Build(ctx, w.chart(id, t), build.Options{Fetcher: &fetch.Fetcher{Mirrors: []fetch.Mirror{m}}})
		if err != nil {
			t.Fatalf("build %s: %v", id, err)
		}
		if res.Changed() || len(res.Files) != 3 {
			t.Errorf("build %s after vendor: %+v", id, res.Files)
		}
	}

	// outdated and bump see the pinned release like any other.
	p := fetchedProvider(t, "InfrastructureProvider/proxmox")
	comp, meta := fixture.FetchedRelease(p)
	w.host.Publish(p.Repo, releaseapi.Release{Tag: "v0.7.8", Files: []releaseapi.File{{Name: p.Asset, Data: append(comp, "# v0.7.8\n"...)}, {Name: "metadata.yaml", Data: meta}}})
	od, err := outdated.LookUp(ctx, []string{w.chart(p.ID(), t)}, outdated.Options{APIURL: w.host.URL()})
	if err != nil || od.Outdated != 1 || od.Providers[0].Version != "v0.7.7" || od.Providers[0].Newer[0].Tag != "v0.7.8" {
		t.Fatalf("outdated: %v %+v", err, od)
	}
	b, err := bump.Bump(ctx, w.chart(p.ID(), t), bump.Options{To: "v0.7.8", TrustOnFirstUse: true, DryRun: true, Tree: w.root,
		Fetcher: &fetch.Fetcher{Mirrors: []fetch.Mirror{m}}})
	if err != nil || b.To.Release != "v0.7.8" {
		t.Fatalf("bump: %v %+v", err, b)
	}
}

// checkInstallable applies the operator's ConfigMap rules to what the
// provider selects: exactly one ConfigMap in its namespace, whose version
// is spec.version, compressed annotation "true", components gunzipping to
// the upstream YAML and metadata equal to the upstream's; and not one the
// operator takes for its own store of an OCI release.
func checkInstallable(t *testing.T, tree *model.Tree, ix *check.Index, fp fixture.FetchedProvider) {
	t.Helper()
	var pkg *model.Package
	var p *model.Provider
	for _, q := range tree.Packages {
		for _, pr := range q.Providers {
			if pr.ID() == fp.ID() {
				pkg, p = q, pr
			}
		}
	}
	sel := ix.Select(pkg, p)
	m, ok := sel.Picked(p.Version)
	if !ok || len(sel.Matches) != 1 {
		t.Fatalf("%s: the selector matches %d ConfigMaps, picks %v", fp.ID(), len(sel.Matches), ok)
	}
	cm := m.ConfigMap
	comp, meta := fixture.FetchedRelease(fp)
	if v, _ := check.VersionOf(cm); v != fp.Version || cm.Namespace != fixture.FetchedNamespace {
		t.Errorf("%s: ConfigMap %s/%s has version %s", fp.ID(), cm.Namespace, cm.Name, v)
	}
	if cm.Annotations[model.CompressedAnnotation] != "true" || cm.Components == nil || !cm.Components.Gzip ||
		cm.Components.Blob.RawSHA256 != blob.Digest(sha256Sum(comp)) || string(cm.MetadataRaw) != string(meta) {
		t.Errorf("%s: ConfigMap %s does not carry the release as the operator reads it", fp.ID(), cm.Name)
	}
	for _, tn := range operator.Types(p.Kind) {
		store := operator.StoreLabels(tn.Type, p.Name, p.Version)
		if cm.Labels[operator.LabelManaged] == store[operator.LabelManaged] {
			t.Errorf("%s: ConfigMap %s carries the operator's own store labels", fp.ID(), cm.Name)
		}
	}
}

// TestVendorWrongSHA256: a --sha256 that is not the release's bytes is a
// mismatch naming the file, and nothing is written.
func TestVendorWrongSHA256(t *testing.T) {
	w := newWorld(t)
	before := snapshot(t, w.root)
	opts := w.opts
	opts.Provider = "CoreProvider/cluster-api"
	opts.SHA256 = map[string]string{"core-components.yaml": strings.Repeat("0", 64)}
	_, err := vendor.Vendor(context.Background(), w.chart(opts.Provider, t), opts)
	var mm *fetch.ErrDigestMismatch
	if !errors.As(err, &mm) || !strings.Contains(err.Error(), "core-components.yaml") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err = %v, want a SHA-256 mismatch of core-components.yaml", err)
	}
	if after := snapshot(t, w.root); !mapsEqual(before, after) {
		t.Fatal("a failed vendor changed the tree")
	}
	// The right digest from the flag is taken as given.
	comp, _ := fixture.FetchedRelease(fetchedProvider(t, opts.Provider))
	opts.SHA256 = map[string]string{"core-components.yaml": releaseapi.SHA256(comp)}
	res, err := vendor.Vendor(context.Background(), w.chart(opts.Provider, t), opts)
	if err != nil || res.Digests[0].From != bump.FromFlag || res.Digests[1].From != vendor.FromAssetDigest {
		t.Fatalf("err %v, digests %+v", err, res)
	}
}

// TestVendorHostNotAllowed: a download a mirror sends to a host that is
// not allowed is refused before a connection is made, and nothing is
// written; a redirect there is refused the same way.
func TestVendorHostNotAllowed(t *testing.T) {
	w := newWorld(t)
	watch := netwatch.Listen(t)
	before := snapshot(t, w.root)
	opts := w.opts
	opts.Provider = "InfrastructureProvider/proxmox"
	m, _ := fetch.ParseMirror("https://github.com/=" + watch.URL("/"))
	opts.Mirrors = []fetch.Mirror{m}
	_, err := vendor.Vendor(context.Background(), w.chart(opts.Provider, t), opts)
	if !errors.Is(err, vendor.ErrHostNotAllowed) || !strings.Contains(err.Error(), "--allow-host "+watch.Addr()) {
		t.Fatalf("err = %v, want host not allowed", err)
	}

	opts = w.opts
	opts.Provider = "InfrastructureProvider/proxmox"
	w.host.RedirectDownloads(watch.URL(""))
	_, err = vendor.Vendor(context.Background(), w.chart(opts.Provider, t), opts)
	if !errors.Is(err, vendor.ErrHostNotAllowed) {
		t.Fatalf("redirect: err = %v, want host not allowed", err)
	}
	if n := watch.Count(); n != 0 {
		t.Fatalf("the host that is not allowed got %d connections", n)
	}
	if after := snapshot(t, w.root); !mapsEqual(before, after) {
		t.Fatal("a refused vendor changed the tree")
	}
}

// TestVendorDigestSources: with no digest published, the run stops
// saying how to give one; with --trust-on-first-use it takes the
// download's and says so; a release's checksums file is read and named
// in the pins, and must agree with the API's asset digest.
func TestVendorDigestSources(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	p := fetchedProvider(t, "BootstrapProvider/talos")
	comp, meta := fixture.FetchedRelease(p)
	w.host = releaseapi.New(t)
	w.host.Add(p.Repo, releaseapi.Release{Tag: p.Version, Files: []releaseapi.File{{Name: p.Asset, Data: comp, NoDigest: true}, {Name: "metadata.yaml", Data: meta, NoDigest: true}}})
	m, _ := fetch.ParseMirror(w.host.Mirror())
	opts := vendor.Options{Provider: p.ID(), APIURL: w.host.URL(), Mirrors: []fetch.Mirror{m}, AllowHosts: []string{w.host.ObjectsHost()}}
	dir := w.chart(p.ID(), t)
	if _, err := vendor.Vendor(ctx, dir, opts); !errors.Is(err, bump.ErrNoDigest) {
		t.Fatalf("no digest: err = %v", err)
	}
	opts.TrustOnFirstUse = true
	res, err := vendor.Vendor(ctx, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tofu := res.TrustedOnFirstUse()
	if len(tofu) != 2 || tofu[0].SHA256 != releaseapi.SHA256(comp) || tofu[1].SHA256 != releaseapi.SHA256(meta) {
		t.Fatalf("trusted on first use: %+v", tofu)
	}

	// Checksums: the kubeadm bootstrap release publishes them. An asset
	// digest of another algorithm says nothing about the SHA-256, so it
	// neither disagrees with the checksums nor stands in for them.
	k := fetchedProvider(t, "BootstrapProvider/kubeadm")
	kc, km := fixture.FetchedRelease(k)
	sums := releaseapi.SHA256(kc) + "  " + k.Asset + "\n" + releaseapi.SHA256(km) + "  metadata.yaml\n"
	sha512 := "sha512:" + strings.Repeat("ab", 64)
	w.host.Add(k.Repo, releaseapi.Release{Tag: k.Version, Files: []releaseapi.File{{Name: k.Asset, Data: kc, Digest: sha512}, {Name: "metadata.yaml", Data: km}, {Name: "checksums.txt", Data: []byte(sums)}}})
	opts = vendor.Options{Provider: k.ID(), APIURL: w.host.URL(), Mirrors: []fetch.Mirror{m}, AllowHosts: []string{w.host.ObjectsHost()}}
	res, err = vendor.Vendor(ctx, dir, opts)
	if err != nil || res.Digests[0].From != bump.FromChecksums {
		t.Fatalf("checksums: %v %+v", err, res)
	}
	pinYAML, _ := os.ReadFile(filepath.Join(dir, "pin.yaml"))
	if !strings.Contains(string(pinYAML), "checksums: https://github.com/"+k.Repo+"/releases/download/"+k.Version+"/checksums.txt") {
		t.Fatalf("pin.yaml names no checksums:\n%s", pinYAML)
	}
	// Both providers of the chart are vendored, each with its own selector.
	_, r := run(t, w.root)
	for _, id := range []string{p.ID(), k.ID()} {
		if s := sourceOf(r, id); s == nil || !s.Pinned || s.Kind != report.SourceVendored {
			t.Errorf("%s: source %+v", id, s)
		}
	}
	if !r.Summary.Passed {
		t.Fatalf("summary %+v", r.Summary)
	}
}

// TestVendorRefuses: a provider whose bytes the tree holds already, and a
// package with several candidates and no --provider.
func TestVendorRefuses(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	dir := w.chart("BootstrapProvider/talos", t)
	if _, err := vendor.Vendor(ctx, dir, w.opts); !errors.Is(err, vendor.ErrWhichProvider) {
		t.Fatalf("two candidates: err = %v", err)
	}
	opts := w.opts
	opts.Provider = "BootstrapProvider/talos"
	if _, err := vendor.Vendor(ctx, dir, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := vendor.Vendor(ctx, dir, opts); !errors.Is(err, vendor.ErrHeld) {
		t.Fatalf("vendored twice: err = %v", err)
	}
	opts.Provider = "BootstrapProvider/nope"
	if _, err := vendor.Vendor(ctx, dir, opts); err == nil || !strings.Contains(err.Error(), "has no provider") {
		t.Fatalf("unknown provider: err = %v", err)
	}
	// A provider pin.yaml pins already (pushed with --to-oci before) is
	// not vendored again into a ConfigMap.
	kv := fetchedProvider(t, "InfrastructureProvider/kubevirt")
	kc, km := fixture.FetchedRelease(kv)
	pinned := "providers:\n- kind: " + kv.Kind + "\n  name: " + kv.Name + "\n  version: " + kv.Version + "\n  release: " + kv.Version + "\n  sources:\n" +
		"  - url: " + kv.Components() + "\n    sha256: " + releaseapi.SHA256(kc) + "\n    to: files/c.yaml\n" +
		"  - url: " + kv.Metadata() + "\n    sha256: " + releaseapi.SHA256(km) + "\n    to: files/m.yaml\n"
	if err := os.WriteFile(filepath.Join(w.chart(kv.ID(), t), "pin.yaml"), []byte(pinned), 0o644); err != nil {
		t.Fatal(err)
	}
	kopts := w.opts
	kopts.Provider = kv.ID()
	if _, err := vendor.Vendor(ctx, w.chart(kv.ID(), t), kopts); err == nil || !strings.Contains(err.Error(), "pins "+kv.ID()+" already") {
		t.Fatalf("pinned already: err = %v", err)
	}

	// A package that pins with its Makefile would lose those pins to the
	// pin.yaml vendoring adds.
	core := w.chart("CoreProvider/cluster-api", t)
	mk, _ := os.ReadFile(filepath.Join(core, "Makefile"))
	if err := os.WriteFile(filepath.Join(core, "Makefile"), append(mk, "CAPI_VERSION = v1.10.1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := vendor.Vendor(ctx, core, w.opts); err == nil || !strings.Contains(err.Error(), "pins with its Makefile") {
		t.Fatalf("Makefile pins: err = %v", err)
	}

	// --to-oci with no values: the chart names no reference.
	opts.Provider = "BootstrapProvider/kubeadm"
	opts.ToOCI = "127.0.0.1:1/capi"
	before := snapshot(t, w.root)
	if _, err := vendor.Vendor(ctx, dir, opts); err == nil || !strings.Contains(err.Error(), "--values FILE") {
		t.Fatalf("--to-oci without values: err = %v", err)
	}
	if !mapsEqual(before, snapshot(t, w.root)) {
		t.Fatal("a refused vendor changed the tree")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	return !slices.ContainsFunc(keys, func(k string) bool { v, ok := b[k]; return !ok || v != a[k] })
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

// TestVendorTemplateNotEditable: a fetchConfig the edit cannot replace
// alone (a registry switch with an else branch) is found out by the
// staged render, and nothing is written.
func TestVendorTemplateNotEditable(t *testing.T) {
	w := newWorld(t)
	p := fetchedProvider(t, "InfrastructureProvider/proxmox")
	dir := w.chart(p.ID(), t)
	tmpl := filepath.Join(dir, "templates", "providers.yaml")
	raw, err := os.ReadFile(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	switched := strings.Replace(string(raw), "  fetchConfig:\n    url: "+p.URL+"\n",
		"{{- if .Values.registry }}\n  fetchConfig:\n    oci: {{ .Values.registry }}/capi/infrastructure-proxmox\n{{- else }}\n  fetchConfig:\n    url: "+p.URL+"\n{{- end }}\n", 1)
	if switched == string(raw) {
		t.Fatal("the fixture's template changed shape")
	}
	if err := os.WriteFile(tmpl, []byte(switched), 0o644); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, w.root)
	opts := w.opts
	opts.Provider = p.ID()
	_, err = vendor.Vendor(context.Background(), dir, opts)
	if err == nil || !strings.Contains(err.Error(), "does not give "+p.ID()+" exactly spec.fetchConfig.selector") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("err = %v", err)
	}
	if !mapsEqual(before, snapshot(t, w.root)) {
		t.Fatal("a refused vendor changed the tree")
	}
}

// TestVendorProviderNamespace: a provider whose template names its own
// namespace gets its ConfigMap there, where the operator looks.
func TestVendorProviderNamespace(t *testing.T) {
	w := newWorld(t)
	p := fetchedProvider(t, "InfrastructureProvider/proxmox")
	dir := w.chart(p.ID(), t)
	tmpl := filepath.Join(dir, "templates", "providers.yaml")
	raw, _ := os.ReadFile(tmpl)
	if err := os.WriteFile(tmpl, []byte(strings.Replace(string(raw), "namespace: {{ .Release.Namespace }}", "namespace: capmox-system", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := w.opts
	opts.Provider = p.ID()
	res, err := vendor.Vendor(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tree, r := run(t, w.root)
	if s := sourceOf(r, p.ID()); s == nil || !s.Pinned || !r.Summary.Passed {
		t.Fatalf("source %+v, summary %+v", s, r.Summary)
	}
	found := false
	for _, pkg := range tree.Packages {
		for _, cm := range pkg.ConfigMaps {
			if cm.Name == res.ConfigMap {
				found = cm.Namespace == "capmox-system"
			}
		}
	}
	if !found {
		t.Fatalf("no ConfigMap %s in the provider's namespace", res.ConfigMap)
	}
}
