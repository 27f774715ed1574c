package model

import (
	"slices"

	"github.com/pinseal/pinseal/pkg/pin"
)

// How a file's role in a package layout was decided (ReleaseFiles.*By).
const (
	MatchedByBytes   = "bytes"   // the vendored file holds exactly the ConfigMap's bytes
	MatchedByPin     = "pin"     // the pin names it
	MatchedByContent = "content" // the vendored file is what the blob inflates to
	MatchedByName    = "name"    // file names point to it (unpinned packages only)
)

// ReleaseFiles are the vendored files of one provider release, as slash
// paths relative to the package directory; "" when the package has none.
type ReleaseFiles struct {
	Components   string
	ComponentsBy string
	Metadata     string
	MetadataBy   string
	Blob         string
	BlobBy       string
}

// LayoutRelease is one provider release of a package: a ConfigMap holding
// components, a pin entry, or both.
type LayoutRelease struct {
	// Name is the release: the ConfigMap's name, else the pin's release.
	Name string
	// ConfigMap is the rendered components ConfigMap; nil when only a pin
	// names the release.
	ConfigMap *ConfigMap
	// Providers are the package's providers whose selector picks the
	// ConfigMap (none for air-gap charts, whose providers live elsewhere).
	Providers []*Provider
	// Pin is the package's pin of the release; nil when it has none.
	Pin *pin.Provider
	ReleaseFiles
	// PinnedMetadata is the vendored metadata file (ReleaseFiles.Metadata)
	// parsed, for a pinned release no ConfigMap holds (a provider
	// installed from spec.fetchConfig.oci, vendored with
	// `builder vendor --to-oci`); nil otherwise.
	PinnedMetadata *Metadata
}

// Layout is every release of one package and the vendored files each is
// made of. internal/layout decides it; the loader stores it on Package.Layout,
// where every other user reads it.
type Layout struct {
	Releases []*LayoutRelease
}

// ConfigMap returns the release of a ConfigMap of the package, nil if none.
func (l *Layout) ConfigMap(cm *ConfigMap) *LayoutRelease {
	if l == nil || cm == nil {
		return nil
	}
	for _, r := range l.Releases {
		if r.ConfigMap == cm {
			return r
		}
	}
	return nil
}

// BlobFile returns the vendored file holding exactly the bytes of cm's
// components, "" if none.
func (l *Layout) BlobFile(cm *ConfigMap) string {
	if r := l.decoded(cm); r != nil && r.BlobBy == MatchedByBytes {
		return r.Blob
	}
	return ""
}

// ComponentsYAML returns the vendored YAML cm's components should equal and
// how it was matched (MatchedByPin, MatchedByContent, MatchedByName); ""
// when none matched or the components could not be decoded, since then no
// byte of them can be compared with it.
func (l *Layout) ComponentsYAML(cm *ConfigMap) (file, by string) {
	if r := l.decoded(cm); r != nil {
		return r.Components, r.ComponentsBy
	}
	return "", ""
}

// decoded returns the release of a ConfigMap whose components decoded, nil
// if none.
func (l *Layout) decoded(cm *ConfigMap) *LayoutRelease {
	if cm == nil || cm.Components == nil || cm.Components.DecodeErr != nil {
		return nil
	}
	return l.ConfigMap(cm)
}

// Provider returns the release a provider of the package installs: the
// ConfigMap named spec.version among those it selects, else the pin of its
// kind and name, else the pin of its spec.version; nil if none.
func (l *Layout) Provider(p *Provider) *LayoutRelease {
	if l == nil || p == nil {
		return nil
	}
	for _, r := range l.Releases {
		if r.ConfigMap != nil && r.Name == p.Version && slices.Contains(r.Providers, p) {
			return r
		}
	}
	for _, r := range l.Releases {
		if r.Pin != nil && r.Pin.Kind == p.Kind && r.Pin.Name == p.Name && r.Pin.Kind != "" {
			return r
		}
	}
	for _, r := range l.Releases {
		if r.Pin != nil && r.Pin.Release != "" && r.Pin.Release == p.Version {
			return r
		}
	}
	return nil
}

// Pin returns the release of the pin entry of kind and name, nil if none.
func (l *Layout) Pin(kind, name string) *LayoutRelease {
	if l == nil {
		return nil
	}
	for _, r := range l.Releases {
		if r.Pin != nil && r.Pin.Kind == kind && r.Pin.Name == name {
			return r
		}
	}
	return nil
}
