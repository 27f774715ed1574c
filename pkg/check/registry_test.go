package check

import (
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/hinttest"
	"github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// publish gives every provider of t the artifact `builder push --key`
// would have pushed for it: the tree's release, signed and attested.
func publish(t *model.Tree) {
	ix := NewIndex(t)
	providers(t, func(pkg *model.Package, p *model.Provider) {
		m, _ := ix.Select(pkg, p).Picked(p.Version)
		cm := m.ConfigMap
		pp := layout.PinOf(pkg, p)
		contract, _, _ := releaseContract(cm)
		yaml, _ := pkg.Layout.ComponentsYAML(cm)
		repo := "127.0.0.1:5000/capi/" + p.Type() + "-" + p.Name
		pins := slices.Clone(pp.Sources)
		p.Artifact = &model.Artifact{
			Ref: repo + ":" + p.Version, Repository: repo, Found: true,
			Digest:         digest("manifest of " + p.Name).String(),
			BlobSHA256:     cm.Components.SHA256.String(),
			MetadataSHA256: pkg.Files[pp.Sources[1].To].SHA256.String(),
			YAMLSHA256:     pkg.Files[yaml].SHA256.String(),
			YAMLTitle:      "components.yaml",
			Config: &model.ArtifactConfig{
				Kind: p.Kind, Name: p.Name, Type: p.Type(), Release: p.Version, Version: pp.Version,
				Contract: contract, Pins: pins, BuilderVersion: "v0.1.0",
			},
			ConfigMediaType: "application/vnd.pinseal.provider.config.v1+json",
			Signature:       model.Signature{Checked: true, Valid: true, KeyID: "sha256:key"},
			Provenance: model.Provenance{Checked: true, Found: true, Valid: true, KeyID: "sha256:key",
				BuilderID: version.BuilderID, Materials: slices.Clone(pins), Images: releaseRefs(pkg, p.Version), ImagesRecorded: true},
		}
		setLayers(p.Artifact)
	})
}

// releaseRefs are the distinct images the package's release runs.
func releaseRefs(pkg *model.Package, release string) []string {
	var out []string
	for _, img := range pkg.Images {
		if img.Release == release && !slices.Contains(out, img.Ref) {
			out = append(out, img.Ref)
		}
	}
	return out
}

// setLayers lists a's components.gz, metadata.yaml and YAML layers by
// title, as pkg/remote records them.
func setLayers(a *model.Artifact) {
	a.Layers = map[string]string{"components.gz": a.BlobSHA256, "metadata.yaml": a.MetadataSHA256}
	if a.YAMLTitle != "" {
		a.Layers[a.YAMLTitle] = a.YAMLSHA256
	}
}

func runRegistry(t *model.Tree, builders []string) []report.Finding {
	var out []report.Finding
	for _, c := range Registry(builders) {
		out = append(out, c.Run(NewInput(t))...)
	}
	return out
}

func TestRegistryChecksCleanAndAbsent(t *testing.T) {
	tree := cleanTree()
	// Without artifacts (no registry given) the registry checks say nothing.
	if fs := runRegistry(tree, nil); len(fs) != 0 {
		t.Fatalf("no artifacts: %v", fs)
	}
	publish(tree)
	if fs := runRegistry(tree, nil); len(fs) != 0 {
		t.Fatalf("published tree: %+v", fs)
	}
	if fs := runAll(tree); len(fs) != 0 {
		t.Fatalf("artifacts disturb the tree checks: %+v", fs)
	}
	for _, c := range Registry(nil) {
		cat, _ := Lookup(c.ID)
		if c.Run == nil || c.Description != cat.Description || c.Severity != cat.Severity {
			t.Errorf("%s: registry check differs from its catalog entry", c.ID)
		}
	}
}

// TestRegistryMutations: one change to the tree or the registry turns
// exactly one registry check red, on the right provider.
func TestRegistryMutations(t *testing.T) {
	core := func(tr *model.Tree) *model.Provider { return tr.Packages[0].Providers[0] }
	proxmox := func(tr *model.Tree) *model.Provider { return tr.Packages[1].Providers[0] }
	tests := []struct {
		name     string
		mutate   func(tr *model.Tree)
		builders []string
		check    string
		provider string
		want     string // in the message
	}{
		{"not pushed", func(tr *model.Tree) {
			a := core(tr).Artifact
			*a = model.Artifact{Ref: a.Ref, Repository: a.Repository}
		}, nil, RegistryDigest, "CoreProvider/cluster-api", "is not in the registry"},
		{"registry unreachable", func(tr *model.Tree) {
			a := core(tr).Artifact
			*a = model.Artifact{Ref: a.Ref, Repository: a.Repository, Err: "dial tcp 127.0.0.1:5000: connection refused"}
		}, nil, RegistryDigest, "CoreProvider/cluster-api", "could not be read: dial tcp"},
		{"tampered layer", func(tr *model.Tree) {
			a := core(tr).Artifact
			a.Err, a.Tampered = "layer components.gz: stored content does not match", true
		}, nil, RegistryDigest, "CoreProvider/cluster-api", "do not match the digests in its manifest"},
		{"missing layer", func(tr *model.Tree) {
			a := proxmox(tr).Artifact
			a.MetadataSHA256, a.Missing = "", []string{"metadata.yaml"}
		}, nil, RegistryDigest, "InfrastructureProvider/proxmox", "lacks layer metadata.yaml"},
		{"local blob regenerated", func(tr *model.Tree) {
			cm := tr.Packages[0].ConfigMaps[0]
			cm.Components.SHA256 = digest("another gzip of the same YAML")
		}, nil, RegistryDigest, "CoreProvider/cluster-api", "same release, different blob bytes"},
		{"local metadata edited", func(tr *model.Tree) {
			pkg := tr.Packages[1]
			pkg.Files["files/metadata-proxmox.yaml"].SHA256 = digest("edited")
			pkg.ConfigMaps[0].MetadataRaw = append(pkg.ConfigMaps[0].MetadataRaw, '\n')
		}, nil, RegistryDigest, "InfrastructureProvider/proxmox", "metadata.yaml sha256"},
		{"YAML changed without a bump", func(tr *model.Tree) {
			pkg := tr.Packages[0]
			pkg.Files["files/core-components.yaml"].SHA256 = digest("patched")
			pkg.ConfigMaps[0].Components.SHA256 = digest("gzip of patched")
			pkg.ConfigMaps[0].Components.Blob.RawSHA256 = digest("patched")
		}, nil, VersionReused, "CoreProvider/cluster-api", "components YAML"},
		{"pins changed without a bump", func(tr *model.Tree) {
			pp := &tr.Packages[1].Pins.File.Providers[1]
			pp.Sources[0].SHA256 = strings.Repeat("e", 64)
		}, nil, VersionReused, "InfrastructureProvider/kubevirt", "pins:"},
		{"another release under the tag", func(tr *model.Tree) {
			a := proxmox(tr).Artifact
			a.Config.Version, a.Config.Release = "v0.7.6", "v0.7.6-infraprovider-proxmox"
		}, nil, VersionReused, "InfrastructureProvider/proxmox", `upstream version "v0.7.6" in the registry, "v0.7.7" in the tree`},
		{"not a pinseal artifact", func(tr *model.Tree) {
			a := core(tr).Artifact
			a.Config, a.ConfigMediaType = nil, "application/vnd.oci.empty.v1+json"
		}, nil, VersionReused, "CoreProvider/cluster-api", "not a pinseal provider release"},
		{"unsigned", func(tr *model.Tree) {
			core(tr).Artifact.Signature = model.Signature{Checked: true, Reason: "no-signature"}
		}, nil, Signature, "CoreProvider/cluster-api", "is not signed"},
		{"signed by another key", func(tr *model.Tree) {
			core(tr).Artifact.Signature = model.Signature{Checked: true, Reason: "other-key"}
		}, nil, Signature, "CoreProvider/cluster-api", "none of the trusted keys"},
		{"signature copied from another digest", func(tr *model.Tree) {
			core(tr).Artifact.Signature = model.Signature{Checked: true, Reason: "wrong-digest", KeyID: "sha256:key"}
		}, nil, Signature, "CoreProvider/cluster-api", "for another digest"},
		{"no attestation", func(tr *model.Tree) {
			proxmox(tr).Artifact.Provenance = model.Provenance{Checked: true, Reason: "no-signature"}
		}, nil, Provenance, "InfrastructureProvider/proxmox", "has no provenance attestation"},
		{"attestation about another digest", func(tr *model.Tree) {
			proxmox(tr).Artifact.Provenance = model.Provenance{Checked: true, Found: true, Reason: "wrong-digest"}
		}, nil, Provenance, "InfrastructureProvider/proxmox", "about another artifact"},
		{"materials differ from the pins", func(tr *model.Tree) {
			pr := &proxmox(tr).Artifact.Provenance
			pr.Materials[0].SHA256 = strings.Repeat("f", 64)
		}, nil, Provenance, "InfrastructureProvider/proxmox", "other materials than the artifact's pins"},
		{"extra material", func(tr *model.Tree) {
			pr := &proxmox(tr).Artifact.Provenance
			pr.Materials = append(pr.Materials, pin.Source{URL: "https://evil.example/x.yaml", SHA256: strings.Repeat("0", 64)})
		}, nil, Provenance, "InfrastructureProvider/proxmox", "https://evil.example/x.yaml"},
		{"provenance lists an image the components do not run", func(tr *model.Tree) {
			pr := &proxmox(tr).Artifact.Provenance
			pr.Images = append(pr.Images, "evil.example/miner:v1")
		}, nil, Provenance, "InfrastructureProvider/proxmox", "it lists evil.example/miner:v1, which the tree's release v0.7.7-infraprovider-proxmox do not run"},
		{"provenance misses an image the components run", func(tr *model.Tree) {
			pkg := tr.Packages[0]
			pkg.Images = append(pkg.Images, model.Image{Ref: "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1", Release: core(tr).Version})
		}, nil, Provenance, "CoreProvider/cluster-api", "it does not list registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1"},
		{"artifact's YAML layer runs another image than the provenance lists", func(tr *model.Tree) {
			a := core(tr).Artifact
			a.Content = &model.ArtifactContent{Images: []string{"registry.k8s.io/cluster-api/cluster-api-controller:v1.10.2"}}
		}, nil, Provenance, "CoreProvider/cluster-api", "names other images than the artifact's components run"},
		{"YAML layer titled for another release", func(tr *model.Tree) {
			a := core(tr).Artifact
			delete(a.Layers, "components.yaml")
			a.YAMLTitle = "core-cluster-api-v1.10.0-core-components.yaml"
			a.Layers[a.YAMLTitle] = a.YAMLSHA256
		}, nil, OCIInstall, "CoreProvider/cluster-api", "finds no components as core-cluster-api-v1.10.1-core-components.yaml or core-components.yaml or components.yaml"},
		{"metadata read from another layer", func(tr *model.Tree) {
			a := proxmox(tr).Artifact
			a.Layers["infrastructure-proxmox-v0.7.7-infraprovider-proxmox-metadata.yaml"] = digest("other metadata").String()
		}, nil, OCIInstall, "InfrastructureProvider/proxmox", "reads metadata from layer infrastructure-proxmox-v0.7.7-infraprovider-proxmox-metadata.yaml"},
		{"builder not allowed", func(tr *model.Tree) {}, []string{"https://example.com/other-builder"},
			Provenance, "CoreProvider/cluster-api", "which the policy does not allow"},
		{"fetchConfig.oci registry not allowed", func(tr *model.Tree) {
			a := core(tr).Artifact
			*a = model.Artifact{Ref: "other.example/capi/core-cluster-api:v1.10.1-core", Repository: "other.example/capi/core-cluster-api",
				OCISource: true, Refused: "registry other.example is not allowed"}
		}, nil, RegistryDigest, "CoreProvider/cluster-api", "which was not checked"},
		{"no trusted keys", func(tr *model.Tree) {
			core(tr).Artifact.Signature = model.Signature{Checked: true, Reason: "no-trusted-keys"}
		}, nil, Signature, "CoreProvider/cluster-api", "no trusted keys"},
		{"attested by another key", func(tr *model.Tree) {
			proxmox(tr).Artifact.Provenance = model.Provenance{Checked: true, Found: true, Reason: "other-key"}
		}, nil, Provenance, "InfrastructureProvider/proxmox", "signed by none of the trusted keys"},
	}
	// The settings each hint asks to change (none for the others).
	settings := map[string][]report.Setting{
		"registry unreachable":                 {report.SettingPlainHTTP},
		"signed by another key":                {report.SettingTrustedKeys},
		"fetchConfig.oci registry not allowed": {report.SettingAllowRegistry, report.SettingPlainHTTP},
		"no trusted keys":                      {report.SettingTrustedKeys},
		"attested by another key":              {report.SettingTrustedKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := cleanTree()
			publish(tree)
			tc.mutate(tree)
			fs := runRegistry(tree, tc.builders)
			if got := checksOf(fs); !slices.Equal(got, []string{tc.check}) {
				t.Fatalf("red checks = %v, want [%s]:\n%+v", got, tc.check, fs)
			}
			if fs[0].Provider != tc.provider || !strings.Contains(fs[0].Message+"\n"+fs[0].Detail, tc.want) || fs[0].Hint == "" {
				t.Errorf("finding = %+v, want provider %s and %q", fs[0], tc.provider, tc.want)
			}
			if !slices.Equal(fs[0].Settings, settings[tc.name]) {
				t.Errorf("settings %q, want %q (hint %q)", fs[0].Settings, settings[tc.name], fs[0].Hint)
			}
			for _, f := range fs {
				if flags := hinttest.FindingFlags(f); len(flags) > 0 {
					t.Errorf("finding names flags %q of an interface; name the setting (report.Setting) instead:\n%s\n%s", flags, f.Message, f.Hint)
				}
			}
		})
	}
}

func TestRegistryFindingLocations(t *testing.T) {
	tree := cleanTree()
	publish(tree)
	tree.Packages[0].ConfigMaps[0].Components.SHA256 = digest("other gzip")
	fs := runRegistry(tree, nil)
	if len(fs) != 1 || fs[0].File != "packages/system/core/files/components.gz" || fs[0].Package != "packages/system/core" {
		t.Fatalf("blob difference located at %+v", fs)
	}
	tree = cleanTree()
	publish(tree)
	tree.Packages[1].Providers[1].Artifact.Config.Contract = "v1beta2"
	fs = runRegistry(tree, nil)
	if len(fs) != 1 || fs[0].File != "packages/system/infra/templates/providers.yaml" || fs[0].Line != 12 {
		t.Fatalf("version-reused located at %+v", fs)
	}
}

func TestComparePins(t *testing.T) {
	a := pin.Source{URL: "https://x/a", SHA256: strings.Repeat("a", 64), To: "files/a"}
	b := pin.Source{URL: "https://x/b", SHA256: strings.Repeat("b", 64), To: "files/b"}
	moved := a
	moved.To = "files/elsewhere"
	upper := a
	upper.SHA256 = strings.ToUpper(a.SHA256)
	changed := a
	changed.SHA256 = strings.Repeat("c", 64)
	tests := []struct {
		name      string
		want, got []pin.Source
		n         int
	}{
		{"equal", []pin.Source{a, b}, []pin.Source{b, a}, 0},
		{"both empty", nil, []pin.Source{}, 0},
		{"vendored path ignored", []pin.Source{a}, []pin.Source{moved}, 0},
		{"case ignored", []pin.Source{a}, []pin.Source{upper}, 0},
		{"missing", []pin.Source{a, b}, []pin.Source{a}, 1},
		{"extra", []pin.Source{a}, []pin.Source{a, b}, 1},
		{"changed", []pin.Source{a, b}, []pin.Source{changed, b}, 1},
	}
	for _, tc := range tests {
		if d := comparePins(tc.want, tc.got, "pins", "materials"); len(d) != tc.n {
			t.Errorf("%s: %d differences %q, want %d", tc.name, len(d), d, tc.n)
		}
	}
}

// artifactTree is one artifact as `verifier verify REF` models it.
func artifactTree(mutate func(a *model.Artifact)) *model.Tree {
	yml := "apiVersion: v1\nkind: Namespace\n"
	a := &model.Artifact{
		Ref: "r.example/capi/core-cluster-api:v1.10.1-core", Repository: "r.example/capi/core-cluster-api", Found: true,
		Digest:     digest("manifest").String(),
		BlobSHA256: digest("gz").String(), MetadataSHA256: digest("md").String(), YAMLSHA256: digest(yml).String(),
		YAMLTitle: "components.yaml",
		Config: &model.ArtifactConfig{Kind: "CoreProvider", Name: "cluster-api", Type: "core", Release: "v1.10.1-core",
			Version: "v1.10.1", Contract: "v1beta1"},
		Signature:  model.Signature{Checked: true, Valid: true},
		Provenance: model.Provenance{Checked: true, Found: true, Valid: true, BuilderID: version.BuilderID},
		Content: &model.ArtifactContent{
			Blob:     &blob.Info{Size: 10, SHA256: digest("gz"), RawSize: int64(len(yml)), RawSHA256: digest(yml), Members: 1},
			YAMLSize: int64(len(yml)), YAMLDigest: digest(yml),
			Metadata: &model.Metadata{ReleaseSeries: []model.ReleaseSeries{{Major: 1, Minor: 10, Contract: "v1beta1"}}},
			Version:  "v1.10.1",
		},
	}
	setLayers(a)
	if mutate != nil {
		mutate(a)
	}
	p := &model.Provider{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1-core", FetchOCI: a.Pinned(), Artifact: a}
	pkg := &model.Package{Path: a.Repository, Pins: &pin.Set{}, Files: map[string]*model.File{}, Providers: []*model.Provider{p}}
	return &model.Tree{Root: a.Ref, Packages: []*model.Package{pkg}}
}

// TestRepositoryNamedByTree: a provider's release in the repository its
// spec.fetchConfig.oci names (a mirror's own naming) is its release; the
// same artifact in another repository than <type>-<name> that the tree
// does not name is not.
func TestRepositoryNamedByTree(t *testing.T) {
	for _, tc := range []struct {
		oci  string
		want int
	}{
		{"r.example/capi/core-cluster-api-components", 0},
		{"r.example/capi/other", 1},
		{"", 1},
		{"pinned", 1}, // verifier verify REF's model: the artifact by digest, which the operator cannot read
	} {
		tr := artifactTree(func(a *model.Artifact) { a.Repository = "r.example/capi/core-cluster-api-components" })
		p := tr.Packages[0].Providers[0]
		p.Version = "v1.10.1-core"
		if tc.oci != "pinned" {
			p.FetchOCI = tc.oci
		}
		var got []report.Finding
		for _, f := range versionReused(NewInput(tr)) {
			if strings.Contains(f.Message, "belong in repository") {
				got = append(got, f)
			}
		}
		if len(got) != tc.want {
			t.Errorf("fetchConfig.oci %q: %d findings %+v, want %d", tc.oci, len(got), got, tc.want)
		}
	}
}

func TestArtifactChecks(t *testing.T) {
	run := func(tr *model.Tree) []report.Finding {
		var out []report.Finding
		for _, c := range ArtifactChecks(nil) {
			out = append(out, c.Run(NewInput(tr))...)
		}
		return out
	}
	if fs := run(artifactTree(nil)); len(fs) != 0 {
		t.Fatalf("clean artifact: %+v", fs)
	}
	tests := []struct {
		name   string
		mutate func(a *model.Artifact)
		check  string
		want   string
	}{
		{"blob inflates to other YAML", func(a *model.Artifact) {
			a.Content.Blob.RawSHA256 = digest("other")
			a.Content.Diff = &blob.Diff{Line: 2, Offset: 15, Excerpt: "@@ line 2 @@\n-kind: Namespace\n+kind: Secret\n"}
		}, BlobYAML, "first difference at line 2"},
		{"header embeds a name", func(a *model.Artifact) {
			a.Content.Blob.Header = blob.Header{HasName: true, Name: "core-components.yaml"}
		}, BlobHeader, `embeds file name "core-components.yaml"`},
		{"blob truncated", func(a *model.Artifact) {
			a.Content.Blob.Err = &blob.CorruptError{Kind: blob.Truncated, Offset: 9}
		}, model.CheckBlobCorrupt, "truncated"},
		{"no series", func(a *model.Artifact) {
			a.Content.Metadata.ReleaseSeries[0].Minor = 9
		}, MetadataSeries, "no releaseSeries for 1.10"},
		{"config contract disagrees", func(a *model.Artifact) {
			a.Config.Contract = "v1beta2"
		}, MetadataSeries, "says contract v1beta2"},
		{"metadata does not parse", func(a *model.Artifact) {
			a.Content.Metadata = &model.Metadata{Err: errString("metadata does not parse")}
		}, MetadataSeries, "does not parse"},
		{"tag holds another release", func(a *model.Artifact) {
			a.Config.Release = "v1.10.0-core"
		}, VersionReused, `release "v1.10.0-core" in the registry`},
		{"copied into another provider's repository", func(a *model.Artifact) {
			a.Repository = "r.example/capi/infrastructure-proxmox"
		}, VersionReused, "whose releases belong in repository core-cluster-api"},
		{"provenance names another release", func(a *model.Artifact) {
			a.Provenance.Release = "v1.9.0-core"
		}, VersionReused, `release "v1.9.0-core" in the provenance`},
		{"provenance names the release", func(a *model.Artifact) {
			a.Provenance.Release = "v1.10.1-core"
		}, "", ""},
		{"signature image too large", func(a *model.Artifact) {
			a.Signature = model.Signature{Checked: true, Reason: "too-large", Message: "layers 65 exceeds the verifier's limit of 64"}
		}, Signature, "exceeds the verifier's bounds"},
		{"attestation image too large", func(a *model.Artifact) {
			a.Provenance = model.Provenance{Checked: true, Reason: "too-large"}
		}, Provenance, "exceeds the verifier's bounds"},
		{"unsigned", func(a *model.Artifact) {
			a.Signature = model.Signature{Checked: true, Reason: "no-signature"}
		}, Signature, "is not signed"},
		{"tampered, config unreadable", func(a *model.Artifact) {
			a.Err, a.Tampered, a.Config = "stored content does not match", true, nil
		}, RegistryDigest, "do not match the digests in its manifest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := run(artifactTree(tc.mutate))
			if tc.check == "" {
				if len(fs) != 0 {
					t.Fatalf("findings %+v, want none", fs)
				}
				return
			}
			if got := checksOf(fs); !slices.Equal(got, []string{tc.check}) {
				t.Fatalf("red checks = %v, want [%s]: %+v", got, tc.check, fs)
			}
			if !strings.Contains(fs[0].Message, tc.want) {
				t.Errorf("message %q lacks %q", fs[0].Message, tc.want)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestOCIInstall: for every provider kind, which layer titles every
// operator release with OCI support installs from, old and new type names.
func TestOCIInstall(t *testing.T) {
	yml, md, other := digest("yaml").String(), digest("metadata").String(), digest("other yaml").String()
	names := map[string]string{
		"CoreProvider": "cluster-api", "BootstrapProvider": "talos", "ControlPlaneProvider": "kamaji",
		"InfrastructureProvider": "proxmox", "IPAMProvider": "in-cluster", "AddonProvider": "helm",
		"RuntimeExtensionProvider": "rx",
	}
	oldType := map[string]string{
		"CoreProvider": "core", "BootstrapProvider": "bootstrap", "ControlPlaneProvider": "controlplane",
		"InfrastructureProvider": "infrastructure", "IPAMProvider": "ipam", "AddonProvider": "addon",
		"RuntimeExtensionProvider": "runtimeextension",
	}
	const ver = "v0.19.0-cozystack.0"
	tests := []struct {
		name string
		// layers for kind and name; yamlTitle is the YAML layer
		layers    func(kind, name string) (map[string]string, string)
		redKinds  []string // kinds the check must flag
		wantInMsg string
	}{
		{"pinseal layout", func(kind, name string) (map[string]string, string) {
			return map[string]string{"components.gz": digest("gz").String(), "metadata.yaml": md, "components.yaml": yml}, "components.yaml"
		}, nil, ""},
		{"typed title, pre-July-2025 spelling", func(kind, name string) (map[string]string, string) {
			t := oldType[kind] + "-components.yaml"
			return map[string]string{"metadata.yaml": md, t: yml}, t
		}, []string{"ControlPlaneProvider"}, `operator v0.23.0 and later (type "control-plane"): the operator (type "control-plane") finds no components`},
		{"typed title, current spelling", func(kind, name string) (map[string]string, string) {
			t := operator.Types(kind)[0].Type + "-components.yaml"
			return map[string]string{"metadata.yaml": md, t: yml}, t
		}, []string{"ControlPlaneProvider"}, `operator v0.16.0 to v0.22.x (type "controlplane")`},
		{"full title, current spelling", func(kind, name string) (map[string]string, string) {
			t := operator.Types(kind)[0].Type + "-" + name + "-" + ver + "-components.yaml"
			return map[string]string{"metadata.yaml": md, t: yml}, t
		}, []string{"ControlPlaneProvider"}, `(type "controlplane") finds no components`},
		{"current title beside a different components.yaml", func(kind, name string) (map[string]string, string) {
			t := operator.Types(kind)[0].Type + "-components.yaml"
			return map[string]string{"metadata.yaml": md, t: yml, "components.yaml": other}, t
		}, []string{"ControlPlaneProvider"}, `(type "controlplane") installs layer components.yaml`},
		{"no metadata title the operator knows", func(kind, name string) (map[string]string, string) {
			return map[string]string{"metadata-" + name + ".yaml": md, "components.yaml": yml}, "components.yaml"
		}, []string{"AddonProvider", "BootstrapProvider", "ControlPlaneProvider", "CoreProvider", "IPAMProvider", "InfrastructureProvider", "RuntimeExtensionProvider"}, "finds no metadata as"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var red []string
			for _, kind := range operator.Kinds() {
				layers, yt := tc.layers(kind, names[kind])
				p := &model.Provider{Kind: kind, Name: names[kind], Version: ver}
				p.Artifact = &model.Artifact{Ref: "r/x:" + ver, Repository: "r/x", Found: true, Digest: digest("m").String(),
					YAMLTitle: yt, YAMLSHA256: layers[yt], MetadataSHA256: md, Layers: layers}
				tree := &model.Tree{Packages: []*model.Package{{Path: "p", Providers: []*model.Provider{p}}}}
				fs := ociInstall(NewInput(tree))
				if len(fs) == 0 {
					continue
				}
				red = append(red, kind)
				if len(fs) != 1 || fs[0].Check != OCIInstall || !strings.Contains(fs[0].Message+"\n"+fs[0].Detail, tc.wantInMsg) || fs[0].Hint == "" {
					t.Errorf("%s: %+v, want one finding containing %q", kind, fs, tc.wantInMsg)
				}
			}
			if !slices.Equal(red, tc.redKinds) {
				t.Errorf("red for %v, want %v", red, tc.redKinds)
			}
		})
	}
}
