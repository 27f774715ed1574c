// Package operator describes how the cluster-api-operator installs a
// provider from an OCI artifact.
//
// It describes what the cluster-api-operator does with a
// provider that fetches its components from an OCI artifact
// (spec.fetchConfig.oci), so that the builder can write artifacts every
// operator release installs and the verifier can check them:
//
//   - the provider type each release names a kind with (GenericProvider's
//     GetType(); ControlPlaneProvider changed from "controlplane" to
//     "control-plane" in operator v0.23.0, July 2025);
//   - which layer titles its OCI fetch accepts as components and metadata,
//     and in which order (internal/controller/oci_source.go, unchanged in
//     this respect from v0.16.0, the first release with OCI support, to
//     v0.28.0);
//   - how it reads the spec.fetchConfig.oci string ([http://]HOST/REPO[:TAG],
//     no tag meaning spec.version), and what it then fetches, under which
//     release name it stores it, and what the API server and its preflight
//     checks refuse (source.go, rules.go).
//
// This is a description written from reading the operator's source, not a
// copy of it; the tests hold it to an independent simulation of the fetch.
package operator

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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
