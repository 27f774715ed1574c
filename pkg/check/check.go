// Package check holds the verifier's checks and the catalog that names them.
//
// It holds the verifier's checks: pure functions over an
// in-memory *model.Tree that return findings, and the catalog that names
// them (stable IDs, titles, descriptions, default severities). The SARIF
// rules, the policy schema and the docs are generated from the catalog.
//
// Checks never do I/O. Checks that need more than the tree (the registry
// checks: registry-digest, version-reused, signature, provenance) are in the
// catalog with a nil Run; whoever gathers their inputs passes runnable
// checks with those IDs to the engine (verify.Options.Extra).
package check

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// Func is a check: a pure function of the tree. Findings carry Check,
// Package, Provider, File (relative to the tree root), Line, Message, Hint
// and Detail; the engine sets Severity from the policy.
type Func func(*Input) []report.Finding

// Input is what the checks of one run read: the tree, and the index of
// its ConfigMaps, built once for all of them.
type Input struct {
	Tree  *model.Tree
	Index *Index
}

// NewInput indexes t for a run of checks. The checks only read it, one
// after the other (the index caches selections and is not safe for
// concurrent use).
func NewInput(t *model.Tree) *Input {
	return &Input{Tree: t, Index: NewIndex(t)}
}

// Check is one catalog entry.
type Check struct {
	ID          string          // stable: used in output, policy and tests
	Title       string          // short, for rule lists
	Description string          // what must hold
	Severity    report.Severity // default severity (policies/default.yaml agrees)
	// Run is nil for checks the tree alone cannot answer (registry checks)
	// and for IDs produced elsewhere (waiver-expired, by the policy).
	Run Func
	// Push is what an error finding does to `builder push` (pkg/release):
	// refuse the provider or warn beside the result.
	Push Gate
}

// Gate is what an error finding of a check does to `builder push`, which
// publishes the provider's components YAML, blob and metadata under its
// release name with its pins as provenance. A check refuses when its error
// says that artifact would be wrong: what it holds is not what the tree
// reviews or installs, the release it goes under or the content the
// operator picks for it is not the provider's, its metadata, contract or
// provenance would be wrong, or what the cluster runs is not pinned. It
// warns when the finding does not change what is pushed: the chart's Helm
// release rather than the artifact, the registry (push moves no tag),
// a base revision or a live cluster push never reads.
type Gate int

const (
	// PushUnjudged is a check nobody judged yet: it refuses (a new check
	// is judged before it can let anything through; a test names it).
	PushUnjudged Gate = iota
	// PushRefuses refuses the provider on an error finding.
	PushRefuses
	// PushWarns reports an error finding as a warning beside the result.
	PushWarns
)

// Rule is the check's catalog entry as a report rule (SARIF).
func (c Check) Rule() report.Rule {
	return report.Rule{ID: c.ID, Title: c.Title, Description: c.Description, Severity: c.Severity}
}

// Stable check IDs. The IDs of problems the loader reports are declared in
// pkg/model, which the loader and the checks share.
const (
	BlobYAML             = "blob-yaml"
	BlobHeader           = "blob-header"
	ComponentsValid      = "components-valid"
	ComponentsApply      = "components-apply"
	ReleaseSize          = "release-size"
	ConfigMapVersion     = "configmap-version"
	SelectorUnique       = "selector-unique"
	SelectorSemver       = "selector-semver"
	ProviderDuplicate    = "provider-duplicate"
	CompressedAnnotation = "compressed-annotation"
	MetadataSeries       = "metadata-series"
	Contract             = "contract"
	PinVersion           = "pin-version"
	PinMissing           = "pin-missing"
	OCISource            = "oci-source"
	RegistryDigest       = "registry-digest"
	VersionReused        = "version-reused"
	VersionDowngrade     = "version-downgrade"
	Signature            = "signature"
	Provenance           = "provenance"
	OCIInstall           = "oci-install"
	ImageRef             = "image-ref"
	ImageRelocation      = "image-relocation"
	WaiverExpired        = "waiver-expired"
	// The live-cluster checks (internal/app/cluster runs them).
	ClusterInstalled = "cluster-installed"
	ClusterConfigMap = "cluster-configmap"
	ClusterOCI       = "cluster-oci"
	ClusterWorkload  = "cluster-workload"
	ClusterCRD       = "cluster-crd"
)

var catalog = []Check{
	{ID: model.CheckPackageLoad, Title: "Package loads", Severity: report.Error, Run: packageLoad, Push: PushRefuses,
		Description: "The package renders and its files parse: no render failure, bad YAML, duplicate keys, invalid base64, unreadable file or symlink out of the tree."},
	{ID: BlobYAML, Title: "Blob equals YAML", Severity: report.Error, Run: blobYAML, Push: PushRefuses,
		Description: "gunzip(blob) equals the vendored YAML byte for byte; the finding shows the first differing line and a short diff. A gzip blob with no vendored YAML beside it (air-gap charts inline it) is a warning that nobody can review what the cluster gets."},
	{ID: BlobHeader, Title: "Reproducible gzip header", Severity: report.Error, Run: blobHeader, Push: PushWarns,
		Description: "The blob's gzip header is reproducible: MTIME 0, no FNAME, FCOMMENT or FEXTRA; the finding says what is embedded."},
	{ID: model.CheckBlobCorrupt, Title: "Blob is valid gzip", Severity: report.Error, Run: blobCorrupt, Push: PushRefuses,
		Description: "The blob is one valid, complete gzip member (CRC and size trailer checked; a second member or trailing bytes are errors) that inflates within the inflate limit, where a gzip bomb stops; vendored gzip files no ConfigMap carries are checked too."},
	{ID: ComponentsValid, Title: "Components are Kubernetes objects", Severity: report.Error, Run: componentsValid, Push: PushRefuses,
		Description: "The components (inflated when gzip) are a stream of Kubernetes objects, each with apiVersion, kind and metadata.name, at least one: not a saved 404 body, an HTML error page, a truncated download or a bare scalar."},
	{ID: ComponentsApply, Title: "API server accepts the components", Severity: report.Error, Run: componentsApplyDefault, Push: PushRefuses,
		Description: "Every object of a release's components (the blob, inflated, else the vendored YAML) is one the API server accepts when the operator applies it: each CustomResourceDefinition, decoded as the API server decodes it (field names case-sensitive), passes kube-apiserver's own CRD validation (k8s.io/apiextensions-apiserver: structural schema, names, served and storage versions, conversion settings) and has no field the API server does not know (the operator's server-side apply refuses one), and each object's kind is served: built in (an API version Kubernetes no longer serves is named), by a CRD of the core provider's or the release's own components, or by an external CRD the policy's externalKinds name (cert-manager's Certificate, Issuer and ClusterIssuer always are). Left to the cluster: admission webhooks, quotas, RBAC escalation and a CRD already there with other versions."},
	{ID: ConfigMapVersion, Title: "ConfigMap named spec.version", Severity: report.Error, Run: configMapVersion, Push: PushRefuses,
		Description: "The ConfigMap the provider's selector picks has the version spec.version: its provider.cluster.x-k8s.io/version label or, without one, its name."},
	{ID: SelectorUnique, Title: "Selector matches one ConfigMap", Severity: report.Error, Run: selectorUnique, Push: PushRefuses,
		Description: "In each namespace, across the whole tree, each provider's fetchConfig.selector is valid and matches exactly one ConfigMap."},
	{ID: SelectorSemver, Title: "Matched ConfigMaps are semver", Severity: report.Error, Run: selectorSemver, Push: PushRefuses,
		Description: "Every ConfigMap a selector matches, and every components ConfigMap no provider in the tree selects, has a semver version (label or name): one bad match fails the operator's whole version list."},
	{ID: ProviderDuplicate, Title: "One version per provider", Severity: report.Error, Run: providerDuplicate, Push: PushWarns,
		Description: "Across the whole tree, two provider objects of one kind and name in one namespace (Turtles CAPIProviders as the kind of their spec.type) asking for different spec.versions are an error: the cluster holds one object, so one of them is never installed. A CAPIProvider with no spec.version is not compared (Turtles sets its version from its clusterctl config when it reconciles it). Packages under the policy's fixtures: globs (golden renders) are left out of the comparison."},
	{ID: CompressedAnnotation, Title: "Compressed annotation", Severity: report.Error, Run: compressedAnnotation, Push: PushRefuses,
		Description: `Components are gzip in binaryData exactly when the annotation provider.cluster.x-k8s.io/compressed is "true".`},
	{ID: MetadataSeries, Title: "Metadata has the release series", Severity: report.Error, Run: metadataSeries, Push: PushRefuses,
		Description: "The ConfigMap's metadata (metadata.yaml) parses and has a releaseSeries entry for the release's major.minor."},
	{ID: Contract, Title: "Contract served by core", Severity: report.Error, Run: contract, Push: PushRefuses,
		Description: "The contract of the provider's release series is one the tree's core provider serves, also for ConfigMaps no provider in the tree selects (skipped when the tree has no core provider). A provider whose metadata is not in the tree (no spec.fetchConfig.selector: the operator fetches it at install time) is a warning that its contract could not be checked, and so is every provider when the core provider's metadata is not in the tree."},
	{ID: PinVersion, Title: "Pinned version is the release", Severity: report.Error, Run: pinVersion, Push: PushRefuses,
		Description: "The pinned upstream version (pin.yaml, a Makefile variable, or the Dockerfile ARG VERSION= a computed Makefile version reads) is the version part of the ConfigMap name and spec.version; a computed version with no literal pin anywhere is a warning that it cannot be checked."},
	{ID: model.CheckPinDigest, Title: "Vendored files match pins", Severity: report.Error, Run: pinDigest, Push: PushRefuses,
		Description: "Every pinned vendored file exists and matches its SHA-256 pin; a file the pin's patches or relocation change matches it once they are reversed (the relocation, then the patches, last first)."},
	{ID: PinMissing, Title: "Upstream files are pinned", Severity: report.Warning, Run: pinMissing, Push: PushWarns,
		Description: "Every upstream download and vendored file is pinned by SHA-256; the finding names the download (URL, file:line). Downloads of a components release by the tree's shell scripts and by Makefiles outside the packages (curl, wget, gh release download, kubectl operator preload -u) count too, whether or not a package vendors files: a script with fewer SHA-256 digests than release URLs is named at its command's line, under the package whose template it writes. A provider whose bytes nothing holds is one too: with no spec.fetchConfig (the operator downloads the release clusterctl's built-in provider list names) or with spec.fetchConfig.url, the finding names the release and the URLs the operator downloads at install time; with spec.fetchConfig.oci on a registry the run did not contact (no --registry), it names the registry."},
	{ID: ReleaseSize, Title: "Helm release and ConfigMaps fit their objects", Severity: report.Error, Run: releaseSize, Push: PushWarns,
		Description: "The chart's Helm release (json of the chart with every file, values and manifest, gzip at best compression, base64, as Helm stores it in a Secret) stays under 1 MiB: a warning from 75 %, an error above 100 %; the finding names the heaviest files and a raw YAML shipped beside its blob (a .helmignore line like files/.*-components.yaml is a glob that matches nothing). Every components ConfigMap, plain, rendered or in a release, holds at most 1 MiB of data (what the API server counts: data values and decoded binaryData), an error naming its bytes and the limit above it."},
	{ID: OCISource, Title: "Operator reads fetchConfig.oci", Severity: report.Error, Run: ociSource, Push: PushRefuses,
		Description: "spec.fetchConfig.oci, read as the cluster-api-operator reads it (v0.28.0 parseOCISource and CopyOCIStore) and with no registry, names the release spec.version names: the operator can parse it (no scheme but http://, a lowercase repository below a registry host, a tag it can fetch), it fetches spec.version and nothing else (no tag, or that tag; no digest, no value it splits otherwise than written), spec.version is semver and makes a valid ConfigMap name <type>-<name>-<spec.version>, and fetchConfig has no url or selector beside it. HOST:PORT/REPO with no tag is a warning (operators before v0.20.0 read the port as the tag), and so is a ConfigMap of the tree labelled as the operator's own store of the release (it is installed instead of the artifact; two fail the provider)."},
	{ID: ImageRef, Title: "Images pinned", Severity: report.Error, Run: imageRefDefault, Push: PushRefuses,
		Description: "Every container image the components run (containers, initContainers and ephemeralContainers of Deployments, DaemonSets, StatefulSets, ReplicaSets, Jobs, CronJobs and Pods, in the vendored YAML and inside the blob) has a digest or a tag that does not move: no tag, latest, main, master and the policy's movingTags are errors. A digest-pinned image of the provider itself (its path names the provider) whose version tag is not the release is a warning."},
	{ID: ImageRelocation, Title: "Images relocated as pinned", Severity: report.Error, Run: imageRelocation, Push: PushRefuses,
		Description: "A provider whose pin records a relocation (pin.yaml relocate) runs no image under a relocated prefix, in the vendored YAML or inside the blob: the recorded relocation is what the package holds. pin-digest reverses it before comparing the components file with its pin."},
	{ID: RegistryDigest, Title: "Registry copy equals tree", Severity: report.Error, Push: PushWarns,
		Description: "The registry artifact tagged with the release (PREFIX/<type>-<name>:<release>) exists, reads back with every layer matching its manifest and, being the tree's release, holds exactly the local blob (components.gz) and metadata.yaml. A different release under the tag is version-reused instead."},
	{ID: VersionReused, Title: "Release name not reused", Severity: report.Error, Push: PushWarns,
		Description: "The release tag in the registry holds the tree's release: the artifact's kind, name, type, release, upstream version, contract, pins and raw YAML layer equal the tree's. Otherwise content changed without a version bump (or the tag was overwritten). With a base revision (verifier check --base REV, and each scan of a git source against the commit scanned before it), also: a provider whose release name (spec.version) is the base's gets the same components (inflated) and metadata as at the base; clusters that installed the name never get a change made under it."},
	{ID: VersionDowngrade, Title: "Release name not lowered", Severity: report.Error, Push: PushWarns,
		Description: "With a base revision (verifier check --base REV, and each scan of a git source against the commit scanned before it): no provider's release name (spec.version) is lower than at the base, compared as semantic versions as the cluster-api-operator does. A lower major.minor is an error (the operator refuses the downgrade); a lower patch or pre-release of the same minor is a warning (the operator installs it, taking clusters back to older bytes)."},
	{ID: Signature, Title: "Artifact signed", Severity: report.Error, Push: PushWarns,
		Description: "The artifact's manifest digest carries a valid signature, in any form cosign writes (a Sigstore bundle attached as an OCI referrer, or a legacy .sig image), by one of the trusted keys (the policy's keys and those the caller adds) or a keyless identity the policy trusts (identities, under its trustedRoot and tlog rule); a signature copied from another digest does not count; the finding names the form found and why it did not verify."},
	{ID: Provenance, Title: "Provenance matches pins", Severity: report.Error, Push: PushWarns,
		Description: "A SLSA provenance v1 attestation about the artifact's digest (a Sigstore bundle referrer or a legacy .att image) is signed by a trusted key or keyless identity, names a builder the policy allows and the artifact's release, and lists exactly the artifact's pins as materials and, as image dependencies, exactly the images the artifact's components run (its YAML layer, or the tree's release)."},
	{ID: OCIInstall, Title: "Operator installs the artifact", Severity: report.Error, Push: PushWarns,
		Description: "Every cluster-api-operator release with OCI support (v0.16.0 and later, ControlPlaneProvider's type named control-plane and, before v0.23.0, controlplane) finds components and metadata among the artifact's layer titles for the provider's type, name and spec.version, and what it finds is the artifact's components YAML and metadata.yaml: an OCI install (spec.fetchConfig.oci) gets exactly the checked bytes."},
	{ID: ClusterInstalled, Title: "Cluster installed the release", Severity: report.Error, Push: PushWarns,
		Description: "In a live cluster (verifier cluster), every provider's status.installedVersion is its spec.version, none of its conditions is False (the finding gives reason, message and since when), and with a tree, spec.version is the release the tree's provider of that kind, namespace and name requests."},
	{ID: ClusterConfigMap, Title: "Cluster ConfigMap is the tree's", Severity: report.Error, Push: PushWarns,
		Description: "In a live cluster, each provider's fetchConfig.selector matches exactly one ConfigMap in its namespace (none: the operator has nothing to install; more: it refuses), and with a tree that ConfigMap is the tree's rendered ConfigMap of the same release: components compared inflated, metadata, compressed annotation and labels. Other content is stale (same name as the tree's, other content: the operator never installs the tree's) or, when a field manager other than the one that labelled it wrote the content, edited in place (also reported without a tree)."},
	{ID: ClusterOCI, Title: "Cluster's OCI copy is the registry's", Severity: report.Error, Push: PushWarns,
		Description: "In a live cluster, the ConfigMap a fetchConfig.oci provider's release was copied into by the operator (once, never fetched again) holds the components YAML and metadata.yaml the registry artifact at that tag holds now (a moved tag is reported), and the artifact verifies as verifier verify verifies it (signature, provenance and the artifact's own findings are reported under their IDs). A registry the scan may not contact is a finding; nothing is contacted."},
	{ID: ClusterWorkload, Title: "Cluster runs the installed images", Severity: report.Error, Push: PushWarns,
		Description: "In a live cluster, each provider's Deployments (in its namespace) run the containers and images the components it installed from name, with their replicas (spec.deployment.replicas when set): a hand-edited image, container or replica count is reported, since the operator does not revert it."},
	{ID: ClusterCRD, Title: "Cluster CRDs are the release's", Severity: report.Error, Push: PushWarns,
		Description: "In a live cluster, every CRD the installed components hold exists, serves each version the release serves and stores the release's storage version."},
	{ID: WaiverExpired, Title: "Waiver expired", Severity: report.Error, Push: PushWarns,
		Description: "A policy waiver is past its expiry date: fix the finding or renew the waiver. Always an error."},
}

// Catalog returns every catalog entry in a stable order.
func Catalog() []Check { return slices.Clone(catalog) }

// Builtin returns the checks that run over the tree alone; image-ref
// reads movingTags (the policy's) as moving on top of MovingTags, and
// components-apply takes externalKinds (the policy's, GROUP/VERSION/KIND)
// as served on top of ExternalKinds.
func Builtin(movingTags, externalKinds []string) []Check {
	var out []Check
	for _, c := range catalog {
		switch c.ID {
		case ImageRef:
			c = imageRefCheck(movingTags)
		case ComponentsApply:
			c = componentsApplyCheck(externalKinds)
		}
		if c.Run != nil {
			out = append(out, c)
		}
	}
	return out
}

// Lookup finds a catalog entry by ID.
func Lookup(id string) (Check, bool) {
	for _, c := range catalog {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// IDs returns every catalog ID in catalog order.
func IDs() []string {
	ids := make([]string, len(catalog))
	for i, c := range catalog {
		ids[i] = c.ID
	}
	return ids
}

// Rules returns the catalog as report rules, plus extra checks whose IDs
// are not in the catalog.
func Rules(extra ...Check) []report.Rule {
	rules := make([]report.Rule, 0, len(catalog)+len(extra))
	for _, c := range catalog {
		rules = append(rules, c.Rule())
	}
	for _, c := range extra {
		if _, ok := Lookup(c.ID); !ok {
			rules = append(rules, c.Rule())
		}
	}
	return rules
}

// rel makes a package-relative slash path relative to the tree root.
func rel(pkg *model.Package, file string) string {
	if file == "" {
		return ""
	}
	if pkg == nil || pkg.Path == "" || pkg.Path == "." {
		return file
	}
	return path.Join(pkg.Path, file)
}

// pkgPath is the package path as used in findings.
func pkgPath(pkg *model.Package) string {
	if pkg == nil || pkg.Path == "" {
		return "."
	}
	return pkg.Path
}

// newFinding builds a finding located in a package file.
func newFinding(id string, pkg *model.Package, provider string, loc model.Location, msg, hint string) report.Finding {
	return report.Finding{
		Check:    id,
		Package:  pkgPath(pkg),
		Provider: provider,
		File:     rel(pkg, loc.File),
		Line:     loc.Line,
		Message:  msg,
		Hint:     hint,
	}
}

// quoteList renders values as `"a", "b"`.
func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// shortHex abbreviates a hex digest for messages.
func shortHex(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
