package operator

import (
	"fmt"
	"strings"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
)

// How the cluster-api-operator reads spec.fetchConfig.oci, as of v0.28.0
// (internal/controller/oci_source.go, parseOCISource and CopyOCIStore;
// unchanged on main at the time of reading):
//
//  1. A leading "http://" is cut off and means plain HTTP. No other scheme
//     is understood: "https://" and "oci://" stay in the value.
//  2. The rest is split at its first two ':'. Two parts whose second has
//     no '/' are REPOSITORY:TAG; three parts are HOST:PORT/REPOSITORY:TAG
//     (the third part, ':' and all, is the tag); anything else is the
//     repository alone, and the tag is spec.version.
//  3. The repository part goes to oras-go's remote.NewRepository, which
//     parses it as a whole reference (registry.ParseReference): an
//     unparsable value ends the fetch ("invalid registry URL specified").
//     A tag or digest that part still carries is kept in the parsed
//     reference but never used.
//  4. The tag goes to oras.Copy as the source reference, which the
//     repository reads with (*remote.Repository).ParseReference: a
//     string with '@' is a digest (the text before it dropped), one with
//     ':' is a digest, an empty one is refused.
//
// Operators v0.16.0 to v0.19.0 split differently in step 2: two parts were
// always REPOSITORY:TAG, so HOST:PORT/REPOSITORY with no tag read the port
// and path as the tag and failed (fixed in v0.20.0, "Fix OCI source
// parsing issues").
//
// Steps 3 and 4 are oras-go's code, which pinseal calls itself: the
// operator v0.28.0 builds with oras-go v2.6.2, whose ParseReference,
// NewRepository and Repository.ParseReference are identical to those of the
// oras-go pinseal builds with.

// Source is a spec.fetchConfig.oci value as the operator reads it.
type Source struct {
	// PlainHTTP: the value starts with http://.
	PlainHTTP bool
	// Repository is HOST[:PORT]/PATH, where the operator fetches from.
	Repository string
	// Host is HOST[:PORT] of Repository.
	Host string
	// Reference is the tag (or digest, when Digest) the operator fetches.
	Reference string
	// Digest: Reference is a digest ("sha256:<hex>").
	Digest bool
	// TagFromVersion: no tag was written; Reference is spec.version.
	TagFromVersion bool
	// Ignored is a tag or digest written in the repository part that the
	// operator parses but does not fetch ("" when none).
	Ignored string
}

// Ref is "REPOSITORY:TAG", or "REPOSITORY@DIGEST" when Digest.
func (s Source) Ref() string {
	if s.Digest {
		return s.Repository + "@" + s.Reference
	}
	return s.Repository + ":" + s.Reference
}

// FormHint is how to write a value every operator release reads the same.
const FormHint = "write [http://]HOST[:PORT]/REPOSITORY with no tag (the operator then fetches the tag spec.version names), or with :TAG equal to spec.version"

// split is step 2 above: the repository part and the tag, and whether
// the tag is spec.version because none was written.
func split(rest, version string) (repo, tag string, fromVersion bool) {
	parts := strings.SplitN(rest, ":", 3)
	switch {
	case len(parts) == 2 && !strings.Contains(parts[1], "/"):
		return parts[0], parts[1], false
	case len(parts) == 3:
		return parts[0] + ":" + parts[1], parts[2], false
	}
	return rest, version, true
}

// ParseSource reads spec.fetchConfig.oci as the operator does, for a
// provider whose spec.version is version. It fails exactly when the
// operator's fetch fails before contacting a registry; the error is a
// *Problem saying which rule and what to write. A value that parses can
// still break a rule of Check (a digest, a tag other than spec.version).
func ParseSource(oci, version string) (Source, error) {
	var s Source
	rest, plain := strings.CutPrefix(oci, "http://")
	s.PlainHTTP = plain
	repoPart, tag, fromVersion := split(rest, version)
	s.TagFromVersion = fromVersion

	base, err := registry.ParseReference(repoPart) // what remote.NewRepository does
	if err != nil {
		return s, unreadable(rest, repoPart, err)
	}
	got, err := (&remote.Repository{Reference: base}).ParseReference(tag)
	if err != nil {
		return s, badTag(tag, fromVersion, err)
	}
	s.Repository = base.Registry + "/" + base.Repository
	s.Host = base.Registry
	s.Reference = got.Reference
	_, derr := got.Digest()
	s.Digest = derr == nil
	s.Ignored = base.Reference
	return s, nil
}

// unreadable words why the operator cannot make a repository of the
// repository part (step 3).
func unreadable(rest, repoPart string, err error) *Problem {
	p := &Problem{Rule: RuleUnreadable, Source: srcCopy, Hint: FormHint}
	switch {
	case rest == "":
		p.Message = "names no repository"
	case strings.Contains(rest, "://"):
		scheme, _, _ := strings.Cut(rest, "://")
		p.Rule = RuleScheme
		p.Message = fmt.Sprintf("the operator understands no scheme but http:// (plain HTTP), so it reads %q as the repository and cannot parse it (%v)", repoPart, err)
		p.Hint = fmt.Sprintf("drop %s://: write HOST[:PORT]/REPOSITORY for HTTPS, http://HOST[:PORT]/REPOSITORY for plain HTTP", scheme)
	case strings.Contains(rest, "@"):
		p.Rule = RuleDigest
		p.Message = fmt.Sprintf("the operator splits the value at ':', the digest's included, reads %q as the repository and cannot parse it (%v)", repoPart, err)
		p.Hint = "name the release by its tag, not by digest: " + FormHint
	case !strings.Contains(repoPart, "/"):
		p.Message = fmt.Sprintf("the operator reads %q as the repository, which names no repository path below a registry host (%v)", repoPart, err)
	case repoPart != strings.ToLower(repoPart):
		p.Message = fmt.Sprintf("the operator reads %q as the repository, and repository paths are lowercase (%v)", repoPart, err)
	default:
		p.Message = fmt.Sprintf("the operator reads %q as the repository and cannot parse it (%v)", repoPart, err)
	}
	return p
}

// badTag words why the operator cannot fetch tag (step 4).
func badTag(tag string, fromVersion bool, err error) *Problem {
	p := &Problem{Rule: RuleTag, Source: srcCopy, Hint: FormHint}
	switch {
	case fromVersion && tag == "":
		p.Rule, p.Source = RuleVersion, srcVersion
		p.Message = "it names no tag and the provider has no spec.version: the operator fetches the tag spec.version names, which is empty for a provider clusterctl does not know and the upstream repository's latest release (moving, unpinned) for one it knows"
		p.Hint = "set spec.version to the release the artifact is tagged with"
	case fromVersion:
		p.Message = fmt.Sprintf("it names no tag, so the operator fetches spec.version %q as the tag, which is not a tag it can fetch (%v)", tag, err)
		p.Hint = "set spec.version to a release name that is also an OCI tag (letters, digits, '_', '.', '-'; at most 128)"
	case tag == "":
		p.Message = "it ends in ':' with no tag, and the operator fetches the empty tag"
		p.Hint = "drop the ':' (the operator then fetches the tag spec.version names) or write the tag"
	default:
		p.Message = fmt.Sprintf("the operator fetches %q, which is not a tag it can fetch (%v)", tag, err)
	}
	return p
}
