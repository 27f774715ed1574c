// Package operator describes what the cluster-api-operator does with a
// provider that fetches its components from an OCI artifact
// (spec.fetchConfig.oci), so that the builder can write artifacts every
// operator release installs and the verifier can check them:
//
//   - the provider type each release names a kind with (GenericProvider's
//     GetType(); ControlPlaneProvider changed from "controlplane" to
//     "control-plane" in operator v0.23.0, commit 985d787, July 2025);
//   - which layer titles its OCI fetch accepts as components and metadata,
//     and in which order (internal/controller/oci_source.go, unchanged in
//     this respect from v0.16.0, the first release with OCI support, to
//     v0.28.0);
//   - how it reads the spec.fetchConfig.oci string ([http://]HOST/REPO[:TAG],
//     no tag meaning spec.version).
//
// This is a description written from reading the operator's source, not a
// copy of it; the tests hold it to an independent simulation of the fetch.
package operator

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"oras.land/oras-go/v2/registry"
)

// Layer titles the operator accepts whatever the provider's type and name.
const (
	// ComponentsTitle is the components title every operator release
	// accepts for every kind: the title pinseal gives the raw YAML layer.
	ComponentsTitle = "components.yaml"
	// MetadataTitle is the metadata title every release accepts.
	MetadataTitle = "metadata.yaml"
)

// TypeName is the type one range of operator releases gives a kind.
type TypeName struct {
	// Type is what GetType() returns ("control-plane").
	Type string
	// Releases are the operator releases with OCI support that use it
	// ("v0.23.0 and later").
	Releases string
}

// Release ranges.
const (
	allReleases = "v0.16.0 and later"
	since0230   = "v0.23.0 and later"
	before0230  = "v0.16.0 to v0.22.x"
)

var typeNames = map[string][]TypeName{
	"CoreProvider":             {{"core", allReleases}},
	"BootstrapProvider":        {{"bootstrap", allReleases}},
	"ControlPlaneProvider":     {{"control-plane", since0230}, {"controlplane", before0230}},
	"InfrastructureProvider":   {{"infrastructure", allReleases}},
	"IPAMProvider":             {{"ipam", allReleases}},
	"AddonProvider":            {{"addon", allReleases}},
	"RuntimeExtensionProvider": {{"runtimeextension", allReleases}},
}

// Kinds returns the provider kinds the operator knows, sorted.
func Kinds() []string { return slices.Sorted(maps.Keys(typeNames)) }

// Types returns the types operator releases with OCI support give kind,
// the current one first; nil for a kind the operator does not know.
func Types(kind string) []TypeName {
	return append([]TypeName(nil), typeNames[kind]...)
}

// Provider is what the operator's lookup depends on: the provider's type
// (as one operator release names it), metadata.name and spec.version.
type Provider struct {
	Type    string
	Name    string
	Version string
}

// ComponentsTitles are the titles the operator accepts as components, in
// the order it prefers them.
func (p Provider) ComponentsTitles() []string {
	return []string{
		p.Type + "-" + p.Name + "-" + p.Version + "-components.yaml",
		p.Type + "-components.yaml",
		ComponentsTitle,
	}
}

// MetadataTitles are the titles the operator accepts as metadata, in the
// order it prefers them.
func (p Provider) MetadataTitles() []string {
	return []string{
		p.Type + "-" + p.Name + "-" + p.Version + "-metadata.yaml",
		MetadataTitle,
	}
}

// Found is what the lookup picks from an artifact's layers.
type Found struct {
	Components string // title of the components layer, "" when none
	Metadata   string // title of the metadata layer, "" when none
}

// Find applies the operator's lookup to the titles of an artifact's
// non-empty layers (an empty layer counts as absent, as for the operator).
// It returns the titles picked and, when either is missing, an error in
// the operator's terms naming every title it would have accepted.
func Find(titles map[string]bool, p Provider) (Found, error) {
	var f Found
	for _, t := range p.ComponentsTitles() {
		if titles[t] {
			f.Components = t
			break
		}
	}
	for _, t := range p.MetadataTitles() {
		if titles[t] {
			f.Metadata = t
			break
		}
	}
	var missing []string
	if f.Metadata == "" {
		missing = append(missing, "metadata as "+strings.Join(p.MetadataTitles(), " or "))
	}
	if f.Components == "" {
		missing = append(missing, "components as "+strings.Join(p.ComponentsTitles(), " or "))
	}
	if len(missing) > 0 {
		return f, fmt.Errorf("the operator (type %q) finds no %s", p.Type, strings.Join(missing, ", and no "))
	}
	return f, nil
}

// Source is a spec.fetchConfig.oci value read the way the operator reads
// it.
type Source struct {
	// Repository is HOST[:PORT]/PATH.
	Repository string
	// Host is HOST[:PORT] of Repository.
	Host string
	// Tag is the tag given after the repository, else spec.version.
	Tag string
	// TagFromVersion: no tag was given; Tag is spec.version.
	TagFromVersion bool
	// PlainHTTP: the value starts with http://.
	PlainHTTP bool
}

// Ref is "REPOSITORY:TAG".
func (s Source) Ref() string { return s.Repository + ":" + s.Tag }

// ParseSource reads spec.fetchConfig.oci as the operator does
// ([http://]HOST[:PORT]/REPO[:TAG]; with no tag the provider's
// spec.version is the tag). Only the "http://" prefix is understood: any
// other scheme, a digest reference, an empty host or repository is an
// error saying what to write, because the operator could not fetch it
// either.
func ParseSource(oci, specVersion string) (Source, error) {
	rest, plain := strings.CutPrefix(oci, "http://")
	s := Source{PlainHTTP: plain}
	if rest == "" {
		return s, fmt.Errorf("fetchConfig.oci %q names no repository: write [http://]HOST[:PORT]/REPO[:TAG]", oci)
	}
	if strings.Contains(rest, "://") {
		return s, fmt.Errorf("fetchConfig.oci %q has a scheme the operator does not understand: write [http://]HOST[:PORT]/REPO[:TAG]", oci)
	}
	if strings.Contains(rest, "@") {
		return s, fmt.Errorf("fetchConfig.oci %q is a digest reference, which the operator reads as a tag: write [http://]HOST[:PORT]/REPO[:TAG]", oci)
	}
	repo, tag := rest, ""
	// The operator splits at the first two colons: HOST:PORT/REPO:TAG has
	// three parts; HOST/REPO:TAG has two, the second without '/'; and
	// HOST:PORT/REPO has two whose second holds a '/' (a port, no tag).
	switch parts := strings.SplitN(rest, ":", 3); {
	case len(parts) == 2 && !strings.Contains(parts[1], "/"):
		repo, tag = parts[0], parts[1]
	case len(parts) == 3:
		repo, tag = parts[0]+":"+parts[1], parts[2]
	}
	if tag == "" {
		if strings.HasSuffix(rest, ":") {
			return s, fmt.Errorf("fetchConfig.oci %q ends in ':' with no tag: drop the ':' to use spec.version, or name the tag", oci)
		}
		tag, s.TagFromVersion = specVersion, true
	}
	host, path, _ := strings.Cut(repo, "/")
	if host == "" || path == "" {
		return s, fmt.Errorf("fetchConfig.oci %q is not HOST[:PORT]/REPO[:TAG]: it names no repository path below a registry host", oci)
	}
	if tag == "" {
		return s, fmt.Errorf("fetchConfig.oci %q names no tag and the provider has no spec.version to use instead", oci)
	}
	ref := registry.Reference{Registry: host, Repository: path, Reference: tag}
	if err := ref.ValidateRegistry(); err != nil {
		return s, fmt.Errorf("fetchConfig.oci %q: %q is not a registry HOST[:PORT]: %w", oci, host, err)
	}
	if err := ref.ValidateRepository(); err != nil {
		return s, fmt.Errorf("fetchConfig.oci %q: %q is not a repository path (lowercase letters, digits, '.', '_', '-', '/'): %w", oci, path, err)
	}
	if err := ref.ValidateReferenceAsTag(); err != nil {
		what := "the tag"
		if s.TagFromVersion {
			what = "spec.version, the tag when none is given,"
		}
		return s, fmt.Errorf("fetchConfig.oci %q: %s %q is not an OCI tag: %w", oci, what, tag, err)
	}
	s.Repository, s.Host, s.Tag = repo, host, tag
	return s, nil
}
