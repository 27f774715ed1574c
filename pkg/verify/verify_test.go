package verify

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pinseal/pinseal/api/apitest"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// Packages of the clean fixture tree (internal/testkit/fixture/spec.go).
const (
	corePkg  = "packages/system/capi-providers-core"       // pin.yaml, GNU gzip -n
	bootPkg  = "packages/system/capi-providers-bootstrap"  // two providers, Makefile CABPT_UPSTREAM_VERSION, no SHA pins
	cpPkg    = "packages/system/capi-providers-cpprovider" // no pin at all, metadata without kind
	infraPkg = "packages/system/capi-providers-infraprovider"
	ipamPkg  = "packages/extra/capi-ipam-in-cluster" // plain manifests, inline base64
)

func verifyTree(t *testing.T, root string) *report.Report {
	t.Helper()
	_, r, err := Run(context.Background(), root, Options{Options: load.Options{Workers: 2}})
	if err != nil {
		t.Fatalf("verify %s: %v", root, err)
	}
	return r
}

// unheldWarning reports whether f, found beside a finding of check, is a
// warning that the provider the mutation added installs bytes nothing in
// an offline run holds: a chart added with an OCI source always brings
// the pin-missing warning naming its registry and the contract warning
// that its metadata is not in the tree (sources_test.go turns each red
// alone).
func unheldWarning(check string, f report.Finding) bool {
	return (check == "oci-source" || check == "provider-duplicate") && f.Severity == report.Warning &&
		(f.Check == "pin-missing" || f.Check == "contract")
}

// key identifies a finding independent of severity and order.
func key(f report.Finding) string {
	return strings.Join([]string{f.Check, f.Package, f.Provider, f.File, fmt.Sprint(f.Line), f.Message}, "|")
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	data = bytes.Replace(data, []byte(old), []byte(new), 1)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gzipWithoutN writes src gzipped the way `gzip -9` without -n does: the
// header keeps the file name and modification time.
func gzipWithoutN(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Name = filepath.Base(src)
	zw.ModTime = time.Unix(fixture.DirtyMTime, 0)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// regzip rebuilds the blob dst from src reproducibly, as `builder build`
// (and `gzip -9 -n -c`) would.
func regzip(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := blob.CompressBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, gz, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCleanFixtureIsGreen(t *testing.T) {
	r := verifyTree(t, fixture.CleanCopy(t))
	if !r.Summary.Passed || r.Summary.Errors != 0 || r.ExitCode() != 0 {
		t.Errorf("clean fixture failed: %+v", r.Summary)
	}
	// Every package and provider of the fixture is seen, each provider
	// with the ConfigMap it picks.
	if r.Summary.Packages != 5 || r.Summary.Providers != 7 {
		t.Errorf("saw %d packages, %d providers; want 5, 7", r.Summary.Packages, r.Summary.Providers)
	}
	for _, p := range r.Packages {
		for _, pr := range p.Providers {
			if pr.ConfigMap == "" || pr.ConfigMap != pr.Version {
				t.Errorf("%s %s/%s: picks ConfigMap %q for spec.version %q", p.Path, pr.Kind, pr.Name, pr.ConfigMap, pr.Version)
			}
		}
	}
	// The only findings are the pin-missing warnings of the two packages
	// that carry no SHA-256 pin (a quirk the fixture has on purpose).
	for _, f := range r.Findings {
		if f.Check != check.PinMissing || f.Severity != report.Warning || (f.Package != bootPkg && f.Package != cpPkg) {
			t.Errorf("unexpected finding on the clean fixture: %+v", f)
		}
	}
	if r.Summary.Warnings != 2 {
		t.Errorf("%d warnings, want 2 (pin-missing of %s and %s)", r.Summary.Warnings, bootPkg, cpPkg)
	}
}

func TestDirtyFixtureFailsBlobHeader(t *testing.T) {
	r := verifyTree(t, fixture.DirtyCopy(t))
	if r.Summary.Passed || len(r.Findings) != 1 || r.Findings[0].Check != check.BlobHeader {
		t.Fatalf("dirty fixture: want exactly one blob-header finding, got %+v", r.Findings)
	}
	f := r.Findings[0]
	for _, want := range []string{`file name "core-components.yaml"`, "2025-04-22T00:00:00Z"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("blob-header message lacks %q: %s", want, f.Message)
		}
	}
	if !strings.Contains(f.Hint, "gzip -9 -n -c files/core-components.yaml > files/components.gz") || !strings.Contains(f.Hint, "builder build "+corePkg) {
		t.Errorf("blob-header hint: %s", f.Hint)
	}
}

// TestEveryCheckGoesRedAlone copies the clean fixture, mutates exactly one
// thing on disk, and expects the findings that appear to be of exactly one
// check.
func TestEveryCheckGoesRedAlone(t *testing.T) {
	baseline := map[string]bool{}
	for _, f := range verifyTree(t, fixture.CleanCopy(t)).Findings {
		baseline[key(f)] = true
	}
	tests := []struct {
		check  string
		name   string
		mutate func(t *testing.T, root string)
		pkg    string
		want   []string // words in the new finding's message, hint or detail
	}{
		{check.BlobYAML, "YAML edited, blob not regenerated", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, cpPkg, "files/control-plane-components.yaml"),
				"    control-plane: controller-manager\n", "    control-plane: controller-manager\n    edited-by: hand\n")
		}, cpPkg, []string{"first difference at line", "edited-by: hand", "gzip -9 -n -c files/control-plane-components.yaml > files/components.gz"}},

		{check.BlobHeader, "blob gzipped without -n", func(t *testing.T, root string) {
			dir := filepath.Join(root, cpPkg, "files")
			gzipWithoutN(t, filepath.Join(dir, "control-plane-components.yaml"), filepath.Join(dir, "components.gz"))
		}, cpPkg, []string{`embeds file name "control-plane-components.yaml"`, "2025-04-22T00:00:00Z"}},

		{model.CheckBlobCorrupt, "blob truncated", func(t *testing.T, root string) {
			blobFile := filepath.Join(root, corePkg, "files/components.gz")
			st, err := os.Stat(blobFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(blobFile, st.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, corePkg, []string{"truncated"}},

		{check.ComponentsValid, "a 404 body vendored and gzipped as the components", func(t *testing.T, root string) {
			yml := filepath.Join(root, cpPkg, "files/control-plane-components.yaml")
			if err := os.WriteFile(yml, []byte("Not Found"), 0o644); err != nil {
				t.Fatal(err)
			}
			regzip(t, yml, filepath.Join(root, cpPkg, "files/components.gz"))
		}, cpPkg, []string{`the text "Not Found"`, `ConfigMap "v1.10.1-control-plane"`, "curl -fsSL"}},

		{check.ComponentsApply, "a CRD whose spec has no type (not structural)", func(t *testing.T, root string) {
			yml := filepath.Join(root, cpPkg, "files/control-plane-components.yaml")
			// Properties with no type: what the examples' trimmed CRDs had
			// (a node with only x-kubernetes-preserve-unknown-fields may
			// leave its type out, so dropping the type alone is accepted).
			edit(t, yml, "          spec:\n            type: object\n            x-kubernetes-preserve-unknown-fields: true\n",
				"          spec:\n            properties:\n              replicas:\n                type: integer\n")
			regzip(t, yml, filepath.Join(root, cpPkg, "files/components.gz"))
		}, cpPkg, []string{"the API server refuses CustomResourceDefinition", "properties[spec].type: Required value"}},

		{check.ComponentsApply, "an object of a kind no CRD serves", func(t *testing.T, root string) {
			yml := filepath.Join(root, cpPkg, "files/control-plane-components.yaml")
			data, err := os.ReadFile(yml)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, "---\napiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: kcp-metrics\n"...)
			if err := os.WriteFile(yml, data, 0o644); err != nil {
				t.Fatal(err)
			}
			regzip(t, yml, filepath.Join(root, cpPkg, "files/components.gz"))
		}, cpPkg, []string{`ServiceMonitor "kcp-metrics" (monitoring.coreos.com/v1): no API the cluster has serves this kind`, "externalKinds"}},

		{check.ProviderDuplicate, "the same provider at another version in another template", func(t *testing.T, root string) {
			// A second object of the provider (no fetchConfig: its bytes
			// are downloaded at install time, which pin-missing and
			// contract warn about on their own) asking for another release.
			old := "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: ControlPlaneProvider\nmetadata:\n  name: kubeadm\nspec:\n  version: v1.9.0\n"
			if err := os.WriteFile(filepath.Join(root, cpPkg, "templates/providers-old.yaml"), []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
		}, cpPkg, []string{"v1.9.0", "v1.10.1-control-plane"}},

		{check.ReleaseSize, "a large file in the chart", func(t *testing.T, root string) {
			// 1.2 MiB that does not compress: the release Secret overflows.
			big := make([]byte, 1200<<10)
			rnd := rand.New(rand.NewPCG(1, 2))
			for i := range big {
				big[i] = byte(rnd.Uint32())
			}
			if err := os.MkdirAll(filepath.Join(root, corePkg, "extra"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, corePkg, "extra/data.bin"), big, 0o644); err != nil {
				t.Fatal(err)
			}
		}, corePkg, []string{"of the 1 MiB a release Secret holds", "Helm cannot install", "extra/data.bin"}},

		{check.ComponentsValid, "air-gap ConfigMap holding a saved 404 body", func(t *testing.T, root string) {
			airgapChart(t, root, "latest-404", "v1.10.1-core-airgap", "components: Not Found", "v1beta1")
		}, "packages/airgap", []string{`the text "Not Found"`, `ConfigMap "v1.10.1-core-airgap"`}},

		{check.SelectorSemver, "air-gap ConfigMap named latest", func(t *testing.T, root string) {
			airgapChart(t, root, "latest", "latest", "components: |\n    apiVersion: v1\n    kind: Namespace\n    metadata:\n      name: x", "v1beta1")
		}, "packages/airgap", []string{`ConfigMap "latest" in namespace "capi-airgap"`, "not semver"}},

		{check.Contract, "air-gap ConfigMap of a v1beta2 release", func(t *testing.T, root string) {
			airgapChart(t, root, "v1beta2", "v1.10.1-airgap", "components: |\n    apiVersion: v1\n    kind: Namespace\n    metadata:\n      name: x", "v1beta2")
		}, "packages/airgap", []string{`ConfigMap "v1.10.1-airgap" in namespace "capi-airgap"`, "declares contract v1beta2"}},

		{check.PinVersion, "computed Makefile version whose Dockerfile ARG differs from the release", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, cpPkg, "Makefile"), []byte("NAMESPACE = cozy-cluster-api\nUPSTREAM_VERSION = $(shell awk -F= '/^ARG VERSION=/{print $$2}' images/kamaji/Dockerfile)\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(root, cpPkg, "images/kamaji"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, cpPkg, "images/kamaji/Dockerfile"), []byte("FROM scratch\nARG VERSION=v1.9.0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, cpPkg, []string{"images/kamaji/Dockerfile", "v1.9.0", `"v1.10.1-control-plane"`}},

		{check.ConfigMapVersion, "ConfigMap renamed", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, corePkg, "templates/configmaps.yaml"), "name: v1.10.1-core\n", "name: v1.10.1-core-renamed\n")
		}, corePkg, []string{`spec.version is "v1.10.1-core"`, `"v1.10.1-core-renamed"`}},

		{check.SelectorUnique, "overlapping labels in another package of the namespace", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, cpPkg, "templates/configmaps.yaml"),
				"    control-plane-components: cozy\n", "    control-plane-components: cozy\n    core-components: cozy\n")
		}, corePkg, []string{"matches 2 ConfigMaps", `"v1.10.1-core"`, `"v1.10.1-control-plane"`}},

		{check.SelectorSemver, "non-semver release name", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, cpPkg, "templates/configmaps.yaml"), "name: v1.10.1-control-plane", "name: control-plane-latest")
			edit(t, filepath.Join(root, cpPkg, "templates/providers.yaml"), "version: v1.10.1-control-plane", "version: control-plane-latest")
		}, cpPkg, []string{`"control-plane-latest"`, "not semver"}},

		{check.CompressedAnnotation, "compressed annotation removed", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, cpPkg, "templates/configmaps.yaml"),
				"  annotations:\n    provider.cluster.x-k8s.io/compressed: \"true\"\n", "")
		}, cpPkg, []string{"annotation provider.cluster.x-k8s.io/compressed is missing"}},

		{check.MetadataSeries, "metadata without the release series", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, cpPkg, "files/metadata.yaml"), "  - major: 1\n    minor: 10\n    contract: v1beta1\n", "")
		}, cpPkg, []string{"no releaseSeries for 1.10", "it lists 1.9"}},

		{check.Contract, "provider contract v1beta2 against core v1beta1", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, cpPkg, "files/metadata.yaml"), "    minor: 10\n    contract: v1beta1\n", "    minor: 10\n    contract: v1beta2\n")
		}, cpPkg, []string{"declares contract v1beta2", "serves v1beta1"}},

		{check.PinVersion, "Makefile version differs from the release", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, bootPkg, "Makefile"), "CABPT_UPSTREAM_VERSION = v0.6.12", "CABPT_UPSTREAM_VERSION = v0.6.13")
		}, bootPkg, []string{"CABPT_UPSTREAM_VERSION = v0.6.13", `"v0.6.12-bootstrap-talos"`}},

		{check.PinVersion, "pin.yaml version differs from the release", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, infraPkg, "pin.yaml"), "  version: v0.1.9\n  release: v0.1.9-cozystack.0\n", "  version: v0.2.0\n  release: v0.2.0-cozystack.0\n")
		}, infraPkg, []string{`pins release "v0.2.0-cozystack.0"`}},

		{check.PinVersion, "Dockerfile ARG VERSION differs from the release", func(t *testing.T, root string) {
			// The package has no pin file and no version in its Makefile:
			// the image build's ARG is the pin.
			if err := os.MkdirAll(filepath.Join(root, cpPkg, "images/cp"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, cpPkg, "images/cp/Dockerfile"), []byte("FROM scratch\nARG VERSION=v1.9.5\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, cpPkg, []string{"VERSION", "v1.9.5", `"v1.10.1-control-plane"`}},

		{model.CheckPinDigest, "vendored file differs from its sha256 pin", func(t *testing.T, root string) {
			f := filepath.Join(root, corePkg, "files/metadata.yaml")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, append(data, "# local note\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}, corePkg, []string{"files/metadata.yaml does not match its pin"}},

		{model.CheckPinDigest, "patched file edited outside its patch, blob regenerated", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, infraPkg, "files/proxmox-infrastructure-components.yaml"), "  replicas: 1\n", "  replicas: 2\n")
			regzip(t, filepath.Join(root, infraPkg, "files/proxmox-infrastructure-components.yaml"), filepath.Join(root, infraPkg, "files/components-proxmox.gz"))
		}, infraPkg, []string{"files/proxmox-infrastructure-components.yaml does not match its pin in pin.yaml",
			"with its patches (patches/0001-capmox-startup-probe.diff) reversed", "builder build " + infraPkg}},

		{model.CheckPinDigest, "patched file edited inside a hunk's context, blob regenerated", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, infraPkg, "files/proxmox-infrastructure-components.yaml"), "            path: /readyz\n", "            path: /ready\n")
			regzip(t, filepath.Join(root, infraPkg, "files/proxmox-infrastructure-components.yaml"), filepath.Join(root, infraPkg, "files/components-proxmox.gz"))
		}, infraPkg, []string{"files/proxmox-infrastructure-components.yaml is not the pinned upstream",
			"patch patches/0001-capmox-startup-probe.diff hunk #1 @@ -142,6 +142,12 @@", "builder build " + infraPkg, "update the patch"}},

		{model.CheckPinDigest, "patch listed in pin.yaml is missing", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, infraPkg, "patches/0001-capmox-startup-probe.diff")); err != nil {
				t.Fatal(err)
			}
		}, infraPkg, []string{"lists patch patches/0001-capmox-startup-probe.diff", "cannot be read"}},

		{check.PinMissing, "sha pin removed", func(t *testing.T, root string) {
			edit(t, filepath.Join(root, ipamPkg, "pin.yaml"), "  - url: https://github.com/kubernetes-sigs/cluster-api-ipam-provider-in-cluster/releases/download/v1.0.2/metadata.yaml\n", "  - url: https://example.invalid/drop-me\n")
			// Remove the whole source entry: url, sha256, to.
			data, err := os.ReadFile(filepath.Join(root, ipamPkg, "pin.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			for i, l := range lines {
				if strings.Contains(l, "drop-me") {
					lines = slices.Delete(lines, i, i+3)
					break
				}
			}
			if err := os.WriteFile(filepath.Join(root, ipamPkg, "pin.yaml"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ipamPkg, []string{"files/metadata.yaml is vendored but pin.yaml pins no source"}},

		{check.ImageRef, "controller image on :main in the YAML and the blob", func(t *testing.T, root string) {
			plantImageTag(t, root, "main")
		}, cpPkg, []string{`"registry.k8s.io/cluster-api/kubeadm-control-plane-controller:main"`, `the moving tag "main"`,
			"Deployment/kubeadm-controller-manager", "line 131 of what the blob inflates to", "pin it by digest"}},

		{check.ImageRelocation, "pin.yaml records a relocation the files do not hold", func(t *testing.T, root string) {
			pf := filepath.Join(root, corePkg, "pin.yaml")
			data, err := os.ReadFile(pf)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, "  relocate:\n  - from: registry.k8s.io/cluster-api\n    to: mirror.example/capi\n"...)
			if err := os.WriteFile(pf, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}, corePkg, []string{`"registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1"`, "was not relocated", `relocates it to "mirror.example/capi/cluster-api-controller:v1.10.1"`, "`builder build packages/system/capi-providers-core`"}},

		{model.CheckPackageLoad, "template that does not parse", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, infraPkg, "templates/broken.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: [\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, infraPkg, nil},

		{check.OCISource, "a chart added whose provider's fetchConfig.oci tag is not its spec.version", func(t *testing.T, root string) {
			dir := ociChart(t, root)
			edit(t, filepath.Join(dir, "templates/providers.yaml"), ":{{ .Values.release }}", ":v0.19.0-cozystack.0")
			edit(t, filepath.Join(dir, "values.yaml"), "release: v0.19.0-cozystack.0", "release: v0.19.0-cozystack.1")
		}, ociPkg, []string{`fetches tag "v0.19.0-cozystack.0" but installs it as release "v0.19.0-cozystack.1"`, "drop the tag", "operator rule tag-version"}},

		{model.CheckPackageLoad, "pinned chart whose values.yaml does not parse", func(t *testing.T, root string) {
			// Helm renders nothing: the load finding alone says so, the
			// pins of the providers it would have defined are not blamed.
			if err := os.WriteFile(filepath.Join(root, corePkg, "values.yaml"), []byte("a: [\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, corePkg, []string{"Helm cannot load the chart", "values.yaml"}},
	}

	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.check] = true
		t.Run(tc.check+"/"+tc.name, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			tc.mutate(t, root)
			r := verifyTree(t, root)
			var fresh []report.Finding
			for _, f := range r.Findings {
				if !baseline[key(f)] {
					fresh = append(fresh, f)
				}
			}
			if len(fresh) == 0 {
				t.Fatalf("no new finding; want %s", tc.check)
			}
			for _, f := range fresh {
				if f.Check != tc.check && !unheldWarning(tc.check, f) {
					t.Errorf("check %s went red too: %s: %s", f.Check, f.Package, f.Message)
				}
			}
			f := fresh[0]
			if f.Package != tc.pkg {
				t.Errorf("finding in package %q, want %q", f.Package, tc.pkg)
			}
			var all string
			for _, f := range fresh {
				all += f.Message + "\n" + f.Hint + "\n" + f.Detail + "\n"
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("finding lacks %q:\n%s", w, all)
				}
			}
			if f.File == "" || !strings.HasPrefix(f.File, f.Package+"/") {
				t.Errorf("finding file %q is not a file of package %q", f.File, f.Package)
			}
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f.File))); err != nil {
				t.Errorf("finding file %q does not exist under ROOT: %v", f.File, err)
			}
			wantExit := 1
			if c, _ := check.Lookup(tc.check); c.Severity == report.Warning {
				wantExit = 0 // a warning by default: the catalog entry says
			}
			if r.ExitCode() != wantExit {
				t.Errorf("exit code %d, want %d", r.ExitCode(), wantExit)
			}
			t.Logf("%s: %s\n  file %s:%d\n  hint: %s", f.Check, f.Message, f.File, f.Line, f.Hint)
		})
	}
	for _, c := range check.Builtin(nil, nil) {
		if !covered[c.ID] {
			t.Errorf("no mutation test for check %s", c.ID)
		}
	}
}

// plantImageTag retags the control-plane controller's image (line 131 of
// the vendored YAML) and regzips the blob, so YAML and blob agree.
func plantImageTag(t *testing.T, root, tag string) {
	t.Helper()
	yml := filepath.Join(root, cpPkg, "files/control-plane-components.yaml")
	edit(t, yml, "kubeadm-control-plane-controller:v1.10.1\n", "kubeadm-control-plane-controller:"+tag+"\n")
	regzip(t, yml, filepath.Join(root, cpPkg, "files/components.gz"))
}

// A floating tag planted in the YAML and the blob is exactly two image-ref
// errors, one per file, each at the image's line; a tag only the policy
// calls moving is one only with that policy.
func TestImageRefPlanted(t *testing.T) {
	baseline := map[string]bool{}
	for _, f := range verifyTree(t, fixture.CleanCopy(t)).Findings {
		baseline[key(f)] = true
	}
	fresh := func(r *report.Report) []report.Finding {
		var out []report.Finding
		for _, f := range r.Findings {
			if !baseline[key(f)] {
				out = append(out, f)
			}
		}
		return out
	}
	root := fixture.CleanCopy(t)
	plantImageTag(t, root, "main")
	got := fresh(verifyTree(t, root))
	var where []string
	for _, f := range got {
		if f.Check != check.ImageRef || f.Severity != report.Error {
			t.Errorf("unexpected finding %s/%s: %s", f.Check, f.Severity, f.Message)
		}
		where = append(where, fmt.Sprintf("%s:%d", f.File, f.Line))
	}
	slices.Sort(where)
	want := []string{cpPkg + "/files/components.gz:131", cpPkg + "/files/control-plane-components.yaml:131"}
	if !slices.Equal(where, want) {
		t.Errorf("image-ref findings at %v, want %v", where, want)
	}

	// An air-gap chart inlining its blob in a template, with no vendored
	// file: the image is found in the ConfigMap's components.
	root = fixture.CleanCopy(t)
	gz, err := blob.CompressBytes([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: example.com/tool\n"))
	if err != nil {
		t.Fatal(err)
	}
	airgapBinary(t, root, "v1.10.1-airgap", base64.StdEncoding.EncodeToString(gz))
	var inline []string
	for _, f := range fresh(verifyTree(t, root)) {
		if f.Check == check.ImageRef {
			inline = append(inline, fmt.Sprintf("%s:%d %s", f.File, f.Line, f.Severity))
		}
	}
	if want := []string{"packages/airgap/templates/configmap.yaml:8 error"}; !slices.Equal(inline, want) {
		t.Errorf("inline blob: image-ref findings %v, want %v", inline, want)
	}

	root = fixture.CleanCopy(t)
	plantImageTag(t, root, "nightly")
	if got := fresh(verifyTree(t, root)); len(got) != 0 {
		t.Errorf("nightly is not moving by default, got %v", got)
	}
	pol, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nmovingTags: [nightly]\n"), "moving.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := Run(context.Background(), root, Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	if got := fresh(r); len(got) != 2 || got[0].Check != check.ImageRef || !strings.Contains(got[0].Message, `"nightly"`) {
		t.Errorf("with movingTags [nightly]: %v", got)
	}
}

func TestPolicyAppliesToTree(t *testing.T) {
	root := fixture.CleanCopy(t)
	gzipWithoutN(t, filepath.Join(root, cpPkg, "files/control-plane-components.yaml"), filepath.Join(root, cpPkg, "files/components.gz"))
	pol, err := policy.Parse([]byte(`apiVersion: pinseal/v1
kind: Policy
checks:
  pin-missing: error
waivers:
- package: `+cpPkg+`
  check: blob-header
  reason: regenerated next sprint
  expires: 2030-01-31
`), "test-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := Run(context.Background(), root, Options{Policy: pol, Now: time.Date(2030, 1, 15, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	// pin-missing is now an error (two packages); blob-header is waived.
	if r.Summary.Errors != 2 || r.Summary.Waived != 1 || r.Summary.Warnings != 0 {
		t.Errorf("summary = %+v", r.Summary)
	}
	// After the expiry day the waiver is an error itself and blob-header counts.
	_, r, err = Run(context.Background(), root, Options{Policy: pol, Now: time.Date(2030, 2, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Errors != 4 || r.Summary.Waived != 0 {
		t.Errorf("after expiry: summary = %+v", r.Summary)
	}
}

// checkSchema reports an error on t when r, written by report.WriteJSON,
// does not follow schema.
func checkSchema(t *testing.T, schema *jsonschema.Schema, name string, r *report.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if err := apitest.Validate(schema, buf.Bytes()); err != nil {
		t.Errorf("%s report does not match api/report.schema.json: %v\n%s", name, err, buf.String())
	}
}

func TestReportsMatchSchema(t *testing.T) {
	schema := apitest.ReportSchema(t)
	root := fixture.CleanCopy(t)
	// Make it dirty in several ways so findings of many kinds are validated.
	edit(t, filepath.Join(root, cpPkg, "files/metadata.yaml"), "    minor: 10\n    contract: v1beta1\n", "    minor: 10\n    contract: v1beta2\n")
	edit(t, filepath.Join(root, bootPkg, "Makefile"), "CABPT_UPSTREAM_VERSION = v0.6.12", "CABPT_UPSTREAM_VERSION = v0.6.13")
	gzipWithoutN(t, filepath.Join(root, corePkg, "files/core-components.yaml"), filepath.Join(root, corePkg, "files/components.gz"))
	for name, root := range map[string]string{"clean": fixture.CleanCopy(t), "dirty": root} {
		r := verifyTree(t, root)
		checkSchema(t, schema, name, r)
		if name == "dirty" && r.Summary.Errors < 3 {
			t.Errorf("dirty tree: %d errors, want >= 3", r.Summary.Errors)
		}
	}
}

func TestRunErrors(t *testing.T) {
	if _, _, err := Run(context.Background(), filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("Run(missing root) succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Run(ctx, fixture.Root(), Options{}); err == nil {
		t.Error("Run(cancelled) succeeded")
	}
}

// TestExtraChecks shows the hook the registry checks use: extra pure
// checks, run after the built-in ones and judged by the same policy.
func TestExtraChecks(t *testing.T) {
	tree := &model.Tree{Root: "/t", Packages: []*model.Package{{Path: "p", Providers: []*model.Provider{{Kind: "CoreProvider", Name: "cluster-api"}}}}}
	sig := check.Check{ID: check.Signature, Title: "Artifact signed", Severity: report.Error, Run: func(*check.Input) []report.Finding {
		return []report.Finding{{Check: check.Signature, Package: "p", Provider: "CoreProvider/cluster-api", Message: "no signature"}}
	}}
	panicky := check.Check{ID: "custom-panics", Run: func(*check.Input) []report.Finding { panic("boom") }}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := Evaluate(context.Background(), tree, Options{Options: load.Options{Logger: quiet}, Extra: []check.Check{sig, panicky}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.Check)
	}
	if !slices.Contains(ids, check.Signature) || !slices.Contains(ids, "custom-panics") {
		t.Fatalf("extra checks did not report: %v", r.Findings)
	}
	for _, f := range r.Findings {
		if f.Check == "custom-panics" && (!strings.Contains(f.Message, "boom") || f.Severity != report.Error) {
			t.Errorf("panicking check finding = %+v", f)
		}
	}
	// The policy turns an extra check off like any other.
	pol, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  signature: off\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err = Evaluate(context.Background(), tree, Options{Extra: []check.Check{sig}, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Check == check.Signature {
			t.Errorf("signature is off but reported: %+v", f)
		}
	}
}

// TestRunReturnsTheTree shows Run hands back the tree it loaded beside the
// report on it: a caller (release.Load) reads the model without loading
// it again.
func TestRunReturnsTheTree(t *testing.T) {
	root := fixture.CleanCopy(t)
	tree, r, err := Run(context.Background(), root, Options{Options: load.Options{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if tree == nil || tree.Root != root || len(tree.Packages) == 0 || len(tree.Packages) != r.Summary.Packages {
		t.Fatalf("Run = tree %+v, report %+v", tree, r.Summary)
	}
	loaded, err := Load(context.Background(), root, Options{Options: load.Options{Workers: 2}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := Evaluate(context.Background(), loaded, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Summary, r.Summary) || !reflect.DeepEqual(again.Findings, r.Findings) {
		t.Errorf("Load then Evaluate = %+v, Run = %+v", again.Summary, r.Summary)
	}
}

// TestGeneratedTreeIsGreen checks the benchmark trees (internal/testkit/gentree)
// pass every check, so `make bench` times a verifier that finds nothing.
func TestGeneratedTreeIsGreen(t *testing.T) {
	root := filepath.Join(t.TempDir(), "gen")
	res, err := gentree.Generate(root, gentree.Options{Packages: 12, Size: 32 << 10, Seed: 7, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := verifyTree(t, root)
	if len(r.Findings) != 0 || r.Summary.Packages != len(res.Packages) || r.Summary.Providers != len(res.Packages) {
		t.Fatalf("generated tree: %+v\n%+v", r.Summary, r.Findings)
	}
	// The real shapes too: small manifests keep every release far from
	// the size line, so nothing is found; a monorepo's other charts are
	// skipped, none checked.
	for _, shape := range []gentree.Shape{gentree.Real, gentree.Monorepo} {
		root := filepath.Join(t.TempDir(), string(shape))
		res, err := gentree.Generate(root, gentree.Options{Packages: 11, Size: 32 << 10, Seed: 7, Workers: 2, Shape: shape, Others: 24})
		if err != nil {
			t.Fatal(err)
		}
		providers := len(res.Packages)
		for _, p := range res.Packages {
			if p.Second != "" {
				providers++
			}
		}
		r := verifyTree(t, root)
		if len(r.Findings) != 0 || r.Summary.Packages != len(res.Packages) || r.Summary.Providers != providers || providers == len(res.Packages) {
			t.Fatalf("generated %s tree (%d providers): %+v\n%+v", shape, providers, r.Summary, r.Findings)
		}
		if shape == gentree.Monorepo && len(r.Skipped) != res.Others {
			t.Errorf("monorepo: %d charts skipped, want the %d others", len(r.Skipped), res.Others)
		}
	}
}

// airgapChart writes packages/airgap: a chart with one inline provider
// ConfigMap in its own namespace (no provider, no vendored file), whose
// data holds components (a YAML fragment under data) and metadata with the
// series 1.10 of contract.
// airgapBinary adds an air-gap chart whose ConfigMap inlines a gzip blob
// (base64) in binaryData, with no vendored file.
func airgapBinary(t *testing.T, root, name, b64 string) {
	t.Helper()
	dir := filepath.Join(root, "packages/airgap")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: airgap\nversion: 0.1.0\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: capi-airgap\n  annotations:\n    provider.cluster.x-k8s.io/compressed: \"true\"\nbinaryData:\n  components: " + b64 +
			"\ndata:\n  metadata: |\n    apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n    releaseSeries:\n    - major: 1\n      minor: 10\n      contract: v1beta1\n",
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func airgapChart(t *testing.T, root, chart, name, components, contract string) {
	t.Helper()
	dir := filepath.Join(root, "packages/airgap")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: " + chart + "\nversion: 0.1.0\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: capi-airgap\ndata:\n  " + components +
			"\n  metadata: |\n    apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\n    releaseSeries:\n    - major: 1\n      minor: 10\n      contract: " + contract + "\n",
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChecksPolicyMovingTags: the image-ref check Checks returns reads the
// policy's movingTags on top of the built-in ones, and only with them.
func TestChecksPolicyMovingTags(t *testing.T) {
	tree := &model.Tree{Packages: []*model.Package{{Path: "packages/core", Layout: &model.Layout{},
		Images: []model.Image{{Ref: "registry.k8s.io/cluster-api/cluster-api-controller:nightly", Release: "v1.10.1",
			Providers: []string{"CoreProvider/cluster-api"}, Location: model.Location{File: "files/core-components.yaml", Line: 1}}}}}}
	imageRef := func(opts Options) []report.Finding {
		for _, c := range Checks(opts) {
			if c.ID == check.ImageRef {
				return c.Run(check.NewInput(tree))
			}
		}
		t.Fatalf("Checks(%+v) has no %s", opts, check.ImageRef)
		return nil
	}
	if got := imageRef(Options{}); len(got) != 0 {
		t.Errorf("no policy: nightly is not a moving tag, got %v", got)
	}
	if got := imageRef(Options{Policy: &policy.Policy{MovingTags: []string{"nightly"}}}); len(got) != 1 || !strings.Contains(got[0].Message, `"nightly"`) {
		t.Errorf("policy movingTags [nightly]: got %v", got)
	}
}

// A workload document too large for the image scan, in the YAML and the
// blob, is exactly two image-ref warnings naming the file, the line where
// the document starts and its kind: its images are not silently skipped.
func TestImageRefUnreadWorkload(t *testing.T) {
	baseline := map[string]bool{}
	for _, f := range verifyTree(t, fixture.CleanCopy(t)).Findings {
		baseline[key(f)] = true
	}
	root := fixture.CleanCopy(t)
	yml := filepath.Join(root, cpPkg, "files/control-plane-components.yaml")
	data, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Count(string(data), "\n") + 2 // after the --- line
	big := "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: big\nspec:\n  x: [" + strings.Repeat("1,", 160<<10) + "1]\n"
	if err := os.WriteFile(yml, append(data, big...), 0o644); err != nil {
		t.Fatal(err)
	}
	regzip(t, yml, filepath.Join(root, cpPkg, "files/components.gz"))
	var where []string
	for _, f := range verifyTree(t, root).Findings {
		if baseline[key(f)] {
			continue
		}
		if f.Check != check.ImageRef || f.Severity != report.Warning || !strings.Contains(f.Message, "a DaemonSet document at ") || !strings.Contains(f.Message, "was not read for images") {
			t.Errorf("unexpected finding %s/%s: %s", f.Check, f.Severity, f.Message)
		}
		where = append(where, fmt.Sprintf("%s:%d", f.File, f.Line))
	}
	slices.Sort(where)
	want := []string{fmt.Sprintf("%s/files/components.gz:%d", cpPkg, start), fmt.Sprintf("%s/files/control-plane-components.yaml:%d", cpPkg, start)}
	if !slices.Equal(where, want) {
		t.Errorf("findings at %v, want %v", where, want)
	}
}
