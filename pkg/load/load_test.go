package load

import (
	"context"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/model"
)

func loadTree(t *testing.T, root string, opts Options) *model.Tree {
	t.Helper()
	tr, err := Tree(context.Background(), root, opts)
	if err != nil {
		t.Fatalf("Tree(%s): %v", root, err)
	}
	return tr
}

// cleanSummary is what the committed clean fixture loads to.
const cleanSummary = `packages/extra/capi-ipam-in-cluster plain ns=cozy-cluster-api pins="pin.yaml"
  IPAMProvider/in-cluster ns=cozy-cluster-api version=v1.0.2-ipam selector=ipam-components=cozy at provider.yaml:5
  ConfigMap/v1.0.2-ipam ns=cozy-cluster-api at configmaps.yaml:5 gzip=true blob=files/components.gz yaml=files/ipam-components.yaml by=pin err=<nil> reproducible=true metadata(kind="Metadata" series=2 err=<nil>)
  files files/components.gz(gz) files/ipam-components.yaml files/metadata.yaml
packages/system/capi-providers-bootstrap chart ns=cozy-cluster-api pins="Makefile"
  BootstrapProvider/kubeadm ns=cozy-cluster-api version=v1.10.1-bootstrap selector=bootstrap-components=cozy,bootstrap-provider=kubeadm at templates/providers.yaml:5
  BootstrapProvider/talos ns=cozy-cluster-api version=v0.6.12-bootstrap-talos selector=bootstrap-components=cozy,bootstrap-provider=talos at templates/providers.yaml:18
  ConfigMap/v1.10.1-bootstrap ns=cozy-cluster-api at templates/configmaps.yaml:5 gzip=true blob=files/components.gz yaml=files/bootstrap-components.yaml by=content err=<nil> reproducible=true metadata(kind="Metadata" series=2 err=<nil>)
  ConfigMap/v0.6.12-bootstrap-talos ns=cozy-cluster-api at templates/configmaps.yaml:20 gzip=true blob=files/components-talos.gz yaml=files/talos-bootstrap-components.yaml by=content err=<nil> reproducible=true metadata(kind="Metadata" series=2 err=<nil>)
  files files/bootstrap-components.yaml files/components-talos.gz(gz) files/components.gz(gz) files/metadata-talos.yaml files/metadata.yaml files/talos-bootstrap-components.yaml
packages/system/capi-providers-core chart ns=cozy-cluster-api pins="pin.yaml"
  CoreProvider/cluster-api ns=cozy-cluster-api version=v1.10.1-core selector=core-components=cozy at templates/providers.yaml:5
  ConfigMap/v1.10.1-core ns=cozy-cluster-api at templates/configmaps.yaml:5 gzip=true blob=files/components.gz yaml=files/core-components.yaml by=pin err=<nil> reproducible=true metadata(kind="Metadata" series=3 err=<nil>)
  files files/components.gz(gz) files/core-components.yaml files/metadata.yaml
packages/system/capi-providers-cpprovider chart ns=cozy-cluster-api pins=""
  ControlPlaneProvider/kubeadm ns=cozy-cluster-api version=v1.10.1-control-plane selector=control-plane-components=cozy at templates/providers.yaml:5
  ConfigMap/v1.10.1-control-plane ns=cozy-cluster-api at templates/configmaps.yaml:5 gzip=true blob=files/components.gz yaml=files/control-plane-components.yaml by=content err=<nil> reproducible=true metadata(kind="" series=2 err=<nil>)
  files files/components.gz(gz) files/control-plane-components.yaml files/metadata.yaml
packages/system/capi-providers-infraprovider chart ns=cozy-cluster-api pins="pin.yaml"
  InfrastructureProvider/proxmox ns=cozy-cluster-api version=v0.7.7-infraprovider-proxmox selector=infrastructure-components=cozy,infrastructure-provider=proxmox at templates/providers.yaml:6
  InfrastructureProvider/kubevirt ns=cozy-cluster-api version=v0.1.9-cozystack.0 selector=infrastructure-components=cozy,infrastructure-provider=kubevirt at templates/providers.yaml:21
  ConfigMap/v0.7.7-infraprovider-proxmox ns=cozy-cluster-api at templates/configmaps.yaml:6 gzip=true blob=files/components-proxmox.gz yaml=files/proxmox-infrastructure-components.yaml by=pin err=<nil> reproducible=true metadata(kind="Metadata" series=2 err=<nil>)
  ConfigMap/v0.1.9-cozystack.0 ns=cozy-cluster-api at templates/configmaps.yaml:23 gzip=true blob=files/components-kubevirt.gz yaml=files/kubevirt-infrastructure-components.yaml by=pin err=<nil> reproducible=true metadata(kind="Metadata" series=1 err=<nil>)
  files files/components-kubevirt.gz(gz) files/components-proxmox.gz(gz) files/kubevirt-infrastructure-components.yaml files/metadata-kubevirt.yaml files/metadata-proxmox.yaml files/proxmox-infrastructure-components.yaml
core packages/system/capi-providers-core
`

func TestCleanTree(t *testing.T) {
	for _, workers := range []int{1, 4} {
		tr := loadTree(t, fixture.Root(), Options{Workers: workers})
		if got := summary(tr); got != cleanSummary {
			t.Errorf("workers=%d: clean tree summary:\n%s\nwant:\n%s", workers, got, cleanSummary)
		}
	}
}

// TestCleanTreeDetails checks what the summary does not show.
func TestCleanTreeDetails(t *testing.T) {
	tr := loadTree(t, fixture.Root(), Options{})
	if len(tr.Packages) != 5 {
		t.Fatalf("packages = %d, want 5 (the demo chart is not a provider package)", len(tr.Packages))
	}
	for _, p := range tr.Packages {
		if p.Pins == nil {
			t.Errorf("%s: Pins is nil", p.Path)
		}
		if len(p.Problems) != 0 {
			t.Errorf("%s: problems in the clean tree: %+v", p.Path, p.Problems)
		}
		if !strings.HasPrefix(p.Dir, tr.Root) {
			t.Errorf("%s: Dir %s not under root %s", p.Path, p.Dir, tr.Root)
		}
		for _, cm := range p.ConfigMaps {
			c := cm.Components
			if c.Diff != nil {
				t.Errorf("%s: %s: diff in the clean tree: %+v", p.Path, cm.Name, c.Diff)
			}
			if !c.InBinaryData || c.DecodeErr != nil {
				t.Errorf("%s: %s: components not decoded from binaryData: %+v", p.Path, cm.Name, c)
			}
			if cm.Annotations[model.CompressedAnnotation] != "true" {
				t.Errorf("%s: %s: annotations %v", p.Path, cm.Name, cm.Annotations)
			}
			b := p.Layout.BlobFile(cm)
			f := p.Files[b]
			if f == nil || f.SHA256 != c.SHA256 || f.Size != c.Size {
				t.Errorf("%s: %s: blob file %q does not hold the ConfigMap's bytes", p.Path, cm.Name, b)
			}
			yaml, _ := p.Layout.ComponentsYAML(cm)
			y := p.Files[yaml]
			if y == nil || c.Blob == nil || y.SHA256 != c.Blob.RawSHA256 || y.Size != c.Blob.RawSize {
				t.Errorf("%s: %s: inflated blob does not equal %s", p.Path, cm.Name, yaml)
			}
			if len(cm.MetadataRaw) == 0 || cm.Metadata == nil || cm.Metadata.Err != nil {
				t.Errorf("%s: %s: metadata %+v", p.Path, cm.Name, cm.Metadata)
			}
		}
	}
	// GNU gzip -9 -n blobs (OS 3) and blob.Compress ones (OS 255) are both clean.
	core := tr.Core
	if core == nil || core.Path != "packages/system/capi-providers-core" {
		t.Fatalf("core = %v", core)
	}
	h := core.ConfigMaps[0].Components.Blob.Header
	if h.OS != 3 || h.MTime != 0 || h.HasName {
		t.Errorf("core blob header = %+v, want GNU gzip -n (OS 3, no mtime, no name)", h)
	}
	md := core.ConfigMaps[0].Metadata
	want := []model.ReleaseSeries{{Major: 1, Minor: 10, Contract: "v1beta1"}, {Major: 1, Minor: 9, Contract: "v1beta1"}, {Major: 1, Minor: 8, Contract: "v1beta1"}}
	if len(md.ReleaseSeries) != len(want) {
		t.Fatalf("core metadata = %+v", md)
	}
	for i := range want {
		if md.ReleaseSeries[i] != want[i] {
			t.Errorf("core releaseSeries[%d] = %+v, want %+v", i, md.ReleaseSeries[i], want[i])
		}
	}
	boot := find(t, tr, "packages/system/capi-providers-bootstrap")
	if len(boot.Pins.Versions) != 1 || boot.Pins.Versions[0].Name != "CABPT_UPSTREAM_VERSION" || boot.Pins.Versions[0].Value != "v0.6.12" {
		t.Errorf("bootstrap pins = %+v", boot.Pins)
	}
}

func TestDirtyTree(t *testing.T) {
	tr := loadTree(t, fixture.DirtyRoot(), Options{})
	if len(tr.Packages) != 1 || len(tr.Packages[0].ConfigMaps) != 1 {
		t.Fatalf("dirty tree:\n%s", summary(tr))
	}
	p := tr.Packages[0]
	c := p.ConfigMaps[0].Components
	h := c.Blob.Header
	if !h.HasName || h.Name != "core-components.yaml" || h.MTime != fixture.DirtyMTime || c.Blob.Err != nil {
		t.Errorf("dirty blob header = %+v (err %v), want name core-components.yaml and mtime %d", h, c.Blob.Err, fixture.DirtyMTime)
	}
	if yaml, _ := p.Layout.ComponentsYAML(p.ConfigMaps[0]); c.Diff != nil || yaml != "files/core-components.yaml" {
		t.Errorf("dirty blob content should still equal the YAML: %+v (YAML %q)", c, yaml)
	}
}

func find(t *testing.T, tr *model.Tree, path string) *model.Package {
	t.Helper()
	for _, p := range tr.Packages {
		if p.Path == path {
			return p
		}
	}
	t.Fatalf("package %s not loaded; tree:\n%s", path, summary(tr))
	return nil
}

func TestTreeErrors(t *testing.T) {
	if _, err := Tree(context.Background(), "/nonexistent/tree", Options{}); err == nil || !strings.Contains(err.Error(), "/nonexistent/tree") {
		t.Errorf("missing root: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Tree(ctx, fixture.Root(), Options{}); err == nil {
		t.Error("cancelled context: no error")
	}
}
