// Package pin is the pin file format: upstream files pinned by SHA-256.
//
// It is the pin file format: the upstream files a provider
// package vendors, each pinned by the SHA-256 of its bytes. It parses and
// validates a strict pin.yaml (api/pin.schema.json) and holds the types every
// other package uses for pins (File, Set, Var). Reading pins from a package
// directory, including inferring them from a Makefile or Dockerfile, is
// internal/pin/infer; downloading pinned sources is pkg/fetch.
//
// Pin files are parsed with yaml.v3's node API alone, like every YAML file
// pinseal reports on (manifests, policy, metadata.yaml): errors name the
// line, duplicate keys are refused, and YAML11Bool flags the plain
// scalars (name: no) that YAML 1.1 readers such as Kubernetes and Helm
// (sigs.k8s.io/yaml) take for booleans. The "YAML libraries" section of
// docs/architecture.md says which library does which job.
package pin

// FileName is the name of the pin file inside a package directory.
const FileName = "pin.yaml"

// File is the parsed pin.yaml of one package. Its field names are the stable
// contract documented in api/pin.schema.json.
type File struct {
	Providers []Provider `json:"providers" yaml:"providers"`
}

// Provider pins one cluster-api-operator provider of the package.
type Provider struct {
	// Kind is the operator kind: CoreProvider, BootstrapProvider, ...
	Kind string `json:"kind" yaml:"kind"`
	// Name is the provider name (metadata.name of the provider object).
	Name string `json:"name" yaml:"name"`
	// Version is the upstream release, e.g. v0.7.7.
	Version string `json:"version" yaml:"version"`
	// Release is the ConfigMap name and spec.version, e.g.
	// v0.7.7-infraprovider-proxmox. Its version part must equal Version.
	Release string `json:"release" yaml:"release"`
	// Sources are the pinned upstream files.
	Sources []Source `json:"sources" yaml:"sources"`
	// Patches are unified diffs (paths relative to the package directory)
	// applied in order after fetching; each names the file it changes.
	Patches []string `json:"patches,omitempty" yaml:"patches,omitempty"`
	// Blob is the gzip blob built from the components file, relative to the
	// package directory, e.g. files/components.gz.
	Blob string `json:"blob,omitempty" yaml:"blob,omitempty"`
	// Checksums is the URL of a checksums file the release publishes
	// (`sha256sum` format: "<hex>  <file name>" per line). `builder bump`
	// reads the new sources' SHA-256 from it; nothing else fetches it.
	Checksums string `json:"checksums,omitempty" yaml:"checksums,omitempty"`
	// Components, when set, is the `to` of the source that is the
	// provider's components YAML (the file the blob compresses and the
	// patches change), for when no source's name ends in components.yaml or
	// several do. See internal/layout.
	Components string `json:"components,omitempty" yaml:"components,omitempty"`
	// Metadata, when set, is the `to` of the source that is the provider's
	// clusterctl metadata.yaml, for when names do not tell.
	Metadata string `json:"metadata,omitempty" yaml:"metadata,omitempty"`
	// Relocate moves the components' images to a mirror, after the
	// patches (see Relocation).
	Relocate Relocations `json:"relocate,omitempty" yaml:"relocate,omitempty"`
}

// ID names the pin entry in messages: Kind/name, or for a Makefile pin
// (which has neither) its upstream version.
func (p Provider) ID() string {
	if p.Kind != "" || p.Name != "" {
		return p.Kind + "/" + p.Name
	}
	if p.Version != "" {
		return "Makefile pin " + p.Version
	}
	return "Makefile pin"
}

// Source is one pinned upstream file.
type Source struct {
	// URL is where the bytes come from: http, https or file.
	URL string `json:"url" yaml:"url"`
	// SHA256 is the lowercase hex SHA-256 of the upstream bytes.
	SHA256 string `json:"sha256" yaml:"sha256"`
	// To is the vendored path relative to the package directory.
	To string `json:"to" yaml:"to"`
}

// Sources of a Set.
const (
	SourcePinFile    = "pin.yaml"
	SourceMakefile   = "Makefile"
	SourceDockerfile = "Dockerfile"
)

// Set is everything one package pins, from whichever place it pins it.
type Set struct {
	// Source is where the pins were read: "pin.yaml", "Makefile",
	// "Dockerfile", or "" when the package carries no pin at all.
	Source string
	// File is the parsed pin.yaml, or the equivalent assembled from
	// Makefile variables (URL + SHA-256 pairs). Nil when nothing is pinned
	// by digest.
	File *File
	// Versions are upstream version variables (CABPT_UPSTREAM_VERSION =
	// v0.6.12, ARG VERSION=v1.2.3). Known is false for values computed by
	// $(shell …) or other expansions: reported as unknown, never guessed.
	Versions []Var
	// Unpinned are upstream URLs the package downloads with no SHA-256.
	Unpinned []Var
	// Namespace and Name are the Makefile's NAMESPACE and NAME, if set.
	Namespace string
	Name      string
}

// Var is one variable read from a Makefile or Dockerfile.
type Var struct {
	Name  string
	Value string
	Known bool   // false when the value is computed ($(shell …), $(VAR) that does not resolve)
	File  string // slash path relative to the package directory
	Line  int    // 1-based
}
