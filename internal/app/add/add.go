// Package add writes a new provider package into a tree, pinned and shaped like its sibling packages.
//
// Add picks the upstream release (the newest stable one whose contract
// the tree's core serves, or the one asked for), reads its components
// and metadata.yaml through the GitHub releases API under the host rules
// of internal/app/outdated (the API's asset digest checked where it gives
// one), pins both by SHA-256, and writes a package laid out like the
// sibling provider packages beside the new directory: pins in pin.yaml
// or in the Makefile, the same template and file names, the same
// release-name convention and namespace, a selector label of its own,
// the compressed annotation, ConfigMap name = release = spec.version, and
// a configSecret stub documenting the variables the components need.
//
// The package is staged in a hidden directory beside its target,
// checked by the verifier's engine, and renamed into place: it appears
// whole or not at all, and an existing directory is never replaced.
package add

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/pkg/changes"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/model"
)

// Errors Add wraps, so callers can tell the refusals apart.
var (
	// ErrExists: the package directory exists already.
	ErrExists = errors.New("the package directory exists already")
	// ErrInTree: the tree holds the provider already (a second core among them).
	ErrInTree = errors.New("the tree holds this provider already")
	// ErrUnserved: the release's contract is not one the tree's core serves.
	ErrUnserved = errors.New("contract not served by the tree's core")
	// ErrMissingAsset: the release lacks a file the package needs.
	ErrMissingAsset = errors.New("release asset missing")
	// ErrHostNotAllowed is the releases API client's: a request to a host
	// that is not allowed was refused before it was sent.
	ErrHostNotAllowed = outdated.ErrHostNotAllowed
)

// Where a pin's SHA-256 came from.
const (
	// FromAssetDigest: the digest the releases API gives for the asset,
	// checked against the bytes read.
	FromAssetDigest = "asset-digest"
	// FromDownload: the API gives no digest; the SHA-256 is that of the
	// bytes read now (compare it with the release's published checksums).
	FromDownload = "download"
)

// Options configure Add.
type Options struct {
	// Provider is Kind/name of the new provider (InfrastructureProvider/proxmox).
	Provider string
	// Repo is OWNER/REPO of its GitHub releases.
	Repo string
	// Version is the upstream release to add; "" takes the newest stable
	// release whose contract the tree's core serves.
	Version string
	// AllowBreaking adds a Version whose contract the core does not serve.
	AllowBreaking bool
	// DryRun reads and checks everything and writes nothing.
	DryRun bool

	// APIURL, Token, AllowHosts and Client are the releases API client's
	// (outdated.Options): the API's host is allowed, GitHub's asset hosts
	// too when APIURL is GitHub's, AllowHosts besides; nothing else is
	// asked.
	APIURL     string
	Token      string
	AllowHosts []string
	Client     *http.Client
	// MaxBytes bounds the components file read (fetch.DefaultMaxBytes when 0).
	MaxBytes int64

	// Logger receives progress; nil discards it.
	Logger *slog.Logger
}

// Result is what Add wrote (or, with DryRun, would write). Its JSON form
// is api/add.schema.json.
type Result struct {
	Package  string `json:"package"`  // the directory as given
	Provider string `json:"provider"` // Kind/name
	Repo     string `json:"repo"`     // OWNER/REPO
	Version  string `json:"version"`  // the upstream release
	Release  string `json:"release"`  // ConfigMap name and spec.version
	Contract string `json:"contract"` // of the release's series
	// Core is the tree's core provider the contract was judged against;
	// absent when the tree holds none (or the core is what is added).
	Core *outdated.Core `json:"core,omitempty"`
	// Breaking: the release's contract is not one Core serves (added
	// with AllowBreaking).
	Breaking bool `json:"breaking,omitempty"`
	// PassedOver are the newer stable releases not taken, newest first.
	PassedOver []PassedOver `json:"passedOver"`
	// Sibling is the package whose shape was followed (slash path
	// relative to the tree); "" when there is none and the layout of
	// examples/ was used.
	Sibling string `json:"sibling,omitempty"`
	// Pins says where the pins are: "pin.yaml" or "Makefile".
	Pins      string            `json:"pins"`
	Namespace string            `json:"namespace,omitempty"`
	Selector  map[string]string `json:"selector"`
	// Variables are the ${VAR} of the components without a default: the
	// Secret spec.configSecret names must give them.
	Variables []string `json:"variables"`
	Digests   []Digest `json:"digests"`
	Files     []File   `json:"files"`
	DryRun    bool     `json:"dryRun,omitempty"`
	// Notes say what was decided and why (the release-name convention,
	// a digest taken from the download).
	Notes []string `json:"notes,omitempty"`
}

// PassedOver is a newer release not taken, and why.
type PassedOver struct {
	Tag      string `json:"tag"`
	Contract string `json:"contract,omitempty"`
	Reason   string `json:"reason"`
}

// Digest is one upstream file pinned.
type Digest struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
	From   string `json:"from"` // FromAssetDigest or FromDownload
}

// File is one file of the new package.
type File struct {
	Path   string `json:"path"` // slash path relative to the package
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
}

var (
	repoRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`) })
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`) })
)

// Validate says what is wrong with the options as given (a usage error).
func (o Options) Validate() error {
	kind, name, ok := strings.Cut(o.Provider, "/")
	if !ok || model.ProviderKinds[kind] == "" || !nameRE().MatchString(name) || len(name) > 63 {
		kinds := make([]string, 0, len(model.ProviderKinds))
		for k := range model.ProviderKinds {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		return fmt.Errorf("--provider %q: want Kind/name with Kind one of %s and name a DNS label (InfrastructureProvider/proxmox)", o.Provider, strings.Join(kinds, ", "))
	}
	if !repoRE().MatchString(o.Repo) || strings.HasPrefix(o.Repo, ".") {
		return fmt.Errorf("--github %q: want OWNER/REPO (ionos-cloud/cluster-api-provider-proxmox)", o.Repo)
	}
	if o.Version != "" {
		if _, err := version.ParseSemantic(o.Version); err != nil || !strings.HasPrefix(o.Version, "v") {
			return fmt.Errorf("--version %q: want a release tag vX.Y.Z", o.Version)
		}
	}
	if o.AllowBreaking && o.Version == "" {
		return errors.New("--allow-breaking takes a release the core does not serve: name it with --version")
	}
	for _, h := range o.AllowHosts {
		if err := outdated.ValidHost(h); err != nil {
			return err
		}
	}
	if _, err := outdated.ParseAPIURL(o.APIURL); err != nil {
		return err
	}
	return nil
}

// Add writes the package of opts.Provider at dir (see the package
// documentation). On error nothing in the tree has changed.
func Add(ctx context.Context, dir string, opts Options) (*Result, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = fetch.DefaultMaxBytes
	}
	kind, name, _ := strings.Cut(opts.Provider, "/")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w", dir, err)
	}
	base, parent := filepath.Base(abs), filepath.Dir(abs)
	if errs := content.IsDNS1123Label(base); len(errs) > 0 {
		return nil, fmt.Errorf("add %s: the directory name %q is no chart name (%s)", dir, base, strings.Join(errs, "; "))
	}
	if _, err := os.Lstat(abs); err == nil {
		return nil, fmt.Errorf("add %s: %w; choose another directory, or move a provider already there with `builder bump`", dir, ErrExists)
	}
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("add %s: the tree %s is not a directory; create it first", dir, parent)
	}
	tree, err := load.Tree(ctx, parent, load.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("add %s: loading the packages beside it: %w", dir, err)
	}
	res := &Result{Package: dir, Provider: opts.Provider, Repo: opts.Repo, PassedOver: []PassedOver{}, Variables: []string{}}
	if err := refuseInTree(tree, kind, name); err != nil {
		return nil, fmt.Errorf("add %s: %w", dir, err)
	}
	if cores := outdated.TreeCores(tree); len(cores) > 0 && kind != "CoreProvider" {
		res.Core = &cores[0]
	}
	assets, err := outdated.NewAssets(outdated.Options{APIURL: opts.APIURL, Token: opts.Token, AllowHosts: opts.AllowHosts, Client: opts.Client, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	rel, meta, err := pickRelease(ctx, assets, opts, res)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w; nothing was written", dir, err)
	}
	comp, err := readComponents(ctx, assets, opts, kind, rel, res)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w; nothing was written", dir, err)
	}
	for _, v := range changes.Variables(comp.data) {
		if v.Default == "" {
			res.Variables = append(res.Variables, v.Name)
		}
	}
	sh := learnShape(tree, parent, kind)
	pkg, err := sh.write(tree, newPackage{base: base, kind: kind, name: name, repo: opts.Repo, version: rel.Tag,
		components: comp, metadata: upstream{name: outdated.MetadataAsset, data: meta, digest: res.Digests[0]}, variables: res.Variables}, res)
	if err != nil {
		return nil, fmt.Errorf("add %s: %w; nothing was written", dir, err)
	}
	// The metadata was read first; list the components first, as the pins do.
	res.Digests = []Digest{res.Digests[1], res.Digests[0]}
	for _, f := range pkg {
		res.Files = append(res.Files, File{Path: f.rel, Size: len(f.data), SHA256: sha(f.data)})
	}
	if opts.DryRun {
		res.DryRun = true
		return res, nil
	}
	if err := commit(ctx, abs, pkg, res); err != nil {
		return nil, fmt.Errorf("add %s: %w; nothing was written", dir, err)
	}
	return res, nil
}

// refuseInTree refuses a provider the tree holds already, and a second
// core.
func refuseInTree(t *model.Tree, kind, name string) error {
	for _, pkg := range t.Packages {
		for _, p := range pkg.Providers {
			switch {
			case kind == "CoreProvider" && p.Kind == kind:
				return fmt.Errorf("%w: the core provider %s is in %s, and a tree has one core; move it with `builder bump`", ErrInTree, p.ID(), pkg.Path)
			case p.Kind == kind && p.Name == name:
				return fmt.Errorf("%w: %s is in %s (release %s); move it with `builder bump`", ErrInTree, p.ID(), pkg.Path, p.Version)
			}
		}
	}
	return nil
}
