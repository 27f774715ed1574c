// Package vendor turns a provider whose bytes nothing holds into one the
// tree holds.
//
// A provider with no spec.fetchConfig (the cluster-api-operator resolves
// it through clusterctl's built-in provider list) or with
// spec.fetchConfig.url is downloaded by the operator at install time, and
// nothing pins what it gets. Vendor downloads what the operator would
// (the components file and metadata.yaml of exactly the release
// spec.version names: internal/operator's DefaultDownload and URLDownload),
// pins each by SHA-256 (given, published by the release, or taken on
// first use and said so), and then either writes a ConfigMap package in
// the chart (the vendored YAML, the reproducible blob `builder build`
// writes, the metadata, pin.yaml, a ConfigMap of the release with its own
// selector label, and spec.fetchConfig.selector on the provider), or
// pushes a signed artifact with provenance at the reference the chart's
// own spec.fetchConfig.oci template names for the release and records
// the pins in the package.
//
// Everything is downloaded, checked and staged before the first write:
// a failed download, a wrong digest or a failed push leaves the tree as
// it was, and the files are then written all at once
// (internal/atomicfile).
package vendor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/bump"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/sign"
)

// Forms of a vendored provider.
const (
	FormConfigMap = "configmap"
	FormOCI       = "oci"
)

// Origins of a SHA-256 besides bump.FromFlag, bump.FromChecksums and
// bump.FromTOFU: the asset digest the releases API gives, and pin.yaml's
// entry for the provider (a release pinned already, pushed again).
const (
	FromAssetDigest = "asset-digest"
	FromPin         = "pin.yaml"
)

// DefaultAPIURL is GitHub's REST API.
const DefaultAPIURL = outdated.DefaultAPIURL

// TokenEnv names the environment variable the API token is read from.
const TokenEnv = outdated.TokenEnv

// DefaultHosts are the hosts a run may contact with no --allow-host:
// GitHub, its API and the storage it redirects release downloads to.
var DefaultHosts = []string{"github.com", "api.github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com"}

// Options configure Vendor.
type Options struct {
	// Provider is Kind/name of the provider to vendor; "" when the
	// package has exactly one provider whose bytes nothing holds.
	Provider string
	// Values are values files the chart is rendered with to find the
	// spec.fetchConfig.oci reference of ToOCI (the registry value).
	Values []string

	// SHA256 pins a file by URL (canonical, as the operator downloads it)
	// or by file name (metadata.yaml): lowercase hex.
	SHA256 map[string]string
	// TrustOnFirstUse takes the digest of a file that has no other from
	// the download itself (Result.Digests says so).
	TrustOnFirstUse bool

	// APIURL is the releases API root; "" means DefaultAPIURL.
	APIURL string
	// Token authenticates API requests (never sent to another host).
	Token string
	// AllowHosts are hosts (HOST[:PORT]) besides DefaultHosts and the
	// API's that requests may go to: a mirror, a redirect target. A
	// request to any other host is refused before it is sent.
	AllowHosts []string
	// Mirrors rewrite download URLs (pins keep the canonical URL).
	Mirrors []fetch.Mirror
	// MaxBytes bounds each download (fetch.DefaultMaxBytes when 0);
	// Timeout each request (fetch.DefaultTimeout when 0).
	MaxBytes int64
	Timeout  time.Duration
	// Retries repeats failed downloads (fetch.Fetcher.Retries).
	Retries int

	// ToOCI, when set, pushes the release as an artifact instead of
	// writing a ConfigMap package: PREFIX (HOST[:PORT][/PATH]) the
	// chart's spec.fetchConfig.oci, rendered with Values, must be under.
	ToOCI string
	// Registry are the registry client options of the push.
	Registry artifact.Options
	// Key returns the signing key (release.LoadKeyAsync); nil pushes
	// unsigned.
	Key  func() (*sign.PrivateKey, error)
	Sign sign.Options
	// BuilderVersion is stamped on the artifact.
	BuilderVersion string

	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Result is what Vendor did.
type Result struct {
	Package  string `json:"package"`
	Provider string `json:"provider"` // Kind/name
	// Source is where the operator downloaded the provider from before:
	// "default" or "url".
	Source string `json:"source"`
	// Repository is the repository URL the operator resolved it to.
	Repository string `json:"repository"`
	Release    string `json:"release"` // spec.version: the release downloaded
	Form       string `json:"form"`    // FormConfigMap or FormOCI
	// Digests are the files downloaded, with their SHA-256 and where the
	// digest came from.
	Digests []bump.Digest `json:"digests"`
	// Files are the files written, slash paths relative to the package.
	Files []string `json:"files"`
	// ConfigMap is the name of the ConfigMap written (FormConfigMap).
	ConfigMap string `json:"configMap,omitempty"`
	// Selector is the provider's new spec.fetchConfig.selector.matchLabels.
	Selector map[string]string `json:"selector,omitempty"`
	// Reference is REPOSITORY@DIGEST of the artifact pushed (FormOCI);
	// Tag the tag it is under.
	Reference string `json:"reference,omitempty"`
	Tag       string `json:"tag,omitempty"`
	Signed    bool   `json:"signed,omitempty"`
}

// TrustedOnFirstUse lists the digests taken from the download itself.
func (r *Result) TrustedOnFirstUse() []bump.Digest {
	var out []bump.Digest
	for _, d := range r.Digests {
		if d.From == bump.FromTOFU {
			out = append(out, d)
		}
	}
	return out
}

// ErrWhichProvider is wrapped when several providers of the package
// download their release at install time and Options.Provider names none.
var ErrWhichProvider = errors.New("several providers of the package download their release at install time; say which one to vendor (Kind/name)")

// ErrHeld is wrapped when the provider's bytes are held already: it
// installs from ConfigMaps of the tree or from an OCI artifact.
var ErrHeld = errors.New("the provider does not download its release at install time")

// Vendor vendors one provider of the chart in dir (see the package
// documentation). On error nothing in the tree has changed.
func Vendor(ctx context.Context, dir string, opts Options) (*Result, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var to *ociTarget
	if opts.ToOCI != "" {
		prefix, err := artifact.ParsePrefix(opts.ToOCI)
		if err != nil || prefix.IsLayout() {
			if err == nil {
				err = errors.New("an oci-layout prefix names no registry the chart can name")
			}
			return nil, fmt.Errorf("--to-oci: %w", err)
		}
		to = &ociTarget{prefix: prefix}
	}
	t, err := resolve(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	if to != nil {
		if err := t.ociReference(ctx, opts, to); err != nil {
			return nil, err
		}
	}
	d, err := newDownloader(opts)
	if err != nil {
		return nil, err
	}
	if d.pinned, err = t.pinnedDigests(to != nil); err != nil {
		return nil, err
	}
	got, err := d.download(ctx, t.download.URLs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was written", t.provider.ID(), err)
	}
	res := &Result{
		Package: dir, Provider: t.provider.ID(), Source: t.source,
		Repository: t.download.Repository, Release: t.download.Release,
	}
	t.checksums = d.checksums
	for _, f := range got {
		res.Digests = append(res.Digests, f.digest)
	}
	if to != nil {
		res.Form = FormOCI
		err = t.vendorOCI(ctx, opts, to, got, res)
	} else {
		res.Form = FormConfigMap
		err = t.vendorConfigMap(ctx, opts, got, res)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}
