package check

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/testkit/hinttest"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// A model-level fixture: a core package (pin.yaml) and an infrastructure
// package with two providers (Makefile version, pins), all in one namespace.

func digest(s string) blob.Digest { return sha256.Sum256([]byte(s)) }

func hexOf(s string) string { d := digest(s); return hex.EncodeToString(d[:]) }

const ns = "cozy-cluster-api"

type provSpec struct {
	kind, name, version, release string
	labels                       map[string]string
	yaml, blobFile, meta         string
	series                       []model.ReleaseSeries
}

func metaText(series []model.ReleaseSeries) string {
	s := "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n"
	for _, r := range series {
		s += fmt.Sprintf("- major: %d\n  minor: %d\n  contract: %s\n", r.Major, r.Minor, r.Contract)
	}
	return s
}

func yamlText(name string) string {
	return "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + name + "-system\n"
}

func gzDigest(name string) blob.Digest { return digest("gzip of " + name) }

func newPkg(path string, pinSource string, specs ...provSpec) *model.Package {
	pkg := &model.Package{
		Path: path, Dir: "/tree/" + path, Chart: true, Namespace: ns,
		Pins:  &pin.Set{Source: pinSource},
		Files: map[string]*model.File{},
	}
	var pf pin.File
	for i, s := range specs {
		y, m := yamlText(s.name), metaText(s.series)
		pkg.Providers = append(pkg.Providers, &model.Provider{
			Kind: s.kind, Name: s.name, Version: s.release,
			Selector: &model.Selector{MatchLabels: s.labels},
			Location: model.Location{File: "templates/providers.yaml", Line: 2 + 10*i},
		})
		info := &blob.Info{Size: 100, SHA256: gzDigest(s.name), RawSize: int64(len(y)), RawSHA256: digest(y), Members: 1}
		pkg.ConfigMaps = append(pkg.ConfigMaps, &model.ConfigMap{
			Name: s.release, Labels: s.labels,
			Annotations: map[string]string{model.CompressedAnnotation: "true"},
			Location:    model.Location{File: "templates/configmaps.yaml", Line: 2 + 20*i},
			Components: &model.Components{
				InBinaryData: true, Gzip: true, Size: 100, SHA256: gzDigest(s.name), Blob: info,
			},
			Metadata:    &model.Metadata{Kind: "Metadata", ReleaseSeries: s.series},
			MetadataRaw: []byte(m),
		})
		pkg.Files[s.yaml] = &model.File{Path: s.yaml, Size: int64(len(y)), SHA256: digest(y)}
		pkg.Files[s.meta] = &model.File{Path: s.meta, Size: int64(len(m)), SHA256: digest(m)}
		pkg.Files[s.blobFile] = &model.File{Path: s.blobFile, Size: 100, SHA256: gzDigest(s.name), Blob: info}
		if pinSource != "" {
			pf.Providers = append(pf.Providers, pin.Provider{
				Kind: s.kind, Name: s.name, Version: s.version, Release: s.release,
				Sources: []pin.Source{
					{URL: "https://example.com/" + s.name + "/" + s.version + "/components.yaml", SHA256: hexOf(y), To: s.yaml},
					{URL: "https://example.com/" + s.name + "/" + s.version + "/metadata.yaml", SHA256: hexOf(m), To: s.meta},
				},
				Blob: s.blobFile,
			})
		}
	}
	if pinSource != "" {
		pkg.Pins.File = &pf
	}
	pkg.Layout = layout.Of(pkg) // as the loader decides it
	return pkg
}

func cleanTree() *model.Tree {
	core := newPkg("packages/system/core", "pin.yaml", provSpec{
		kind: "CoreProvider", name: "cluster-api", version: "v1.10.1", release: "v1.10.1-core",
		labels: map[string]string{"core-components": "cozy"},
		yaml:   "files/core-components.yaml", blobFile: "files/components.gz", meta: "files/metadata.yaml",
		series: []model.ReleaseSeries{{Major: 1, Minor: 9, Contract: "v1beta1"}, {Major: 1, Minor: 10, Contract: "v1beta1"}},
	})
	infra := newPkg("packages/system/infra", "Makefile",
		provSpec{
			kind: "InfrastructureProvider", name: "proxmox", version: "v0.7.7", release: "v0.7.7-infraprovider-proxmox",
			labels: map[string]string{"infrastructure-components": "cozy", "infrastructure-provider": "proxmox"},
			yaml:   "files/proxmox-infrastructure-components.yaml", blobFile: "files/components-proxmox.gz", meta: "files/metadata-proxmox.yaml",
			series: []model.ReleaseSeries{{Major: 0, Minor: 7, Contract: "v1beta1"}},
		},
		provSpec{
			kind: "InfrastructureProvider", name: "kubevirt", version: "v0.1.9", release: "v0.1.9-cozystack.0",
			labels: map[string]string{"infrastructure-components": "cozy", "infrastructure-provider": "kubevirt"},
			yaml:   "files/kubevirt-infrastructure-components.yaml", blobFile: "files/components-kubevirt.gz", meta: "files/metadata-kubevirt.yaml",
			series: []model.ReleaseSeries{{Major: 0, Minor: 1, Contract: "v1beta1"}},
		})
	infra.Pins.Versions = []pin.Var{{Name: "CAPMOX_VERSION", Value: "v0.7.7", Known: true, File: "Makefile", Line: 4}}
	return &model.Tree{Root: "/tree", Packages: []*model.Package{core, infra}, Core: core}
}

// runAll runs every built-in check.
func runAll(t *model.Tree) []report.Finding {
	var out []report.Finding
	for _, c := range Builtin(nil, nil) {
		out = append(out, c.Run(NewInput(t))...)
	}
	return out
}

func checksOf(fs []report.Finding) []string {
	var ids []string
	for _, f := range fs {
		if !slices.Contains(ids, f.Check) {
			ids = append(ids, f.Check)
		}
	}
	slices.Sort(ids)
	return ids
}

func TestCleanTreeHasNoFindings(t *testing.T) {
	if fs := runAll(cleanTree()); len(fs) > 0 {
		for _, f := range fs {
			t.Errorf("unexpected finding: %+v", f)
		}
	}
}

func core(t *model.Tree) *model.Package  { return t.Packages[0] }
func infra(t *model.Tree) *model.Package { return t.Packages[1] }

// TestMutations mutates the clean model in one way each and expects exactly
// the named check to report, with the given words in its finding.
func TestMutations(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *model.Tree)
		check  string
		count  int
		want   []string // substrings of the first finding's message, hint or detail
		not    []string // substrings its message must not hold (said twice)
		file   string   // expected File of the first finding ("" = don't care)
		line   int
		// settings the first finding's hint asks to change
		settings []report.Setting
	}{
		{
			name: "yaml edited, blob not rebuilt",
			mutate: func(t *model.Tree) {
				c := core(t).ConfigMaps[0].Components
				c.Blob.RawSHA256 = digest("old yaml")
				c.Diff = &blob.Diff{Line: 42, Offset: 1234, Excerpt: "@@ -42 +42 @@\n-        startupProbe:\n+        livenessProbe:"}
			},
			check: BlobYAML, count: 1, want: []string{"line 42", "byte 1234", "files/core-components.yaml", "builder build packages/system/core", "gzip -9 -n -c files/core-components.yaml > files/components.gz", "startupProbe"},
			file: "packages/system/core/files/core-components.yaml", line: 42,
		},
		{
			name: "gzip components match no vendored YAML",
			mutate: func(t *model.Tree) {
				core(t).Layout.ConfigMap(core(t).ConfigMaps[0]).Components = ""
			},
			check: BlobYAML, count: 1, want: []string{"no vendored YAML beside them", "nobody can review"},
		},
		{
			name: "ConfigMap without components",
			mutate: func(t *model.Tree) {
				core(t).ConfigMaps[0].Components = nil
			},
			check: BlobYAML, count: 1, want: []string{"has no components"},
		},
		{
			name: "gzip without -n",
			mutate: func(t *model.Tree) {
				h := &core(t).ConfigMaps[0].Components.Blob.Header
				h.HasName, h.Name = true, "core-components.yaml"
				h.MTime = 1745280000
				h.ModTime = time.Unix(1745280000, 0)
			},
			check: BlobHeader, count: 1,
			want: []string{`embeds file name "core-components.yaml"`, "modification time 2025-04-22T00:00:00Z", "gzip -9 -n -c files/core-components.yaml > files/components.gz"},
			file: "packages/system/core/files/components.gz",
		},
		{
			name: "truncated blob",
			mutate: func(t *model.Tree) {
				b := core(t).ConfigMaps[0].Components.Blob
				b.Err = &blob.CorruptError{Kind: blob.Truncated, Offset: 57}
			},
			check: model.CheckBlobCorrupt, count: 1, want: []string{"truncated", "compressed byte 57"},
		},
		{
			name: "gzip bomb stops at limit",
			mutate: func(t *model.Tree) {
				b := core(t).ConfigMaps[0].Components.Blob
				b.RawSize = 256 << 20
				b.Err = &blob.CorruptError{Kind: blob.TooLarge, Offset: -1, Detail: "inflates to more than 268435456 bytes; stopped there"}
			},
			check: model.CheckBlobCorrupt, count: 1, want: []string{"size limit", "268435456 bytes", "raise the inflate limit"}, not: []string{"stopped there"},
			settings: []report.Setting{report.SettingInflateLimit},
		},
		{
			name: "corrupt vendored blob no ConfigMap carries",
			mutate: func(t *model.Tree) {
				core(t).Files["files/old.gz"] = &model.File{Path: "files/old.gz", Blob: &blob.Info{Err: &blob.CorruptError{Kind: blob.MultiMember, Offset: 300}, Members: 2}}
			},
			check: model.CheckBlobCorrupt, count: 1, want: []string{"files/old.gz", "2 gzip members"},
		},
		{
			name: "ConfigMap renamed",
			mutate: func(t *model.Tree) {
				core(t).ConfigMaps[0].Name = "v1.10.1-core-old"
			},
			check: ConfigMapVersion, count: 1, want: []string{`spec.version is "v1.10.1-core"`, `"v1.10.1-core-old"`},
			file: "packages/system/core/templates/providers.yaml", line: 2,
		},
		{
			name: "spec.version empty",
			mutate: func(t *model.Tree) {
				infra(t).Providers[1].Version = ""
			},
			check: ConfigMapVersion, count: 1, want: []string{"no spec.version"},
		},
		{
			name: "version label overrides name as the operator reads it",
			mutate: func(t *model.Tree) {
				core(t).ConfigMaps[0].Labels = map[string]string{"core-components": "cozy", model.VersionLabel: "v1.10.0"}
			},
			check: ConfigMapVersion, count: 1, want: []string{"label provider.cluster.x-k8s.io/version"},
		},
		{
			name: "overlapping labels in another package of the namespace",
			mutate: func(t *model.Tree) {
				infra(t).ConfigMaps[1].Labels["core-components"] = "cozy"
			},
			check: SelectorUnique, count: 1, want: []string{"matches 2 ConfigMaps", `"v1.10.1-core"`, `"v0.1.9-cozystack.0"`, "packages/system/infra/templates/configmaps.yaml:22"},
		},
		{
			name: "selector matches nothing",
			mutate: func(t *model.Tree) {
				infra(t).Providers[0].Selector.MatchLabels = map[string]string{"infrastructure-provider": "capmox"}
			},
			check: SelectorUnique, count: 1, want: []string{"matches no ConfigMap", `namespace "cozy-cluster-api"`},
		},
		{
			name: "invalid selector operator",
			mutate: func(t *model.Tree) {
				infra(t).Providers[0].Selector.MatchExpressions = []model.Requirement{{Key: "x", Operator: "Equals", Values: []string{"y"}}}
			},
			check: SelectorUnique, count: 1, want: []string{"not a valid label selector operator"},
		},
		{
			name: "non-semver ConfigMap name and spec.version",
			mutate: func(t *model.Tree) {
				infra(t).ConfigMaps[1].Name = "kubevirt-latest"
				infra(t).Providers[1].Version = "kubevirt-latest"
				// A pin would see the release change too.
				infra(t).Pins.File.Providers[1].Release = "kubevirt-latest"
				infra(t).Pins.File.Providers[1].Version = ""
			},
			check: SelectorSemver, count: 1, want: []string{`"kubevirt-latest"`, "not semver", "InfrastructureProvider/kubevirt"},
		},
		{
			name: "missing compressed annotation",
			mutate: func(t *model.Tree) {
				delete(infra(t).ConfigMaps[0].Annotations, model.CompressedAnnotation)
			},
			check: CompressedAnnotation, count: 1, want: []string{"is missing", `provider.cluster.x-k8s.io/compressed: "true"`},
		},
		{
			name: "annotation on plain YAML",
			mutate: func(t *model.Tree) {
				c := infra(t).ConfigMaps[0].Components
				c.Gzip, c.InBinaryData, c.Blob = false, false, nil
				c.SHA256 = digest(yamlText("proxmox"))
			},
			check: CompressedAnnotation, count: 1, want: []string{"is not gzip"},
		},
		{
			name: "metadata without the series",
			mutate: func(t *model.Tree) {
				cm := core(t).ConfigMaps[0]
				cm.Metadata.ReleaseSeries = cm.Metadata.ReleaseSeries[:1]
			},
			check: MetadataSeries, count: 1, want: []string{"no releaseSeries for 1.10", "it lists 1.9"},
			file: "packages/system/core/files/metadata.yaml",
		},
		{
			name: "no metadata in ConfigMap",
			mutate: func(t *model.Tree) {
				infra(t).ConfigMaps[0].Metadata = nil
				infra(t).ConfigMaps[0].MetadataRaw = nil
			},
			check: MetadataSeries, count: 1, want: []string{"no data.metadata"},
		},
		{
			name: "metadata does not parse",
			mutate: func(t *model.Tree) {
				infra(t).ConfigMaps[0].Metadata = &model.Metadata{Err: errors.New("line 3: mapping values are not allowed")}
			},
			check: MetadataSeries, count: 1, want: []string{"does not parse", "line 3"},
		},
		{
			name: "contract v1beta2 against core v1beta1",
			mutate: func(t *model.Tree) {
				infra(t).ConfigMaps[0].Metadata.ReleaseSeries[0].Contract = "v1beta2"
			},
			check: Contract, count: 1, want: []string{"declares contract v1beta2", "serves v1beta1", "CoreProvider/cluster-api v1.10.1-core"},
			file: "packages/system/infra/files/metadata-proxmox.yaml",
		},
		{
			name: "Makefile version differs from release",
			mutate: func(t *model.Tree) {
				infra(t).Pins.Versions[0].Value = "v0.7.8"
			},
			check: PinVersion, count: 1, want: []string{"CAPMOX_VERSION = v0.7.8", `"v0.7.7-infraprovider-proxmox"`},
			file: "packages/system/infra/Makefile", line: 4,
		},
		{
			name: "computed Makefile version is unknown",
			mutate: func(t *model.Tree) {
				infra(t).Pins.Versions[0] = pin.Var{Name: "CAPMOX_VERSION", Value: "$(shell cat VERSION)", Known: false, File: "Makefile", Line: 4}
			},
			check: PinVersion, count: 1, want: []string{"computed", "unknown"},
		},
		{
			name: "pin.yaml version differs from release",
			mutate: func(t *model.Tree) {
				pp := &core(t).Pins.File.Providers[0]
				pp.Version, pp.Release = "v1.10.2", "v1.10.2-core"
			},
			check: PinVersion, count: 2, want: []string{`spec.version is "v1.10.1-core" but pin.yaml pins release "v1.10.2-core"`},
		},
		{
			name: "vendored file differs from pin",
			mutate: func(t *model.Tree) {
				core(t).Files["files/metadata.yaml"].SHA256 = digest("tampered")
			},
			check: model.CheckPinDigest, count: 1, want: []string{"files/metadata.yaml does not match its pin", hexOf("tampered")},
			file: "packages/system/core/files/metadata.yaml",
		},
		{
			name: "pinned file not vendored",
			mutate: func(t *model.Tree) {
				delete(core(t).Files, "files/metadata.yaml")
				core(t).ConfigMaps[0].MetadataRaw = nil
			},
			check: model.CheckPinDigest, count: 1, want: []string{"not vendored"},
		},
		{
			name: "sha pin removed",
			mutate: func(t *model.Tree) {
				pp := &core(t).Pins.File.Providers[0]
				pp.Sources = pp.Sources[:1]
			},
			check: PinMissing, count: 1, want: []string{"files/metadata.yaml is vendored but pin.yaml pins no source"},
		},
		{
			name: "download without sha",
			mutate: func(t *model.Tree) {
				infra(t).Pins.Unpinned = []pin.Var{{Name: "KUBEVIRT_URL", Value: "https://example.com/x.yaml", Known: true, File: "Makefile", Line: 7}}
			},
			check: PinMissing, count: 1, want: []string{"KUBEVIRT_URL", "no SHA-256 pin"},
			file: "packages/system/infra/Makefile", line: 7,
		},
		{
			name: "package with no pins at all",
			mutate: func(t *model.Tree) {
				infra(t).Pins = &pin.Set{}
			},
			check: PinMissing, count: 1, want: []string{"with no SHA-256 pin", "files/kubevirt-infrastructure-components.yaml"},
		},
		{
			name: "loader problem passes through",
			mutate: func(t *model.Tree) {
				infra(t).Problems = append(infra(t).Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "templates/x.yaml", Line: 3}, Message: "yaml: duplicate key"})
			},
			check: model.CheckPackageLoad, count: 1, want: []string{"duplicate key"}, file: "packages/system/infra/templates/x.yaml", line: 3,
		},
		{
			name: "loader problem outside any package",
			mutate: func(t *model.Tree) {
				t.Problems = append(t.Problems, model.Problem{Check: model.CheckPackageLoad, Location: model.Location{File: "packages/locked"}, Message: "cannot read packages/locked: permission denied"})
			},
			check: model.CheckPackageLoad, count: 1, want: []string{"permission denied"}, file: "packages/locked",
		},
		{
			name: "loader problem for undecodable components",
			mutate: func(t *model.Tree) {
				cm := infra(t).ConfigMaps[0]
				cm.Components = &model.Components{InBinaryData: true, DecodeErr: errors.New("illegal base64 data at input byte 4")}
				infra(t).Problems = append(infra(t).Problems, model.Problem{Check: model.CheckBlobCorrupt, Message: "binaryData.components is not valid base64"})
			},
			check: model.CheckBlobCorrupt, count: 1, want: []string{"base64"},
		},
		{
			name: "loader problem keeps its own check",
			mutate: func(t *model.Tree) {
				infra(t).Problems = append(infra(t).Problems, model.Problem{Check: model.CheckBlobCorrupt, Message: "binaryData.components is not valid base64"})
			},
			check: model.CheckBlobCorrupt, count: 1, want: []string{"base64"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := cleanTree()
			tc.mutate(tree)
			fs := runAll(tree)
			if got := checksOf(fs); !slices.Equal(got, []string{tc.check}) {
				for _, f := range fs {
					t.Logf("finding: %s: %s", f.Check, f.Message)
				}
				t.Fatalf("checks that reported = %v, want exactly [%s]", got, tc.check)
			}
			if len(fs) != tc.count {
				for _, f := range fs {
					t.Logf("finding: %s: %s", f.Check, f.Message)
				}
				t.Fatalf("%d findings, want %d", len(fs), tc.count)
			}
			f := fs[0]
			if !slices.Equal(f.Settings, tc.settings) {
				t.Errorf("settings %q, want %q (hint %q)", f.Settings, tc.settings, f.Hint)
			}
			for _, f := range fs {
				if flags := hinttest.FindingFlags(f); len(flags) > 0 {
					t.Errorf("finding names flags %q of an interface; name the setting (report.Setting) instead:\n%s\n%s", flags, f.Message, f.Hint)
				}
			}
			all := f.Message + "\n" + f.Hint + "\n" + f.Detail
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("finding lacks %q:\n%s", w, all)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(f.Message, w) {
					t.Errorf("message holds %q: %s", w, f.Message)
				}
			}
			if tc.file != "" && f.File != tc.file {
				t.Errorf("file = %q, want %q", f.File, tc.file)
			}
			if tc.line != 0 && f.Line != tc.line {
				t.Errorf("line = %d, want %d", f.Line, tc.line)
			}
			if tc.name == "loader problem outside any package" && f.Package != "." {
				t.Errorf("tree-level problem package = %q, want .", f.Package)
			}
			if f.Package == "" || f.Message == "" || (f.Hint == "" && !strings.HasPrefix(tc.name, "loader problem")) {
				t.Errorf("finding lacks package, message or hint: %+v", f)
			}
		})
	}
}

func TestContractV1beta2CoreServesV1beta1(t *testing.T) {
	tree := cleanTree()
	core(tree).ConfigMaps[0].Metadata.ReleaseSeries[1].Contract = "v1beta2"
	for _, s := range infra(tree).ConfigMaps {
		s.Metadata.ReleaseSeries[0].Contract = "v1beta1"
	}
	if fs := contract(NewInput(tree)); len(fs) != 0 {
		t.Fatalf("a v1beta2 core serves v1beta1 providers, got %v", fs)
	}
	infra(tree).ConfigMaps[0].Metadata.ReleaseSeries[0].Contract = "v1alpha4"
	if fs := contract(NewInput(tree)); len(fs) != 1 {
		t.Fatalf("v1alpha4 against a v1beta2 core: %d findings, want 1", len(fs))
	}
}

func TestContractSkippedWithoutCore(t *testing.T) {
	tree := cleanTree()
	infra(tree).ConfigMaps[0].Metadata.ReleaseSeries[0].Contract = "v1beta2"
	tree.Core = nil
	if fs := contract(NewInput(tree)); len(fs) != 0 {
		t.Fatalf("no core in tree: want no contract findings, got %v", fs)
	}
}

func TestSelectorsArePerNamespace(t *testing.T) {
	tree := cleanTree()
	// The same labels in another namespace do not collide.
	other := newPkg("packages/other/core", "pin.yaml", provSpec{
		kind: "CoreProvider", name: "cluster-api", version: "v1.10.1", release: "v1.10.1-core",
		labels: map[string]string{"core-components": "cozy"},
		yaml:   "files/core-components.yaml", blobFile: "files/components.gz", meta: "files/metadata.yaml",
		series: []model.ReleaseSeries{{Major: 1, Minor: 10, Contract: "v1beta1"}},
	})
	other.Namespace = "elsewhere"
	tree.Packages = append(tree.Packages, other)
	if fs := runAll(tree); len(fs) != 0 {
		t.Fatalf("packages in different namespaces: want no findings, got %v", fs)
	}
	// In the same namespace they do, for both providers.
	other.Namespace = ns
	fs := selectorUnique(NewInput(tree))
	if len(fs) != 2 {
		t.Fatalf("same namespace: %d selector-unique findings, want 2: %v", len(fs), fs)
	}
}

func TestSelectorMatchExpressions(t *testing.T) {
	tree := cleanTree()
	p := infra(tree).Providers[0]
	p.Selector = &model.Selector{MatchExpressions: []model.Requirement{
		{Key: "infrastructure-provider", Operator: "In", Values: []string{"proxmox"}},
		{Key: "infrastructure-components", Operator: "Exists"},
	}}
	ix := NewIndex(tree)
	s := ix.Select(infra(tree), p)
	if s.Err != nil || len(s.Matches) != 1 || s.Matches[0].ConfigMap.Name != "v0.7.7-infraprovider-proxmox" {
		t.Fatalf("matchExpressions: got %+v", s)
	}
	// An empty selector matches every ConfigMap of the namespace.
	p.Selector = &model.Selector{}
	if s := NewIndex(tree).Select(infra(tree), p); len(s.Matches) != 3 {
		t.Fatalf("empty selector: %d matches, want 3", len(s.Matches))
	}
}

func TestVersionOf(t *testing.T) {
	cm := &model.ConfigMap{Name: "v1.2.3-x"}
	if v, from := VersionOf(cm); v != "v1.2.3-x" || from != "name" {
		t.Errorf("VersionOf(name) = %q, %q", v, from)
	}
	cm.Labels = map[string]string{model.VersionLabel: "v1.2.4"}
	if v, from := VersionOf(cm); v != "v1.2.4" || !strings.Contains(from, "label") {
		t.Errorf("VersionOf(label) = %q, %q", v, from)
	}
}

// TestCatalog: IDs are unique and well formed, every check is on by
// default (an error or a warning, as its entry says), and only checks the tree alone answers have a function.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	idRE := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	for _, c := range Catalog() {
		if seen[c.ID] || !idRE.MatchString(c.ID) {
			t.Errorf("%q: an ID is unique, lowercase words joined by -", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Description == "" {
			t.Errorf("%s: missing title or description", c.ID)
		}
		if c.Severity != report.Error && c.Severity != report.Warning {
			t.Errorf("%s: default severity %q, want error or warning (a check is on unless a policy turns it off)", c.ID, c.Severity)
		}
		if (c.Run != nil) != (c.Needs() == "tree") {
			t.Errorf("%s: Run set = %v, but it needs %s", c.ID, c.Run != nil, c.Needs())
		}
	}
	for _, id := range []string{model.CheckPackageLoad, BlobYAML, ImageRelocation, Signature, ClusterCRD, WaiverExpired} {
		if !seen[id] {
			t.Errorf("the catalog lost %s", id)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
	extra := Check{ID: "custom-thing", Title: "Custom", Severity: report.Warning}
	rules := Rules(extra, Check{ID: Signature})
	if len(rules) != len(catalog)+1 || rules[len(rules)-1].ID != "custom-thing" {
		t.Errorf("Rules(extra) = %d rules, last %q", len(rules), rules[len(rules)-1].ID)
	}
}

// TestManyPackagesInOneNamespaceSelectTheirOwn: 500 packages in one
// namespace share a label and each has one of its own; every provider
// selects exactly its own ConfigMap, so the only findings are the missing
// pin files. (That the checks stay linear is measured, not asserted:
// BenchmarkBuiltin reports ns/package at 100, 1,000 and 10,000 packages.)
func TestManyPackagesInOneNamespaceSelectTheirOwn(t *testing.T) {
	tree := &model.Tree{Root: "/tree"}
	for i := range 500 {
		name := fmt.Sprintf("p%03d", i)
		pkg := newPkg("packages/"+name, "", provSpec{
			kind: "InfrastructureProvider", name: name, version: "v0.1.0", release: "v0.1.0-" + name,
			labels: map[string]string{"infrastructure-components": "cozy", "infrastructure-provider": name},
			yaml:   "files/infrastructure-components.yaml", blobFile: "files/components.gz", meta: "files/metadata.yaml",
			series: []model.ReleaseSeries{{Major: 0, Minor: 1, Contract: "v1beta1"}},
		})
		tree.Packages = append(tree.Packages, pkg)
	}
	ix := NewIndex(tree)
	for _, pkg := range tree.Packages {
		for _, p := range pkg.Providers {
			if s := ix.Select(pkg, p); s.Err != nil || len(s.Matches) != 1 || s.Matches[0].Package != pkg {
				t.Fatalf("%s selects %d ConfigMaps (%v), want its own one", p.ID(), len(s.Matches), s.Err)
			}
		}
	}
	fs := runAll(tree)
	if got := checksOf(fs); !slices.Equal(got, []string{PinMissing}) || len(fs) != 500 {
		t.Fatalf("checks = %v with %d findings, want 500 pin-missing", got, len(fs))
	}
}

func TestVersionVariablesThatAreNoVersions(t *testing.T) {
	tree := cleanTree()
	infra(tree).Pins.Versions = append(infra(tree).Pins.Versions,
		pin.Var{Name: "GO_VERSION", Value: "1.22", Known: true, File: "Makefile", Line: 9},
		pin.Var{Name: "CHART_VERSION", Value: "latest", Known: true, File: "Makefile", Line: 10})
	if fs := pinVersion(NewInput(tree)); len(fs) != 0 {
		t.Fatalf("variables that hold no upstream version were compared: %v", fs)
	}
}

func TestAssembledMakefilePin(t *testing.T) {
	// A Makefile URL + SHA-256 pair names no provider, only its release.
	tree := cleanTree()
	pkg := infra(tree)
	pkg.Pins.Versions = nil
	for i := range pkg.Pins.File.Providers {
		pkg.Pins.File.Providers[i].Kind, pkg.Pins.File.Providers[i].Name, pkg.Pins.File.Providers[i].Release = "", "", ""
	}
	if fs := runAll(tree); len(fs) != 0 {
		t.Fatalf("assembled pins of the releases in use: %v", fs)
	}
	pkg.Pins.File.Providers[0].Version = "v0.8.0"
	fs := pinVersion(NewInput(tree))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "release v0.8.0") || !strings.Contains(fs[0].Message, `InfrastructureProvider/proxmox "v0.7.7-infraprovider-proxmox"`) {
		t.Fatalf("assembled pin of another release: %v", fs)
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b strings.Builder
	if err := WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, c := range Catalog() {
		if !strings.Contains(out, "| `"+c.ID+"` | "+string(c.Severity)+" |") {
			t.Errorf("markdown lacks %s:\n%s", c.ID, out)
		}
	}
	if !strings.Contains(out, "| `signature` | error | registry |") || !strings.Contains(out, "| `pin-missing` | warning | tree |") {
		t.Errorf("markdown needs column wrong:\n%s", out)
	}
	if strings.Contains(out, "/<type>") || !strings.Contains(out, `PREFIX/\<type>-\<name>`) {
		t.Errorf("markdown does not escape <, which renders as an HTML tag:\n%s", out)
	}
}

// TestComputedVersionWithDockerfilePin: a computed Makefile version beside a
// literal Dockerfile ARG VERSION is compared through the ARG (no finding
// when it matches, an error naming the Dockerfile when it does not); with
// no literal pin it is at most a warning.
func TestComputedVersionWithDockerfilePin(t *testing.T) {
	computed := pin.Var{Name: "CAPMOX_VERSION", Value: "$(shell awk -F= '/^ARG VERSION=/{print $$2}' images/capmox/Dockerfile)", File: "Makefile", Line: 4}
	tr := cleanTree()
	infra(tr).Pins.Versions = []pin.Var{computed, {Name: "VERSION", Value: "v0.7.7", Known: true, File: "images/capmox/Dockerfile", Line: 2}}
	if fs := pinVersion(NewInput(tr)); len(fs) != 0 {
		t.Fatalf("matching Dockerfile pin: %+v", fs)
	}
	infra(tr).Pins.Versions[1].Value = "v0.7.8"
	fs := pinVersion(NewInput(tr))
	if len(fs) != 1 || fs[0].File != "packages/system/infra/images/capmox/Dockerfile" || fs[0].Severity != "" || !strings.Contains(fs[0].Message, "v0.7.8") {
		t.Fatalf("drifted Dockerfile pin: %+v", fs)
	}
	infra(tr).Pins.Versions = []pin.Var{computed}
	fs = pinVersion(NewInput(tr))
	if len(fs) != 1 || fs[0].Severity != report.Warning || !strings.Contains(fs[0].Message, "cannot be checked") {
		t.Fatalf("no literal pin: %+v", fs)
	}
}

// TestPinMissingNamesTheDownload: a download in a recipe has no variable
// name; the message names the URL and file:line with no empty placeholder.
func TestPinMissingNamesTheDownload(t *testing.T) {
	tr := cleanTree()
	infra(tr).Pins.Unpinned = []pin.Var{
		{Value: "https://example.com/x/metadata.yaml", Known: true, File: "Makefile", Line: 12},
		{Name: "CAPMOX_URL", Value: "https://example.com/capmox.yaml", Known: true, File: "Makefile", Line: 3},
	}
	fs := pinMissing(NewInput(tr))
	if len(fs) != 2 {
		t.Fatalf("findings: %+v", fs)
	}
	for _, f := range fs {
		for _, bad := range []string{"  ", " = https", "beside ,", "beside  "} {
			if strings.Contains(f.Message+f.Hint, bad) && !(bad == " = https" && strings.Contains(f.Message, "CAPMOX_URL = https")) {
				t.Errorf("placeholder %q in %q / %q", bad, f.Message, f.Hint)
			}
		}
	}
	if !strings.Contains(fs[0].Message, "Makefile:12: a recipe downloads https://example.com/x/metadata.yaml") {
		t.Errorf("recipe download: %s", fs[0].Message)
	}
	if !strings.Contains(fs[1].Message, "Makefile:3: CAPMOX_URL = https://example.com/capmox.yaml") || !strings.Contains(fs[1].Hint, "CAPMOX_SHA256") {
		t.Errorf("variable download: %s / %s", fs[1].Message, fs[1].Hint)
	}
}

func TestReleaseSizeLevels(t *testing.T) {
	for _, tc := range []struct {
		bytes int64
		want  report.Severity // "" none, Warning preset, "error" = unset (policy's error)
		n     int
	}{
		{700 << 10, "", 0},
		{800 << 10, report.Warning, 1},
		{1100 << 10, "", 1},
	} {
		tr := cleanTree()
		core := tr.Packages[0]
		core.Release = &model.ReleaseSize{Bytes: tc.bytes, Exact: true, Files: []model.FileWeight{
			{Path: "files/core-components.yaml", Bytes: 600 << 10}, {Path: "files/components.gz", Bytes: 100 << 10}}}
		fs := releaseSize(NewInput(tr))
		if len(fs) != tc.n {
			t.Fatalf("%d bytes: %+v", tc.bytes, fs)
		}
		if tc.n == 0 {
			continue
		}
		if fs[0].Severity != tc.want || !strings.Contains(fs[0].Message, "files/core-components.yaml (the raw YAML of files/components.gz)") || !strings.Contains(fs[0].Hint, ".helmignore") {
			t.Errorf("%d bytes: %+v", tc.bytes, fs[0])
		}
	}
}

// TestAirgapHints: a ConfigMap no provider selects, in a package with no
// pins and no vendored files, gets fixes that work there (no builder build).
func TestAirgapHints(t *testing.T) {
	pkg := &model.Package{Path: "packages/system/airgap", Chart: true, Pins: &pin.Set{}, Files: map[string]*model.File{}}
	bad := &blob.Info{Size: 10, Members: 1, Err: &blob.CorruptError{Kind: blob.Truncated, Offset: 5}}
	pkg.ConfigMaps = []*model.ConfigMap{{
		Name: "not-semver", Namespace: "capi-a",
		Annotations: map[string]string{model.CompressedAnnotation: "true"},
		Location:    model.Location{File: "templates/cm.yaml", Line: 3},
		Components:  &model.Components{InBinaryData: true, Gzip: true, Size: 10, Blob: bad},
		Metadata:    &model.Metadata{ReleaseSeries: []model.ReleaseSeries{{Major: 1, Minor: 10, Contract: "v1beta1"}}},
	}}
	tr := &model.Tree{Root: "/tree", Packages: []*model.Package{pkg}}
	fs := runAll(tr)
	if got := checksOf(fs); !slices.Equal(got, []string{model.CheckBlobCorrupt, SelectorSemver}) {
		t.Fatalf("checks = %v: %+v", got, fs)
	}
	for _, f := range fs {
		if strings.Contains(f.Hint, "builder build") {
			t.Errorf("%s hint suggests the builder where it cannot work: %s", f.Check, f.Hint)
		}
	}
}
