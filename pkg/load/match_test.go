package load

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"
)

// TestYAMLEditedBlobNot is trap 1: someone edits the vendored YAML (adds a
// startupProbe) and does not regenerate the blob.
func TestYAMLEditedBlobNot(t *testing.T) {
	const probe = "        startupProbe:\n          httpGet:\n            path: /healthz\n            port: healthz\n"
	for _, tc := range []struct {
		pkg, yaml, cm, by string
	}{
		{corePkg, "files/core-components.yaml", "v1.10.1-core", model.MatchedByPin},                           // pinned
		{bootPkg, "files/talos-bootstrap-components.yaml", "v0.6.12-bootstrap-talos", model.MatchedByName},    // components-talos.gz
		{bootPkg, "files/bootstrap-components.yaml", "v1.10.1-bootstrap", model.MatchedByName},                // components.gz <-> bootstrap-components.yaml
		{cpPkg, "files/control-plane-components.yaml", "v1.10.1-control-plane", model.MatchedByName},          // the only one
		{infraPkg, "files/kubevirt-infrastructure-components.yaml", "v0.1.9-cozystack.0", model.MatchedByPin}, // release suffix
		{ipamPkg, "files/ipam-components.yaml", "v1.0.2-ipam", model.MatchedByPin},                            // plain manifests
	} {
		t.Run(tc.cm, func(t *testing.T) {
			root := fixture.CleanCopy(t)
			replace(t, root, tc.pkg+"/"+tc.yaml, "        readinessProbe:\n", probe+"        readinessProbe:\n")
			tr := loadTree(t, root, Options{})
			otherPackagesFine(t, tr, "")
			p := find(t, tr, tc.pkg)
			cm := cmNamed(t, p, tc.cm)
			c := cm.Components
			if yaml, by := p.Layout.ComponentsYAML(cm); yaml != tc.yaml || by != tc.by {
				t.Fatalf("matched %q by %q, want %q by %q", yaml, by, tc.yaml, tc.by)
			}
			if c.Diff == nil {
				t.Fatal("no diff")
			}
			lines := strings.Split(string(read(t, root, tc.pkg+"/"+tc.yaml)), "\n")
			if got := lines[c.Diff.Line-1]; got != "        startupProbe:" {
				t.Errorf("diff line %d is %q, want the added startupProbe", c.Diff.Line, got)
			}
			yml := read(t, root, tc.pkg+"/"+tc.yaml)
			if !strings.HasPrefix(string(yml[c.Diff.Offset:]), "startupProbe:") {
				t.Errorf("diff offset %d points at %q", c.Diff.Offset, yml[c.Diff.Offset:c.Diff.Offset+20])
			}
			for _, want := range []string{"-        startupProbe:", "-            path: /healthz", "          protocol: TCP", "         readinessProbe:"} {
				if !strings.Contains(c.Diff.Excerpt, want+"\n") {
					t.Errorf("excerpt lacks %q:\n%s", want, c.Diff.Excerpt)
				}
			}
			if n := strings.Count(c.Diff.Excerpt, "\n"); n > 20 || len(c.Diff.Excerpt) > 2048 {
				t.Errorf("excerpt too long (%d lines):\n%s", n, c.Diff.Excerpt)
			}
			if b := p.Layout.BlobFile(cm); c.Blob.Err != nil || b == "" {
				t.Errorf("blob = %+v file %q", c.Blob, b)
			}
		})
	}
}

// TestBlobRegeneratedFromOtherContent: the blob (and so the ConfigMap)
// changed, the YAML did not; the blob file still matches the ConfigMap's
// bytes and the diff shows "+" lines.
func TestBlobRegeneratedFromOtherContent(t *testing.T) {
	root := fixture.CleanCopy(t)
	yml := read(t, root, bootPkg+"/files/talos-bootstrap-components.yaml")
	changed := strings.Replace(string(yml), "        - --leader-elect\n", "        - --leader-elect\n        - --v=4\n", 1)
	write(t, root, bootPkg+"/files/components-talos.gz", gz(t, []byte(changed)))
	tr := loadTree(t, root, Options{})
	p := find(t, tr, bootPkg)
	cm := cmNamed(t, p, "v0.6.12-bootstrap-talos")
	c := cm.Components
	if yaml, by := p.Layout.ComponentsYAML(cm); p.Layout.BlobFile(cm) != "files/components-talos.gz" || yaml != "files/talos-bootstrap-components.yaml" || by != model.MatchedByName {
		t.Fatalf("release = %+v", p.Layout.ConfigMap(cm).ReleaseFiles)
	}
	if c.Diff == nil || !strings.Contains(c.Diff.Excerpt, "+        - --v=4\n") || strings.Contains(c.Diff.Excerpt, "\n-") {
		t.Fatalf("diff = %+v", c.Diff)
	}
}

// TestMatchByContent: a blob whose name says nothing still finds its YAML.
func TestMatchByContent(t *testing.T) {
	root := fixture.CleanCopy(t)
	dir := filepath.Join(root, bootPkg, "files")
	if err := os.Rename(filepath.Join(dir, "components-talos.gz"), filepath.Join(dir, "blob-b.gz")); err != nil {
		t.Fatal(err)
	}
	replace(t, root, bootPkg+"/templates/configmaps.yaml", "files/components-talos.gz", "files/blob-b.gz")
	tr := loadTree(t, root, Options{})
	p := find(t, tr, bootPkg)
	cm := cmNamed(t, p, "v0.6.12-bootstrap-talos")
	if yaml, by := p.Layout.ComponentsYAML(cm); p.Layout.BlobFile(cm) != "files/blob-b.gz" || yaml != "files/talos-bootstrap-components.yaml" || by != model.MatchedByContent || cm.Components.Diff != nil {
		t.Fatalf("release = %+v, diff %+v", p.Layout.ConfigMap(cm).ReleaseFiles, cm.Components.Diff)
	}
}

// TestPinFollowsSpecVersion: a ConfigMap renamed away from its release is
// still matched by the pin through the provider that selects it.
func TestPinFollowsSpecVersion(t *testing.T) {
	root := fixture.CleanCopy(t)
	replace(t, root, infraPkg+"/templates/configmaps.yaml", "name: v0.7.7-infraprovider-proxmox", "name: v0.7.6-infraprovider-proxmox")
	tr := loadTree(t, root, Options{})
	p := find(t, tr, infraPkg)
	cm := cmNamed(t, p, "v0.7.6-infraprovider-proxmox")
	if yaml, by := p.Layout.ComponentsYAML(cm); by != model.MatchedByPin || yaml != "files/proxmox-infrastructure-components.yaml" {
		t.Fatalf("matched %q by %q", yaml, by)
	}
}

func TestNamespaces(t *testing.T) {
	root := fixture.CleanCopy(t)
	// A second plain package that names no namespace anywhere, and a chart
	// whose Makefile names none.
	write(t, root, "packages/extra/addon/provider.yaml", []byte(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: AddonProvider
metadata:
  name: helm
spec:
  version: v0.3.1-addon
  fetchConfig:
    url: https://github.com/kubernetes-sigs/cluster-api-addon-provider-helm/releases/download/v0.3.1
`))
	replace(t, root, cpPkg+"/Makefile", "export NAMESPACE=cozy-cluster-api\n", "")
	for _, tc := range []struct{ opt, want string }{{"", "default"}, {"cozy-capi", "cozy-capi"}} {
		tr := loadTree(t, root, Options{Namespace: tc.opt})
		for _, path := range []string{"packages/extra/addon", cpPkg} {
			p := find(t, tr, path)
			if p.Namespace != tc.want {
				t.Errorf("--namespace %q: %s namespace = %q, want %q", tc.opt, path, p.Namespace, tc.want)
			}
			for _, pr := range p.Providers {
				if pr.Namespace != tc.want {
					t.Errorf("%s namespace = %q", pr.ID(), pr.Namespace)
				}
			}
			for _, cm := range p.ConfigMaps {
				if cm.Namespace != tc.want {
					t.Errorf("ConfigMap %s namespace = %q", cm.Name, cm.Namespace)
				}
			}
		}
		// Makefile and explicit namespaces win over the option.
		if ns := find(t, tr, corePkg).Namespace; ns != "cozy-cluster-api" {
			t.Errorf("core namespace = %q", ns)
		}
		if ns := find(t, tr, ipamPkg).Namespace; ns != "cozy-cluster-api" {
			t.Errorf("plain package namespace = %q", ns)
		}
		addon := find(t, tr, "packages/extra/addon").Providers[0]
		if addon.Selector != nil || addon.FetchURL == "" || addon.Version != "v0.3.1-addon" {
			t.Errorf("addon provider = %+v", addon)
		}
	}
}

// TestSkippedAndNested: .git and node_modules are not scanned, a subchart's
// provider belongs to its parent chart (counted once), and a chart with no
// provider is not a package.
func TestSkippedAndNested(t *testing.T) {
	root := fixture.CleanCopy(t)
	for _, d := range []string{"packages/.git/core", "packages/apps/web/node_modules/core"} {
		if err := fixture.CopyDir(filepath.Join(fixture.Root(), corePkg), filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	// Make the cpprovider chart a subchart of a new umbrella chart.
	umbrella := "packages/system/umbrella"
	write(t, root, umbrella+"/Chart.yaml", []byte("apiVersion: v2\nname: umbrella\nversion: 0.1.0\n"))
	write(t, root, umbrella+"/templates/namespace.yaml", []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ .Release.Namespace }}\n"))
	if err := os.Rename(filepath.Join(root, cpPkg), filepath.Join(root, umbrella, "charts", "cp")); err != nil {
		if err := os.MkdirAll(filepath.Join(root, umbrella, "charts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(root, cpPkg), filepath.Join(root, umbrella, "charts", "cp")); err != nil {
			t.Fatal(err)
		}
	}
	tr := loadTree(t, root, Options{})
	if len(tr.Packages) != 5 {
		t.Fatalf("packages:\n%s", summary(tr))
	}
	p := find(t, tr, umbrella)
	if len(p.Providers) != 1 || p.Providers[0].File != "charts/cp/templates/providers.yaml" || p.Providers[0].Line != 5 {
		t.Errorf("umbrella providers: %+v", *p.Providers[0])
	}
	if len(p.ConfigMaps) != 1 || p.Layout.BlobFile(p.ConfigMaps[0]) != "" {
		// The subchart's files/ are not the umbrella's files/.
		t.Errorf("umbrella configmaps: %+v, blob file %q", p.ConfigMaps[0].Components, p.Layout.BlobFile(p.ConfigMaps[0]))
	}
	if len(p.Problems) != 0 || p.Namespace != "default" {
		t.Errorf("umbrella: ns %q problems %+v", p.Namespace, p.Problems)
	}
}

// TestNoCore: a tree without a CoreProvider has Core nil.
func TestNoCore(t *testing.T) {
	root := fixture.CleanCopy(t)
	if err := os.RemoveAll(filepath.Join(root, corePkg)); err != nil {
		t.Fatal(err)
	}
	tr := loadTree(t, root, Options{})
	if tr.Core != nil || len(tr.Packages) != 4 {
		t.Errorf("core = %v, %d packages", tr.Core, len(tr.Packages))
	}
}

// TestSymlinkedRoot: the root itself may be a symlink; paths are judged
// against the real directory.
func TestSymlinkedRoot(t *testing.T) {
	root := fixture.CleanCopy(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	tr, err := Tree(context.Background(), link, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(tr); got != cleanSummary {
		t.Errorf("via symlinked root:\n%s", got)
	}
	var _ *model.Tree = tr
}

// TestProvidersFromFiles: a chart whose template only includes a file that
// holds the provider is still found.
func TestProvidersFromFiles(t *testing.T) {
	root := fixture.CleanCopy(t)
	b := read(t, root, cpPkg+"/templates/providers.yaml")
	write(t, root, cpPkg+"/manifests/providers.yaml", b)
	write(t, root, cpPkg+"/templates/providers.yaml", []byte("{{ .Files.Get \"manifests/providers.yaml\" }}\n"))
	tr := loadTree(t, root, Options{})
	p := find(t, tr, cpPkg)
	if len(p.Providers) != 1 || p.Providers[0].File != "templates/providers.yaml" {
		t.Fatalf("providers = %+v", p.Providers)
	}
}

// TestBadPinFile: a pin.yaml that does not parse is a problem of the
// package; the rest of the package still loads.
func TestBadPinFile(t *testing.T) {
	root := fixture.CleanCopy(t)
	replace(t, root, corePkg+"/pin.yaml", "  version: v1.10.1\n", "  version: v1.10.1\n  colour: blue\n")
	tr := loadTree(t, root, Options{})
	otherPackagesFine(t, tr, corePkg)
	p := find(t, tr, corePkg)
	pr := problem(p, model.CheckPackageLoad, "pins cannot be read")
	if pr == nil || pr.File != "pin.yaml" || pr.Line != 6 || !strings.Contains(pr.Message, "pin.yaml:6: providers[0].colour") || strings.Contains(pr.Message, root) {
		t.Fatalf("problems = %+v", p.Problems)
	}
	if p.Pins == nil || p.Pins.Source != "pin.yaml" || p.Pins.File != nil || p.Pins.Namespace != "cozy-cluster-api" {
		t.Errorf("pins = %+v", p.Pins)
	}
	if yaml, by := p.Layout.ComponentsYAML(cmNamed(t, p, "v1.10.1-core")); by != model.MatchedByContent || yaml != "files/core-components.yaml" {
		t.Errorf("without pins the blob matches by content: matched %q by %q", yaml, by)
	}
}
