package operator

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/version"
)

// Rule names one thing the cluster-api-operator does with a provider's
// spec.fetchConfig.oci that can keep it from installing the release the
// provider names. Check reports which a provider breaks; each is decided
// from the provider object alone, with no registry.
type Rule string

// The rules. Releases is v0.16.0 (the first with OCI support) to v0.28.0
// unless the rule says otherwise.
const (
	// RuleExclusive: spec.fetchConfig names oci and also url or selector.
	// The CRD's validation refuses the object: "Must specify one and only
	// one of {oci, url, selector}" (api/v1alpha2/provider_types.go,
	// FetchConfiguration).
	RuleExclusive Rule = "fetch-exclusive"
	// RuleScheme: a scheme other than http://, which the operator does not
	// cut off, so the value does not parse (parseOCISource).
	RuleScheme Rule = "scheme"
	// RuleUnreadable: the repository part is not a reference oras-go
	// parses (CopyOCIStore: remote.NewRepository), e.g. no host, an
	// uppercase or empty path component.
	RuleUnreadable Rule = "unreadable"
	// RuleDigest: the value names a digest. [HOST[:PORT]/]REPO@DIGEST,
	// with or without a port, is split at the digest's ':' and the rest
	// does not parse ("invalid registry URL specified"); only
	// HOST:PORT/REPO:TAG@DIGEST parses, and then the operator fetches by
	// digest and drops the tag. Either way the content is not named by
	// spec.version. (Both shown by the real operator v0.28.0:
	// kubetest's TestRealOperatorDoor.)
	RuleDigest Rule = "digest"
	// RuleMisread: the operator parses the value but fetches another tag
	// than the one written (HOST/REPO:A:B fetches B from HOST/REPO and
	// drops A).
	RuleMisread Rule = "misread"
	// RuleTag: the tag the operator fetches (written, or spec.version) is
	// not one it can fetch (CopyOCIStore: oras.Copy, Repository.ParseReference).
	RuleTag Rule = "tag"
	// RuleTagVersion: a written tag other than spec.version. The operator
	// fetches the tag but stores and installs what it finds as release
	// spec.version (TemplateManifestsConfigMap names the ConfigMap
	// <type>-<name>-<spec.version>; the version label is spec.version), so
	// the release name does not name the content: bumping spec.version
	// alone reinstalls the old content under the new name.
	RuleTagVersion Rule = "tag-version"
	// RuleVersion: spec.version is missing or not a semantic version. The
	// preflight checks refuse a version that is not
	// (preflight_checks.go, checkProviderVersion: version.ParseSemantic);
	// a missing one is filled with the upstream repository's latest
	// release for a provider clusterctl knows (DownloadManifests), and
	// left empty otherwise.
	RuleVersion Rule = "version"
	// RuleReleaseName: the ConfigMap the operator stores the fetched
	// components in, <type>-<name>-<spec.version>, is not a valid object
	// name, or spec.version is not a valid label value: creating it fails
	// (manifests_downloader.go: TemplateManifestsConfigMap,
	// ProviderLabels; the cache Secret is that name plus "-cache",
	// ProviderCacheName).
	RuleReleaseName Rule = "release-name"
	// RulePortNoTag: HOST:PORT/REPO with no tag, which operators v0.16.0
	// to v0.19.0 split at the port's ':' (they read PORT/REPO as the tag)
	// and cannot fetch. A warning: v0.20.0 and later read it right.
	RulePortNoTag Rule = "port-no-tag"
	// RulePreloaded: ConfigMaps in the provider's namespace already carry
	// the labels of the operator's own store of the release (StoreLabels),
	// as `clusterctl operator preload` writes them. The operator then
	// does not fetch: it installs that ConfigMap (a warning: the tree's
	// ConfigMap checks judge it), and fails with more than one (an error).
	RulePreloaded Rule = "preloaded"

	// Not a rule: operator v0.16.0 alone labels the ConfigMap it stores
	// the components in with the fetchConfig.oci value ('/' and ':' made
	// '_'; manifests_downloader.go, ProviderLabels), so it cannot store a
	// value longer than 63 characters; v0.17.0 and later label it "oci".
	// Almost every real reference is longer, so reporting it would flag
	// nearly every provider for one superseded release.
)

// Rules lists every rule.
func Rules() []Rule {
	return []Rule{RuleExclusive, RuleScheme, RuleUnreadable, RuleDigest, RuleMisread, RuleTag,
		RuleTagVersion, RuleVersion, RuleReleaseName, RulePortNoTag, RulePreloaded}
}

// Where each rule was read in the operator's source.
const (
	srcCopy    = "cluster-api-operator v0.28.0 internal/controller/oci_source.go: parseOCISource, CopyOCIStore (oras-go remote.NewRepository, Repository.ParseReference)"
	srcAPI     = "cluster-api-operator v0.16.0 to v0.28.0 api/v1alpha2/provider_types.go: FetchConfiguration's XValidation rule"
	srcRelease = "cluster-api-operator v0.28.0 internal/controller/manifests_downloader.go: TemplateManifestsConfigMap, ProviderLabels, ProviderCacheName; oci_source.go: NewMapStore"
	srcVersion = "cluster-api-operator v0.28.0 internal/controller/preflight_checks.go: checkProviderVersion; manifests_downloader.go: DownloadManifests"
	srcStore   = "cluster-api-operator v0.17.0 to v0.28.0 internal/controller/manifests_downloader.go: ProviderLabels, DownloadManifests, checkConfigMapExists; phase_lifecycle.go: the configmap repository of providerLabelSelector"
	srcOldPort = "cluster-api-operator v0.16.0 to v0.19.0 internal/controller/oci_source.go: CopyOCIStore (fixed in v0.20.0)"
)

// Problem is one rule a provider breaks, in the operator's terms.
type Problem struct {
	Rule Rule
	// Message says what the operator does with the provider.
	Message string
	// Hint says what to write instead.
	Hint string
	// Source is the operator source the rule was read from (file,
	// function, release).
	Source string
	// Warning: at most a warning, because only operator releases before
	// v0.20.0 are affected, or because what the operator installs instead
	// is content the tree holds and pinseal checks.
	Warning bool
}

func (p *Problem) Error() string { return p.Message }

// Spec is what the rules read from a provider object.
type Spec struct {
	Kind    string // CoreProvider, ...
	Name    string // metadata.name
	Version string // spec.version
	OCI     string // spec.fetchConfig.oci
	URL     string // spec.fetchConfig.url
	// Selector: spec.fetchConfig.selector is set.
	Selector bool
}

// Check applies every rule but RulePreloaded (which needs the tree's
// ConfigMaps: Preloaded) to a provider that installs from
// spec.fetchConfig.oci and returns the problems, in a stable order; none
// for a provider without one.
func Check(s Spec) []Problem {
	if s.OCI == "" {
		return nil
	}
	var out []Problem
	add := func(p Problem) { out = append(out, p) }

	if s.URL != "" || s.Selector {
		also := "url"
		if s.Selector {
			also = "selector"
		}
		add(Problem{Rule: RuleExclusive, Source: srcAPI,
			Message: fmt.Sprintf("spec.fetchConfig names oci and %s: the API server refuses the provider (one and only one of oci, url, selector)", also),
			Hint:    fmt.Sprintf("keep oci and drop spec.fetchConfig.%s, or drop oci", also)})
	}

	src, err := ParseSource(s.OCI, s.Version)
	versionReported := false
	if p := (*Problem)(nil); errors.As(err, &p) {
		add(*p)
		versionReported = p.Rule == RuleVersion
	} else {
		if src.Ignored != "" {
			add(Problem{Rule: RuleMisread, Source: srcCopy,
				Message: fmt.Sprintf("the operator splits the value at its first two ':', so it fetches %s and drops %q", src.Ref(), src.Ignored),
				Hint:    FormHint})
		}
		switch {
		case src.Digest:
			add(Problem{Rule: RuleDigest, Source: srcCopy,
				Message: fmt.Sprintf("the operator fetches %s by digest and stores it as release %q; a digest does not say which release it is, and no tag written beside it is used", src.Ref(), s.Version),
				Hint:    "name the release by its tag, not by digest: " + FormHint})
		case !src.TagFromVersion && s.Version != "" && src.Reference != s.Version:
			add(Problem{Rule: RuleTagVersion, Source: srcRelease,
				Message: fmt.Sprintf("the operator fetches tag %q but installs it as release %q (spec.version): the release name does not name the content, and bumping spec.version alone reinstalls what the tag holds", src.Reference, s.Version),
				Hint:    fmt.Sprintf("drop the tag (the operator then fetches %s:%s), or template the tag and spec.version from one value", src.Repository, s.Version)})
		}
		if src.TagFromVersion && strings.Contains(src.Host, ":") {
			add(Problem{Rule: RulePortNoTag, Source: srcOldPort, Warning: true,
				Message: fmt.Sprintf("operators v0.16.0 to v0.19.0 split it at the port's ':', read %q as the tag and cannot fetch it (v0.20.0 and later read it as %s)", strings.SplitN(strings.TrimPrefix(s.OCI, "http://"), ":", 2)[1], src.Ref()),
				Hint:    fmt.Sprintf("write the tag, equal to spec.version: %s:%s", s.OCI, s.Version)})
		}
	}

	if !versionReported {
		switch _, verr := version.ParseSemantic(s.Version); {
		case s.Version == "":
			add(Problem{Rule: RuleVersion, Source: srcVersion,
				Message: "the provider has no spec.version: the operator installs the upstream repository's latest release (moving, unpinned) for a provider clusterctl knows, and cannot name the release of one it does not",
				Hint:    "set spec.version to the release the artifact is tagged with"})
		case verr != nil:
			add(Problem{Rule: RuleVersion, Source: srcVersion,
				Message: fmt.Sprintf("spec.version %q is not a semantic version, so the operator's preflight checks refuse the provider (%v)", s.Version, verr),
				Hint:    "set spec.version to a semantic version such as v1.10.1 or v1.10.1-core"})
		}
	}

	if s.Version != "" {
		if p, ok := releaseName(s); !ok {
			add(p)
		}
	}

	return out
}

// releaseName checks the name and labels the operator gives the
// ConfigMap it stores a fetched release in, for every type name the
// provider's kind has had.
func releaseName(s Spec) (Problem, bool) {
	if errs := content.IsLabelValue(s.Version); len(errs) > 0 {
		return Problem{Rule: RuleReleaseName, Source: srcRelease,
			Message: fmt.Sprintf("the operator labels the ConfigMap it stores the components in with spec.version %q, which is not a label value (%s), so it cannot create it", s.Version, strings.Join(errs, "; ")),
			Hint:    "set spec.version to at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"}, false
	}
	for _, tn := range Types(s.Kind) {
		name := tn.Type + "-" + s.Name + "-" + s.Version
		for _, n := range []string{name, name + "-cache"} {
			if errs := content.IsDNS1123Subdomain(n); len(errs) > 0 {
				return Problem{Rule: RuleReleaseName, Source: srcRelease,
					Message: fmt.Sprintf("operator %s stores the components in ConfigMap %q and its cache in Secret %q, and %q is not an object name (%s), so it cannot create it", tn.Releases, name, name+"-cache", n, strings.Join(errs, "; ")),
					Hint:    "set spec.version (and metadata.name) so that <type>-<name>-<spec.version>-cache is a lowercase DNS subdomain of at most 253 characters: no uppercase letters, no '+' or '_'"}, false
			}
		}
	}
	return Problem{}, true
}

// Labels of the ConfigMap the operator stores a fetched release in.
const (
	LabelVersion = "provider.cluster.x-k8s.io/version"
	LabelType    = "provider.cluster.x-k8s.io/type"
	LabelName    = "provider.cluster.x-k8s.io/name"
	LabelManaged = "managed-by.operator.cluster.x-k8s.io"
	LabelSource  = "provider.cluster.x-k8s.io/source"
)

// StoreLabels are the labels of the ConfigMap in which the operator
// (v0.17.0 to v0.28.0) stores a release it fetched from
// spec.fetchConfig.oci for a provider of type typ, and by which it looks
// for one before fetching and reads the release back when installing
// (ProviderLabels: version, type, name, managed-by "true", source "oci").
func StoreLabels(typ, name, version string) map[string]string {
	return map[string]string{LabelVersion: version, LabelType: typ, LabelName: name,
		LabelManaged: "true", LabelSource: "oci"}
}

// Preloaded is RulePreloaded for a provider of release version whose
// StoreLabels the ConfigMaps named in found (in its namespace) carry; nil
// when found is empty.
func Preloaded(version string, found []string) *Problem {
	switch len(found) {
	case 0:
		return nil
	case 1:
		return &Problem{Rule: RulePreloaded, Source: srcStore, Warning: true,
			Message: fmt.Sprintf("ConfigMap %s carries the labels of the operator's own store of release %q, so the operator installs it and never fetches from spec.fetchConfig.oci: the artifact is not what the cluster gets", found[0], version),
			Hint:    "drop the ConfigMap to install from the artifact, or drop fetchConfig.oci and select the ConfigMap with spec.fetchConfig.selector"}
	}
	return &Problem{Rule: RulePreloaded, Source: srcStore,
		Message: fmt.Sprintf("ConfigMaps %s all carry the labels of the operator's own store of release %q, so the operator finds more than one and fails the provider", strings.Join(found, ", "), version),
		Hint:    "keep at most one ConfigMap with these labels (none, to install from the artifact)"}
}
