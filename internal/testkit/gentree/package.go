package gentree

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// kindShort is the release suffix Cozystack uses per provider kind
// (v1.10.1-core, v0.6.12-bootstrap-talos, v0.7.7-infraprovider-proxmox).
var kindShort = map[string]string{
	"CoreProvider":           "core",
	"InfrastructureProvider": "infraprovider",
	"BootstrapProvider":      "bootstrap",
	"ControlPlaneProvider":   "cpprovider",
	"IPAMProvider":           "ipam",
	"AddonProvider":          "addon",
}

// otherKinds are dealt round-robin to every package after the core one.
var otherKinds = []string{
	"InfrastructureProvider",
	"BootstrapProvider",
	"ControlPlaneProvider",
	"IPAMProvider",
	"AddonProvider",
}

// spec is everything that decides one package's content.
type spec struct {
	index     int
	kind      string
	name      string // provider name
	typ       string // clusterctl type: core, infrastructure, ...
	major     int
	minor     int
	patch     int
	version   string
	release   string
	label     string
	pkgName   string // Makefile NAME and directory name
	varName   string // Makefile version variable
	namespace string
	size      int64
	seed      uint64
	real      realSpec // what a Real or Monorepo shape adds
}

func newSpec(i int, opts Options) spec {
	s := spec{index: i, namespace: opts.Namespace, size: opts.Size, seed: opts.Seed}
	if i == 0 {
		s.kind, s.name = "CoreProvider", "cluster-api"
		s.major, s.minor, s.patch = 1, 10, 1
		s.varName = "CAPI_UPSTREAM_VERSION"
	} else {
		s.kind = otherKinds[(i-1)%len(otherKinds)]
		s.name = fmt.Sprintf("synth%04d", i)
		s.major, s.minor, s.patch = 0, 1+(i*7)%19, i%13
		s.varName = strings.ToUpper(s.name) + "_UPSTREAM_VERSION"
	}
	s.typ = model.ProviderKinds[s.kind]
	s.version = fmt.Sprintf("v%d.%d.%d", s.major, s.minor, s.patch)
	short := kindShort[s.kind]
	if i == 0 {
		s.release = s.version + "-" + short
		s.label = "core-components"
		s.pkgName = "capi-providers-core"
	} else {
		s.release = s.version + "-" + short + "-" + s.name
		s.label = short + "-" + s.name + "-components"
		s.pkgName = "capi-providers-" + short + "-" + s.name
	}
	s.real = newRealSpec(&s, opts)
	return s
}

// File names inside a package.
const (
	blobFile     = "files/components.gz"
	metadataFile = "files/metadata.yaml"
)

func (s spec) yamlFile() string { return "files/" + s.typ + "-components.yaml" }

// write writes the package under root and describes it.
func (s spec) write(root string) (Package, error) {
	rel := path.Join(PackagesDir, s.pkgName)
	dir := filepath.Join(root, filepath.FromSlash(rel))
	p := Package{
		Dir: rel, Kind: s.kind, Name: s.name, Version: s.version, Release: s.release,
		Label: s.label, YAML: s.yamlFile(), Blob: blobFile, Namespace: s.namespace,
	}

	components := s.components()
	gz, err := blob.CompressBytes(components)
	if err != nil {
		return p, fmt.Errorf("package %s: compress %s: %w", rel, p.YAML, err)
	}
	metadata := s.metadata()
	p.YAMLSize, p.BlobSize = int64(len(components)), int64(len(gz))

	pinned := []pin.Provider{s.pinProvider(components, metadata)}
	files := []file{
		{"Chart.yaml", s.chart()},
		{"Makefile", s.makefile()},
		{p.YAML, components},
		{blobFile, gz},
		{metadataFile, metadata},
		{"templates/configmaps.yaml", s.configMapTemplate(s.release, s.label, blobFile, metadataFile)},
		{"templates/providers.yaml", s.providerTemplate()},
	}
	if s.real.on {
		more, pp, err := s.realFiles(&p, files)
		if err != nil {
			return p, fmt.Errorf("package %s: %w", rel, err)
		}
		files, pinned = more, append(pinned, pp...)
	}
	pins, err := pinFile(pinned)
	if err != nil {
		return p, fmt.Errorf("package %s: %w", rel, err)
	}
	files = append(files, file{pin.FileName, pins})
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.name)), f.data); err != nil {
			return p, fmt.Errorf("package %s: %w", rel, err)
		}
	}
	return p, nil
}

// components is the vendored upstream manifest, from manifestgen, of at
// least about s.size bytes. manifestgen stops a little short of the size it
// is asked for, so a short result is generated once more, asked for the
// size scaled by the shortfall.
func (s spec) components() []byte {
	ms := manifestgen.Spec{
		Provider: s.typ + "-" + s.name,
		Prefix:   s.name,
		Group:    s.typ + ".cluster.x-k8s.io",
		Kinds:    []string{s.kindPrefix() + "Cluster", s.kindPrefix() + "Machine"},
		Image:    fmt.Sprintf("registry.k8s.io/%s/%s-controller:%s", s.typ, s.name, s.version),
		Size:     int(s.size),
		// Every package gets its own stream; the seed shifts them all.
		Seed: int64(s.seed)*1_000_003 + int64(s.index),
	}
	if s.kind == "CoreProvider" {
		ms.Provider, ms.Prefix, ms.Group = "cluster-api", "capi", "cluster.x-k8s.io"
		ms.Kinds = []string{"Cluster", "Machine", "MachineSet", "MachineDeployment"}
	}
	if s.size < 64<<10 {
		// A small provider (a second one, as talos beside kubeadm): one
		// kind, one version, or the CRDs alone overshoot the size.
		ms.Kinds, ms.Versions = ms.Kinds[:1], []string{"v1alpha3"}
	}
	out := manifestgen.Generate(ms)
	if n := int64(len(out)); n > 0 && n < s.size {
		ms.Size = int(s.size * s.size / n)
		out = manifestgen.Generate(ms)
	}
	return out
}

// kindPrefix is the provider name as a Go-style kind prefix: synth0042 ->
// Synth0042.
func (s spec) kindPrefix() string {
	return strings.ToUpper(s.name[:1]) + strings.ReplaceAll(s.name[1:], "-", "")
}

func (s spec) chart() []byte {
	return fmt.Appendf(nil, `apiVersion: v2
name: cozy-%s
version: 0.0.0 # Placeholder, the actual version will be automatically set during the build process
`, s.pkgName)
}

func (s spec) makefile() []byte {
	return fmt.Appendf(nil, `NAME=%s
NAMESPACE=%s

%s = %s

update:
	builder vendor --pin pin.yaml .
`, s.pkgName, s.namespace, s.varName, s.version)
}

func (s spec) upstreamURL(file string) string {
	repo := "cluster-api-provider-" + s.name
	if s.kind == "CoreProvider" {
		repo = "cluster-api"
	}
	return fmt.Sprintf("https://github.com/pinseal-synthetic/%s/releases/download/%s/%s", repo, s.version, path.Base(file))
}

// file is one file of a package: slash path in the package, content.
type file struct {
	name string
	data []byte
}

func (s spec) pinProvider(components, metadata []byte) pin.Provider {
	return pin.Provider{
		Kind:    s.kind,
		Name:    s.name,
		Version: s.version,
		Release: s.release,
		Sources: []pin.Source{
			{URL: s.upstreamURL(s.yamlFile()), SHA256: sha256Hex(components), To: s.yamlFile()},
			{URL: s.upstreamURL(metadataFile), SHA256: sha256Hex(metadata), To: metadataFile},
		},
		Blob: blobFile,
	}
}

func pinFile(providers []pin.Provider) ([]byte, error) {
	f := pin.File{Providers: providers}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("encode %s: %w", pin.FileName, err)
	}
	return b.Bytes(), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// metadata is clusterctl's metadata.yaml: the release's own series with
// contract v1beta1, and up to three older series (0.0 and 0.1 on v1alpha4,
// as real providers have).
func (s spec) metadata() []byte {
	if s.real.on {
		return s.realMetadata(s.minor)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# maintainers of %s: update this when releasing a new minor version\n", s.name)
	b.WriteString("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n")
	for m := s.minor; m >= 0 && m > s.minor-4; m-- {
		contract := "v1beta1"
		if s.major == 0 && m < 2 && m != s.minor {
			contract = "v1alpha4"
		}
		fmt.Fprintf(&b, "  - major: %d\n    minor: %d\n    contract: %s\n", s.major, m, contract)
	}
	return b.Bytes()
}

func (s spec) providerTemplate() []byte {
	return fmt.Appendf(nil, `apiVersion: %s
kind: %s
metadata:
  name: %s
spec:
  version: %s
  fetchConfig:
    selector:
      matchLabels:
        %s: cozy
`, model.OperatorAPIVersion, s.kind, s.name, s.release, s.label)
}

// writeFile writes data to name, creating its directory.
func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}
