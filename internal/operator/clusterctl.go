package operator

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
)

// ClusterctlRelease is the cluster-api release whose clusterctl library
// cluster-api-operator v0.28.0 builds with: the built-in provider list and
// the GitHub repository client below are read from it.
const ClusterctlRelease = "cluster-api v1.12.10"

// gitlabHost is a host the operator takes for GitLab (util.IsGitLabDomain).
var gitlabHost = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^gitlab(-.*)?\.`) })

// kindName keys the built-in list: the operator kind and the name.
type kindName struct{ kind, name string }

// Download is what the operator downloads at install time for a provider
// that has no ConfigMap or OCI artifact to install from: a release of a
// GitHub (or GitLab) repository, fetched by URL.
type Download struct {
	// Repository is the URL clusterctl resolved the provider to: the
	// built-in list's for a provider with no fetchConfig, else
	// spec.fetchConfig.url.
	Repository string
	// Release is the release (tag) fetched: spec.version, or "" when
	// spec.version is empty and the operator takes the repository's
	// latest release at install time.
	Release string
	// URLs are the files fetched, components first and metadata.yaml
	// second, when the repository is a GitHub release URL clusterctl
	// understands; empty otherwise (a GitLab package URL, or one it
	// refuses: Problem says which).
	URLs []string
	// Problem says why the operator cannot download from Repository at
	// all ("" when it can): an unknown provider, a URL it refuses.
	Problem string
}

// DefaultDownload is what the operator downloads for a provider of the
// given kind, name (metadata.name: every kind's ProviderName() returns it,
// api/v1alpha2/*_wrapper.go) and spec.version when the provider has no
// spec.fetchConfig. ok is false when clusterctl's built-in list has no such
// provider: the operator then fails the provider (UnknownProviderReason),
// and Download.Problem says so.
func DefaultDownload(kind, name, version string) (d Download, ok bool) {
	u, ok := clusterctlProviders[kindName{kind, name}]
	if !ok {
		return Download{Release: version, Problem: fmt.Sprintf(
			"clusterctl's built-in provider list (%s) has no %s named %q, and with no spec.fetchConfig the operator knows nowhere else to download it from: it fails the provider (UnknownProvider)",
			ClusterctlRelease, kind, name)}, false
	}
	return URLDownload(u, version), true
}

// URLDownload is what the operator downloads for a provider whose
// repository URL is u (spec.fetchConfig.url, or the built-in list's) and
// whose spec.version is version. Modelled on cluster-api v1.12.10,
// cmd/clusterctl/client/repository/repository_github.go: NewGitHubRepository
// takes https://github.com/OWNER/REPO/releases/{latest|TAG}/PATH,
// GetFile fetches https://github.com/OWNER/REPO/releases/download/VERSION/FILE
// (httpGetFilesFromRelease; the GitHub API fallback downloads the same
// release asset), and the operator asks for metadata.yaml and the
// components file at spec.version (manifests_downloader.go,
// RepositoryConfigMap). The operator hands https://github.com URLs to that
// client and gitlab URLs to clusterctl's GitLab client (util/util.go,
// RepositoryFactory); everything else it refuses.
func URLDownload(u, version string) Download {
	d := Download{Repository: u, Release: version}
	r, err := url.Parse(u)
	if err != nil || r.Scheme != "https" {
		d.Problem = fmt.Sprintf("the operator accepts only https:// repository URLs (util.RepositoryFactory), not %q", u)
		return d
	}
	if r.Host != "github.com" {
		if !gitlabHost().MatchString(r.Host) || !strings.HasPrefix(r.Path, "/api/v4/projects/") {
			d.Problem = fmt.Sprintf("the operator downloads only from GitHub release URLs and GitLab package URLs (https://gitlab…/api/v4/projects/…; util.RepositoryFactory), not from %q", u)
		}
		return d
	}
	parts := strings.Split(strings.TrimPrefix(r.Path, "/"), "/")
	if len(parts) < 5 || parts[2] != "releases" {
		d.Problem = fmt.Sprintf("%q is not a GitHub release URL https://github.com/OWNER/REPO/releases/{latest|TAG}/FILE, which clusterctl refuses", u)
		return d
	}
	owner, repo, tag := parts[0], parts[1], parts[3]
	// clusterctl's default version is the URL's tag; the operator passes
	// spec.version instead whenever it is set.
	if version == "" && tag != "latest" {
		version = tag
		d.Release = tag
	}
	if version == "" {
		return d // the latest release of the contract, decided at install time
	}
	file := path.Base(strings.Join(parts[4:], "/"))
	base := fmt.Sprintf("https://github.com/%s/%s/releases/download/%s/", owner, repo, version)
	d.URLs = []string{base + file, base + "metadata.yaml"}
	return d
}
