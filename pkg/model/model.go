// Package model is the in-memory picture of a tree of provider packages.
//
// The loader (pkg/load) fills it from disk, Helm
// renders and registries; the checks (pkg/check) only read it.
package model

import (
	"path"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// Operator API group/version of the provider kinds.
const OperatorAPIVersion = "operator.cluster.x-k8s.io/v1alpha2"

// Rancher Turtles' provider kind: one object kind for every provider type,
// reconciled by Turtles with the cluster-api-operator embedded as a library
// (rancher/turtles docs/adr/0015-capiprovider-architecture.md and
// api/v1alpha1/capiprovider_types.go at b2e1223). Its spec is the operator's
// ProviderSpec inline plus name, type, features, variables, credentials.
const (
	TurtlesAPIGroup   = "turtles-capi.cattle.io"
	TurtlesAPIVersion = TurtlesAPIGroup + "/v1alpha1"
	CAPIProviderKind  = "CAPIProvider"
)

// TurtlesTypes maps a CAPIProvider's spec.type (the Type constants of
// rancher/turtles api/v1alpha1/provider_types.go at b2e1223) to the
// operator kind that provider is: the checks treat a CAPIProvider as that
// kind. Turtles' own Type.ToKind title-cases the type ("Ipam",
// "Controlplane"), which names no operator kind, so the mapping is
// written out here.
var TurtlesTypes = map[string]string{
	"core":             "CoreProvider",
	"bootstrap":        "BootstrapProvider",
	"controlPlane":     "ControlPlaneProvider",
	"infrastructure":   "InfrastructureProvider",
	"ipam":             "IPAMProvider",
	"addon":            "AddonProvider",
	"runtimeextension": "RuntimeExtensionProvider",
}

// providerTypes are the cluster-api-operator provider kinds with the
// provider type clusterctl uses for each in file and repository names
// (<type>-components.yaml, <type>-<name>), in clusterctl's order. The
// operator's own type names (GetType(), which change across operator
// releases) are internal/operator's.
var providerTypes = []struct{ Kind, Type string }{
	{"CoreProvider", "core"},
	{"BootstrapProvider", "bootstrap"},
	{"ControlPlaneProvider", "control-plane"},
	{"InfrastructureProvider", "infrastructure"},
	{"IPAMProvider", "ipam"},
	{"AddonProvider", "addon"},
	{"RuntimeExtensionProvider", "runtime-extension"},
}

// ProviderKinds are the cluster-api-operator provider kinds, mapped to the
// provider type used in clusterctl file names (<type>-components.yaml).
var ProviderKinds = func() map[string]string {
	m := make(map[string]string, len(providerTypes))
	for _, pt := range providerTypes {
		m[pt.Kind] = pt.Type
	}
	return m
}()

// ProviderTypes returns the provider types of ProviderKinds in clusterctl's
// order: core, bootstrap, control-plane, ...
func ProviderTypes() []string {
	types := make([]string, len(providerTypes))
	for i, pt := range providerTypes {
		types[i] = pt.Type
	}
	return types
}

// Annotations and labels the operator reads.
const (
	CompressedAnnotation = "provider.cluster.x-k8s.io/compressed"
	VersionLabel         = "provider.cluster.x-k8s.io/version"
)

// Location points into a file of a package.
type Location struct {
	File string `json:"file,omitempty"` // slash path relative to the package directory
	Line int    `json:"line,omitempty"` // 1-based, 0 when unknown
}

// Tree is every provider package found under a root.
type Tree struct {
	Root     string     // absolute root directory
	Packages []*Package // sorted by Path
	// Core is the package holding the tree's CoreProvider, nil if none.
	Core *Package
	// Problems found outside any package while walking the tree (an
	// unreadable directory that may hide packages). File is relative to Root.
	Problems []Problem
	// Skipped are the charts under Root that are not provider packages (or
	// were excluded), with why: never findings. Sorted by Path.
	Skipped []Skip
	// Fetches are the downloads of a provider's components release that
	// the tree's shell scripts, and its Makefiles outside any package, run
	// with no SHA-256 beside them (a package's own Makefile is read into
	// its Pins). Sorted by File and Line.
	Fetches []Fetch
}

// Fetch is an unpinned download of a components release by a script or a
// Makefile recipe of the tree.
type Fetch struct {
	File    string // slash path relative to the tree root
	Line    int    // the command's line
	URL     string // as the script's defaults resolve it; may keep ${…}
	Var     string // the variable the command reads the URL from, if one
	Command string // curl, wget, gh release download, kubectl operator preload
	// Package is the package whose files the script names (the template it
	// writes its output to) or that holds the script; nil when none does.
	Package *Package
	// Writes is the file of Package the script names, relative to the tree root.
	Writes string
}

// Skip is a chart the verifier did not check, and why.
type Skip struct {
	Path   string // slash path relative to the tree root
	Reason string
}

// Package is one provider package: a Helm chart or a plain manifest
// directory holding provider objects or the ConfigMaps they select.
type Package struct {
	Path      string // slash path relative to the tree root ("." for the root)
	Dir       string // absolute directory
	Chart     bool   // rendered with Helm
	Namespace string // from Makefile NAMESPACE=, the objects, --namespace or the default
	// CommandDir is where the tree root is, as a slash path relative to
	// the directory the user runs commands from (load.Options.CommandDir);
	// empty when it is that directory. Hints name the package by
	// CommandPath.
	CommandDir string

	// Fixture marks a package of golden renders or test fixtures (the
	// policy's fixtures:): checked, but its providers are not compared
	// with the rest of the tree as duplicates.
	Fixture bool

	// Pins are the package's pins (never nil once loaded; Source is ""
	// when the package carries none).
	Pins *pin.Set

	Providers  []*Provider
	ConfigMaps []*ConfigMap
	// Clusterctl are the provider URLs the package's Rancher Turtles
	// clusterctl config sets (the clusterctl-config ConfigMap's
	// clusterctl.yaml, a ClusterctlConfig's spec.providers), in file order.
	Clusterctl []ClusterctlOverride
	// Files are the vendored files under files/ (and any pinned "to"
	// path), by slash path relative to the package directory.
	Files map[string]*File

	// Layout says which vendored file is each release's components YAML,
	// metadata and blob, and how each was matched: decided once by
	// internal/layout when the package is loaded (never nil once loaded).
	Layout *Layout

	// Problems found while loading (render failure, bad YAML, unreadable
	// file, symlink out of the tree). Each becomes a finding.
	Problems []Problem

	// Images are the container images the package's releases run, as
	// written in each release's vendored components YAML and inside its
	// vendored blob (internal/images finds them), in file then line order.
	Images []Image
	// UnreadWorkloads are workload documents of the same files whose
	// images were not read (larger than internal/images parses).
	UnreadWorkloads []UnreadWorkload

	// Applied are the objects of each release's components, as the API
	// server receives them when the operator installs the release (read
	// from the vendored blob, inflated, else the vendored YAML), in file
	// then line order: the components-apply check reads them.
	Applied []AppliedObject

	// Release is the size of the release Secret Helm would store for the
	// chart; nil for plain manifest directories and charts that did not
	// render.
	Release *ReleaseSize
}

// ReleaseLimit is the most a Kubernetes Secret, hence a Helm release, may
// hold: 1 MiB.
const ReleaseLimit = 1 << 20

// ReleaseWarn is the share of ReleaseLimit from which release-size warns.
const ReleaseWarn = 0.75

// ReleaseSize is the size of a chart's Helm release as stored in its
// Secret: json of the release (chart with every file, values, manifest),
// gzip at best compression, base64.
type ReleaseSize struct {
	// Bytes is the encoded size; an upper bound when !Exact.
	Bytes int64
	// Exact is false when bounds of the size put it on one side of both
	// lines of the check (the warning at 75 %, the limit), so the verdict
	// did not depend on the exact encoding, which was not computed.
	Exact bool
	// Files are the chart's files (what .helmignore lets through) with
	// their size as stored in the release JSON (base64), largest first.
	Files []FileWeight
}

// FileWeight is one chart file's share of the release.
type FileWeight struct {
	Path  string
	Bytes int64
}

// Catalog IDs of the problems the loader reports. They are declared here,
// where both the loader (which reports them) and pkg/check (whose catalog
// names them) can use them: the loader does not depend on the checks.
const (
	// CheckPackageLoad is the ID of problems that keep (part of) a package
	// from loading: render failures, YAML that does not parse, duplicate
	// keys, unreadable files, symlinks out of the tree.
	CheckPackageLoad = "package-load"
	// CheckBlobCorrupt is the ID of components that are not even valid
	// base64.
	CheckBlobCorrupt = "blob-corrupt"
	// CheckPinDigest is the ID of problems with a pin's patches: a patch
	// that is missing, does not parse or changes no pinned source keeps the
	// patched file's digest from being checked.
	CheckPinDigest = "pin-digest"
)

// Problem is something the loader could not make sense of.
type Problem struct {
	Check    string // catalog ID the problem belongs to (e.g. CheckBlobCorrupt), or CheckPackageLoad
	Provider string // Kind/name, if known
	Location
	Message string
	Hint    string
	// Settings are the verifier settings Hint asks to change (in words);
	// they become the finding's Settings.
	Settings []report.Setting
}

// File is a vendored file.
type File struct {
	Path   string
	Size   int64
	SHA256 blob.Digest
	// Blob is set for gzip files (by magic), inspected without holding them.
	Blob *blob.Info
	// Objects describes what a gzip file inflates to as a stream of
	// Kubernetes objects (set with Blob).
	Objects *Objects
	// Upstream is the SHA-256 of the file with the package's pin patches
	// that change it reversed, last patch first: the bytes the pin's
	// sha256 must equal. Nil when no patch targets the file (compare
	// SHA256) or when the patches could not be reversed (UpstreamErr).
	Upstream *blob.Digest
	// UpstreamErr says why the patches could not be reversed: the patch
	// file and hunk that does not match the vendored file, or a file over
	// the size limit. Empty when Upstream is set or no patch targets it.
	UpstreamErr string
}

// Image is one container image reference in a release's components.
type Image struct {
	Ref string // as written
	// Release is the release (LayoutRelease.Name) whose components hold it.
	Release string
	// Providers are the package's providers that install the release
	// (Kind/name); for a release only a pin names, the pin's kind/name.
	Providers []string
	// Workload is Kind/name of the object that runs it, Container the
	// container's name.
	Workload, Container string
	// InBlob: Location is a gzip file and Line a line of what it inflates to.
	InBlob bool
	Location
}

// UnreadWorkload is a workload document whose images were not read, or
// not read for sure.
type UnreadWorkload struct {
	Release   string
	Providers []string
	Kind      string // the document's top-level kind
	Why       string // e.g. "it is over 256 KiB"
	// Error: the document is ambiguous (YAML readers differ on it) or an
	// image value is no image reference, an error; else it was too large
	// to read, a warning.
	Error    bool
	Hint     string // what to do
	InBlob   bool   // Location is a gzip file, Line a line of what it inflates to
	Location        // where the document starts
}

// AppliedObject is one object of a release's components.
type AppliedObject struct {
	// Release is the release (LayoutRelease.Name) whose components hold it.
	Release string
	// Providers are the package's providers that install the release.
	Providers                         []string
	APIVersion, Kind, Name, Namespace string
	// CRD is components-apply's verdict on the document when Kind is
	// CustomResourceDefinition, judged while the package loaded
	// (load.Options.CRDs), so the model keeps no CRD's text; nil for other
	// kinds, and for a CRD the loader had no judge for.
	CRD *CRDVerdict
	// InBlob: Location is a gzip file and Line a line of what it inflates to.
	InBlob bool
	Location
}

// CRDVerdict is what components-apply needs of one CustomResourceDefinition
// document: the kinds it serves and the API server's answer to creating it.
type CRDVerdict struct {
	// Decoded: the document decodes as JSON (one that does not serves no
	// kind, and an apiextensions.k8s.io/v1 one is refused).
	Decoded bool
	// Kinds are the GROUP/VERSION/KIND keys it serves.
	Kinds []string
	// Refusal is the API server's refusal of an apiextensions.k8s.io/v1
	// CRD, "" when it accepts it (and for other versions, never judged).
	Refusal string
}

// Provider is one cluster-api-operator provider object, or a Rancher
// Turtles CAPIProvider seen as the operator kind its spec.type names.
type Provider struct {
	// Kind is the operator kind (CoreProvider, ...); for a CAPIProvider
	// the kind of its spec.type.
	Kind string
	// Name is metadata.name; for a CAPIProvider spec.name, else
	// metadata.name (Turtles' ProviderName).
	Name string
	// Object is the object as written when it is not an operator provider
	// object: "CAPIProvider/<metadata.name>"; empty otherwise.
	Object    string
	Namespace string
	Version   string // spec.version
	// Selector is spec.fetchConfig.selector; nil when the provider fetches
	// by URL or OCI instead.
	Selector *Selector
	FetchURL string // spec.fetchConfig.url
	// Clusterctl is the Rancher Turtles clusterctl config entry of the
	// tree that sets the URL of a CAPIProvider with no spec.fetchConfig
	// (nil when none does: clusterctl's built-in list applies).
	Clusterctl *ClusterctlOverride
	FetchOCI   string // spec.fetchConfig.oci
	// FetchOCILine is the line of spec.fetchConfig.oci in Location.File
	// (the template's line for a chart); 0 when unknown.
	FetchOCILine int
	Location

	// Artifact is what the registry holds for this provider's release
	// (PREFIX/<type>-<name>:<spec.version>); nil when no registry was
	// given. Filled by pkg/remote, read by the registry checks.
	Artifact *Artifact
}

// CommandPath is the package directory as the commands a hint gives take
// it (`builder build PATH`): Path below CommandDir, "." for the root.
func (p *Package) CommandPath() string {
	if p == nil {
		return "."
	}
	if c := path.Join(p.CommandDir, p.Path); c != "" {
		return c
	}
	return "."
}

// ID is "Kind/name", the form used in findings.
func (p *Provider) ID() string { return p.Kind + "/" + p.Name }

// Turtles reports whether the provider is a Rancher Turtles CAPIProvider.
func (p *Provider) Turtles() bool { return p.Object != "" }

// Type is the clusterctl provider type (core, bootstrap, ...).
func (p *Provider) Type() string { return ProviderKinds[p.Kind] }

// RepositoryName is the repository of the provider's releases below a
// prefix (RepositoryName of its type and name).
func (p *Provider) RepositoryName() string { return RepositoryName(p.Type(), p.Name) }

// RepositoryName is the repository of a provider's releases below a
// registry prefix: "<type>-<name>", e.g. "infrastructure-proxmox".
func RepositoryName(typ, name string) string { return typ + "-" + name }

// Selector is a Kubernetes label selector as written in the object.
type Selector struct {
	MatchLabels      map[string]string
	MatchExpressions []Requirement
}

// Requirement is one matchExpressions entry.
type Requirement struct {
	Key      string
	Operator string // In, NotIn, Exists, DoesNotExist
	Values   []string
}

// ConfigMap is a rendered ConfigMap that holds provider components.
type ConfigMap struct {
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
	Location
	// ComponentsLine is the line of the components key in Location.File
	// (the template's line for a chart); 0 when unknown.
	ComponentsLine int

	// Components is what the cluster gets under the "components" key.
	Components *Components
	// Metadata is data.metadata parsed as clusterctl Metadata; nil when absent.
	Metadata    *Metadata
	MetadataRaw []byte
	// DataBytes is what the API server counts against the object's size
	// limit (ObjectLimit): every data value and every decoded binaryData
	// value.
	DataBytes int64
}

// ObjectLimit is the most data a ConfigMap (or Secret) may hold: the API
// server refuses a bigger one (corev1.MaxSecretSize, 1 MiB), the same line
// as ReleaseLimit.
const ObjectLimit = ReleaseLimit

// Components describes the "components" entry of a ConfigMap.
type Components struct {
	InBinaryData bool        // binaryData.components (else data.components)
	Gzip         bool        // starts with the gzip magic
	Size         int64       // bytes as stored (decoded from base64)
	SHA256       blob.Digest // of the stored bytes
	Blob         *blob.Info  // set when Gzip: header, inflated digest, corruption
	// Diff is set when the (inflated) components differ from the vendored
	// YAML the package layout pairs them with (Layout.ComponentsYAML).
	Diff *blob.Diff
	// Objects describes the (inflated) components as a stream of
	// Kubernetes objects; nil when they could not be read.
	Objects *Objects
	// DecodeErr is set when binaryData.components is not valid base64: the
	// loader reports it as a blob-corrupt Problem, and no byte-level field
	// above (Gzip, Size, SHA256, Blob, Diff) is meaningful; Layout.BlobFile
	// and Layout.ComponentsYAML then name no file.
	DecodeErr error
}

// Metadata is clusterctl's Metadata (metadata.yaml).
type Metadata struct {
	Kind          string // may be empty: real trees omit `kind: Metadata`
	ReleaseSeries []ReleaseSeries
	Err           error // parse error, nil if it parsed
}

// ReleaseSeries maps a major.minor to an API contract.
type ReleaseSeries struct {
	Major    int
	Minor    int
	Contract string // v1beta1, v1beta2
}

// Objects is what a manifest stream holds, read line by line.
type Objects struct {
	Count int // documents with apiVersion, kind and metadata.name
	// Problem is the first thing in the stream that is not such an
	// object, in words ("document 1 is the text \"Not Found\""); empty
	// when every document is one and there is at least one.
	Problem string
}

// ClusterctlConfigName is the name of Rancher Turtles' clusterctl config:
// the ConfigMap its controller mounts as the embedded operator's
// clusterctl.yaml and the ClusterctlConfig whose overrides it merges in
// (rancher/turtles internal/controllers/clusterctl/config.go at b2e1223).
const ClusterctlConfigName = "clusterctl-config"

// ClusterctlOverride is one provider entry of a Turtles clusterctl
// config: the repository URL Turtles' embedded operator downloads the
// provider named Name of Type (a clusterctl provider type such as
// BootstrapProvider, matched without regard to case) from.
type ClusterctlOverride struct {
	Name, Type, URL string
	// From is "ConfigMap clusterctl-config" or "ClusterctlConfig
	// clusterctl-config"; a ClusterctlConfig entry wins over the
	// ConfigMap's for the same name and type, as Turtles merges them.
	From string
	Location
}
