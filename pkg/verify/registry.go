package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"oras.land/oras-go/v2/registry"

	"github.com/pinseal/pinseal/pkg/artifact"
	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/remote"
	"github.com/pinseal/pinseal/pkg/sign"
)

// ErrNoTrustedKeys is returned when the signature or provenance check is
// enabled but neither the policy nor the caller gives a key to verify with.
var ErrNoTrustedKeys = errors.New("no trusted keys: the policy lists no public key under `keys:` and no keyless signer under `identities:`, and no other key was given (or turn the signature and provenance checks off in the policy)")

// RegistryOptions say where the registry checks look and whom they trust.
type RegistryOptions struct {
	// Prefix is where releases are: PREFIX/<type>-<name>:<release>.
	Prefix artifact.Prefix
	// Registry says how registries are reached (plain HTTP, credentials).
	Registry artifact.Options
	// Keys are trusted on top of the policy's keys.
	Keys []*sign.PublicKey
	// Workers is how many artifacts are read at once (remote.DefaultWorkers
	// when <= 0).
	Workers int
	// Allow are the registries (HOST[:PORT]) or repository prefixes
	// (HOST[:PORT]/PATH) providers' spec.fetchConfig.oci may be read from;
	// nothing else is contacted for them. With a zero Prefix only providers
	// with spec.fetchConfig.oci are checked.
	Allow []string
}

// ValidAllowEntry says what is wrong with an allowlist entry: a registry
// HOST[:PORT] or a repository prefix HOST[:PORT]/PATH, no scheme, no tag.
//
// The allowlists of `verifier check --allow-registry` and of the service's
// registries are checked with it, with oras-go (the library that opens the
// registries); Allowed in pkg/remote decides what lies within one.
func ValidAllowEntry(e string) error {
	if strings.Contains(e, "://") {
		return fmt.Errorf("%q: write HOST[:PORT][/PATH], without a scheme", e)
	}
	if e == "" || strings.ContainsAny(e, "@") {
		return fmt.Errorf("%q is not a registry HOST[:PORT] or repository prefix HOST[:PORT]/PATH (no tag or digest)", e)
	}
	host, path, _ := strings.Cut(strings.TrimSuffix(e, "/"), "/")
	ref := registry.Reference{Registry: host, Repository: "x"}
	if path != "" {
		ref.Repository = path
	}
	if err := ref.ValidateRegistry(); err != nil {
		return fmt.Errorf("%q: %q is not a registry HOST[:PORT]: %w", e, host, err)
	}
	if err := ref.ValidateRepository(); err != nil {
		return fmt.Errorf("%q: %q is not a repository path (the path part must be a repository prefix: lowercase, no tag or digest): %w", e, path, err)
	}
	return nil
}

// Registry is where the registry checks read each provider's release
// artifact and whom they trust: made by NewRegistry, set as
// Options.Registry.
type Registry struct {
	prefix artifact.Prefix
	remote remote.Options
	// checks judge the artifacts Attach put on the tree, with the
	// policy's builders as the allowed builder ids.
	checks []check.Check
}

// NewRegistry is the registry checks (registry-digest, version-reused,
// signature, provenance, oci-install) under pol (nil: policy.Default()):
// the artifacts are read from reg.Prefix and verified with what pol trusts
// plus reg.Keys (TrustedBy; ErrNoTrustedKeys when that is nothing and the
// signature or provenance check is on). pol should be the policy of the
// verification it is set on.
func NewRegistry(pol *policy.Policy, reg RegistryOptions) (*Registry, error) {
	if pol == nil {
		pol = policy.Default()
	}
	trust, err := TrustedBy(pol, reg.Keys)
	if err != nil {
		return nil, err
	}
	return &Registry{
		prefix: reg.Prefix,
		remote: remote.Options{Registry: reg.Registry, Trust: trust, Workers: reg.Workers, Allow: slices.Clone(reg.Allow)},
		checks: check.Registry(pol.Builders),
	}, nil
}

// Attach reads every provider's release artifact and verifies it
// (remote.Attach), leaving it on the provider for the registry checks.
// log receives debug logs (nil: slog.Default()).
func (r *Registry) Attach(ctx context.Context, t *model.Tree, log *slog.Logger) error {
	ro := r.remote
	ro.Logger = log
	return remote.Attach(ctx, t, r.prefix, ro)
}

// TrustedBy is what pol (nil: policy.Default()) trusts, plus extra keys
// (Trust), for verifying signatures and provenance: ErrNoTrustedKeys when
// that is nothing while the signature or provenance check is on.
func TrustedBy(pol *policy.Policy, extra []*sign.PublicKey) (sign.Trust, error) {
	if pol == nil {
		pol = policy.Default()
	}
	trust, err := Trust(pol, extra)
	if err != nil {
		return sign.Trust{}, err
	}
	if trust.Empty() && (pol.Enabled(check.Signature) || pol.Enabled(check.Provenance)) {
		return sign.Trust{}, ErrNoTrustedKeys
	}
	return trust, nil
}

// Trust is what the policy trusts, plus extra keys: its keys (see
// TrustedKeys), its keyless identities with the trusted root that
// certifies them (the policy's trustedRoot; else the public-good root
// cosign caches, when it is there: nothing is fetched), and its tlog rule.
func Trust(pol *policy.Policy, extra []*sign.PublicKey) (sign.Trust, error) {
	keys, err := TrustedKeys(pol, extra)
	if err != nil {
		return sign.Trust{}, err
	}
	t := sign.Trust{Keys: keys, TLog: sign.TLogOptional}
	if pol == nil {
		return t, nil
	}
	src := pol.Source
	if src == "" {
		src = policy.DefaultSource
	}
	if t.TLog, err = sign.ParseTLogMode(pol.TLog); err != nil {
		return sign.Trust{}, fmt.Errorf("policy %s: %w", src, err)
	}
	for _, id := range pol.Identities {
		t.Identities = append(t.Identities, sign.Identity{Issuer: id.Issuer, Subject: id.Subject, SubjectRegExp: id.SubjectRegExp})
	}
	rootFile := pol.TrustedRootPath()
	if rootFile == "" && (len(t.Identities) > 0 || t.TLog == sign.TLogRequired) {
		rootFile = sign.PublicGoodRoot()
		if rootFile == "" {
			return sign.Trust{}, fmt.Errorf("policy %s: identities and tlog: required need a Sigstore trusted root: set trustedRoot: trusted_root.json (cosign's cached public-good root under ~/.sigstore/root is used when it is there; nothing is fetched)", src)
		}
	}
	if rootFile != "" {
		tr, err := sign.LoadTrustedRoot(rootFile)
		if err != nil {
			return sign.Trust{}, fmt.Errorf("policy %s: trustedRoot: %w", src, err)
		}
		t.Root, t.RootSource = tr, rootFile
	}
	return t, nil
}

// TrustedKeys returns the policy's keys (inline PEM or files relative to
// the policy) followed by extra, without duplicates. A key that cannot be
// read or is of a type cosign cannot verify with is an error naming it.
func TrustedKeys(pol *policy.Policy, extra []*sign.PublicKey) ([]*sign.PublicKey, error) {
	var keys []*sign.PublicKey
	if pol != nil {
		pems, err := pol.KeyPEMs()
		if err != nil {
			return nil, err
		}
		for i, b := range pems {
			k, err := sign.ParsePublicKey(b)
			if err != nil {
				src := pol.Source
				if src == "" {
					src = policy.DefaultSource
				}
				return nil, fmt.Errorf("policy %s: keys[%d]: %w", src, i, err)
			}
			if pol.Keys[i] != "" && !strings.Contains(pol.Keys[i], "-----BEGIN ") {
				k.Source = pol.Keys[i]
			}
			keys = append(keys, k)
		}
	}
	keys = append(keys, extra...)
	out := keys[:0]
	for _, k := range keys {
		if !slices.ContainsFunc(out, k.Equal) {
			out = append(out, k)
		}
	}
	return out, nil
}
