package add

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/app/outdated"
	"github.com/pinseal/pinseal/pkg/model"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// upstream is one file of the release, read and pinned.
type upstream struct {
	name   string // the asset name
	data   []byte
	digest Digest
}

// served says whether the core of res serves contract; true when the
// tree has no core to judge by.
func served(res *Result, contract string) bool {
	return res.Core == nil || slices.Contains(res.Core.Serves, contract)
}

// notServed is the seed's sentence: "v0.9.1 needs contract v1beta2; core
// v1.10.1 serves v1beta1".
func notServed(res *Result, tag, contract string) string {
	return fmt.Sprintf("%s needs contract %s; core %s serves %s", tag, contract, res.Core.Version, strings.Join(res.Core.Serves, ", "))
}

// fatal says whether an error reading a release stops Add rather than
// passing the release over: a refused host, a digest the bytes do not
// match, an exhausted rate limit, a cancelled context.
func fatal(ctx context.Context, err error) bool {
	var rl *outdated.RateLimitError
	var de *outdated.DigestError
	return errors.Is(err, ErrHostNotAllowed) || errors.As(err, &rl) || errors.As(err, &de) || ctx.Err() != nil
}

// pickRelease chooses the release (see Options.Version) and returns it
// with its metadata.yaml, whose pin it records first in res.Digests.
func pickRelease(ctx context.Context, assets *outdated.Assets, opts Options, res *Result) (outdated.Release, []byte, error) {
	rels, err := assets.Releases(ctx, opts.Repo)
	if err != nil {
		return outdated.Release{}, nil, err
	}
	if len(rels) == 0 {
		return outdated.Release{}, nil, fmt.Errorf("%s has no stable release", opts.Repo)
	}
	if opts.Version != "" {
		i := slices.IndexFunc(rels, func(r outdated.Release) bool { return r.Tag == opts.Version })
		if i < 0 {
			return outdated.Release{}, nil, fmt.Errorf("%s has no stable release %s (newest: %s)", opts.Repo, opts.Version, rels[0].Tag)
		}
		con, meta, err := assets.Contract(ctx, rels[i])
		if err != nil {
			return outdated.Release{}, nil, err
		}
		if !served(res, con) {
			if !opts.AllowBreaking {
				return outdated.Release{}, nil, fmt.Errorf("%w: %s; take a release of a series the core serves, move the core first (`builder plan`), or pass --allow-breaking", ErrUnserved, notServed(res, opts.Version, con))
			}
			res.Breaking = true
			res.Notes = append(res.Notes, "added with --allow-breaking: "+notServed(res, opts.Version, con)+"; the verifier's contract check fails until the core serves it")
		}
		return taken(rels[i], con, meta, res)
	}
	for i, r := range rels {
		if i >= outdated.DefaultMaxMetadata {
			break
		}
		con, meta, err := assets.Contract(ctx, r)
		switch {
		case err != nil && fatal(ctx, err):
			return outdated.Release{}, nil, err
		case err != nil:
			res.PassedOver = append(res.PassedOver, PassedOver{Tag: r.Tag, Reason: "contract unknown: " + err.Error()})
		case !served(res, con):
			res.PassedOver = append(res.PassedOver, PassedOver{Tag: r.Tag, Contract: con, Reason: notServed(res, r.Tag, con)})
		default:
			return taken(r, con, meta, res)
		}
	}
	why := "no stable release"
	if res.Core != nil {
		why = fmt.Sprintf("no stable release (of the %d newest) declares a contract core %s serves (%s)", min(len(rels), outdated.DefaultMaxMetadata), res.Core.Version, strings.Join(res.Core.Serves, ", "))
	}
	return outdated.Release{}, nil, fmt.Errorf("%w: %s of %s has %s; move the core first (`builder plan`), or name a release with --version and --allow-breaking", ErrUnserved, opts.Repo, opts.Repo, why)
}

func taken(r outdated.Release, con string, meta []byte, res *Result) (outdated.Release, []byte, error) {
	res.Version, res.Contract = r.Tag, con
	d, err := pinOf(r, outdated.MetadataAsset, meta, res)
	if err != nil {
		return outdated.Release{}, nil, err
	}
	res.Digests = append(res.Digests, d)
	return r, meta, nil
}

// pinOf pins the bytes data of asset name of release r: the canonical
// download URL and the SHA-256, from the API's digest (which the reader
// has checked the bytes against) or, when it gives none, the bytes'.
func pinOf(r outdated.Release, name string, data []byte, res *Result) (Digest, error) {
	i := slices.IndexFunc(r.Assets, func(a outdated.Asset) bool { return a.Name == name })
	if i < 0 {
		return Digest{}, fmt.Errorf("%w: release %s has no %s", ErrMissingAsset, r.Tag, name)
	}
	a := r.Assets[i]
	u := a.DownloadURL
	if u == "" {
		u = "https://github.com/" + res.Repo + "/releases/download/" + r.Tag + "/" + name
	}
	d := Digest{URL: u, SHA256: sha(data), From: FromAssetDigest}
	if a.SHA256() == "" {
		d.From = FromDownload
		res.Notes = append(res.Notes, fmt.Sprintf("the API gives no digest of %s: pinned to the bytes read now (sha256:%s); compare it with the release's published checksums", u, d.SHA256))
	}
	return d, nil
}

// readComponents reads the release's components file: the asset the
// operator and clusterctl name <type>-components.yaml.
func readComponents(ctx context.Context, assets *outdated.Assets, opts Options, kind string, r outdated.Release, res *Result) (upstream, error) {
	name := model.ProviderKinds[kind] + "-components.yaml"
	i := slices.IndexFunc(r.Assets, func(a outdated.Asset) bool { return a.Name == name })
	if i < 0 {
		have := make([]string, 0, len(r.Assets))
		for _, a := range r.Assets {
			have = append(have, a.Name)
		}
		return upstream{}, fmt.Errorf("%w: release %s of %s has no %s (its assets: %s); is %s the repository of a %s?", ErrMissingAsset, r.Tag, res.Repo, name, strings.Join(have, ", "), res.Repo, kind)
	}
	data, err := assets.Read(ctx, r.Tag, r.Assets[i], opts.MaxBytes)
	if err != nil {
		return upstream{}, err
	}
	d, err := pinOf(r, name, data, res)
	if err != nil {
		return upstream{}, err
	}
	res.Digests = append(res.Digests, d)
	return upstream{name: name, data: data, digest: d}, nil
}
