// Package report is the result of a verification: findings, the packages
// seen and a summary. Its JSON form is the stable contract described by
// api/report.schema.json; the CLI and the HTTP service emit the same.
package report

import (
	"slices"
	"strings"
)

// SchemaVersion identifies the JSON report format.
const SchemaVersion = "pinseal.report/v1"

// Severity of a finding after policy.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Off     Severity = "off" // never emitted in a report
)

// Report is the outcome of one verification run.
type Report struct {
	SchemaVersion string           `json:"schemaVersion"`
	Tool          Tool             `json:"tool"`
	Root          string           `json:"root,omitempty"` // what was verified: a directory or an artifact reference
	Findings      []Finding        `json:"findings"`
	Packages      []PackageSummary `json:"packages"`
	// Skipped are the charts under the root that are not provider
	// packages (or were excluded), with why. Never findings.
	Skipped []Skipped `json:"skipped,omitempty"`
	Summary Summary   `json:"summary"`
}

// Skipped is a chart that was not checked, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Tool names the program that made the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Finding is one thing that does not hold.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Package  string   `json:"package"`            // slash path relative to the root
	Provider string   `json:"provider,omitempty"` // Kind/name
	File     string   `json:"file,omitempty"`     // slash path relative to the root
	Line     int      `json:"line,omitempty"`
	Message  string   `json:"message"`
	Hint     string   `json:"hint,omitempty"`   // what to do about it
	Detail   string   `json:"detail,omitempty"` // e.g. a diff excerpt
	Waiver   *Waiver  `json:"waiver,omitempty"` // set when a waiver downgraded it
	// Settings are the verifier settings the hint asks to change, if
	// any. The hint names them in words only; the interface that shows
	// the report adds its own name for them (NameSettings).
	Settings []Setting `json:"settings,omitempty"`
}

// Setting is a setting of the verifier that a finding's hint may ask to
// change. Findings are the same in every interface, but each sets these
// its own way (the CLI with a flag, the service in its config), so
// libraries name the setting and the interface names how to set it.
type Setting string

// The settings a hint may name.
const (
	// SettingPlainHTTP: reach registries over plain HTTP.
	SettingPlainHTTP Setting = "plain-http"
	// SettingAllowRegistry: the registries providers' spec.fetchConfig.oci
	// may be read from.
	SettingAllowRegistry Setting = "allow-registry"
	// SettingTrustedKeys: the public keys signatures and provenance are
	// verified with.
	SettingTrustedKeys Setting = "trusted-keys"
	// SettingInflateLimit: how far a blob is inflated before it counts as
	// a gzip bomb.
	SettingInflateLimit Setting = "inflate-limit"
	// SettingRenderTimeout, SettingRenderMaxMemory, SettingRenderMaxOutput:
	// the bounds of rendering one chart (or parsing one manifest file).
	SettingRenderTimeout   Setting = "render-timeout"
	SettingRenderMaxMemory Setting = "render-max-memory"
	SettingRenderMaxOutput Setting = "render-max-output"
)

// Settings are all the settings a hint may name, in a stable order.
var Settings = []Setting{SettingPlainHTTP, SettingAllowRegistry, SettingTrustedKeys, SettingInflateLimit,
	SettingRenderTimeout, SettingRenderMaxMemory, SettingRenderMaxOutput}

// NameSettings appends to the hint of each finding that names settings
// how the calling interface sets them: " (NAME, NAME)" with names[s] for
// each of the finding's settings that names has (an interface without
// the setting leaves it out). Naming twice with the same names changes
// nothing more.
func (r *Report) NameSettings(names map[Setting]string) {
	for i := range r.Findings {
		f := &r.Findings[i]
		var ns []string
		for _, s := range f.Settings {
			if n := names[s]; n != "" && !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
		if len(ns) == 0 {
			continue
		}
		suffix := " (" + strings.Join(ns, ", ") + ")"
		if !strings.HasSuffix(f.Hint, suffix) {
			f.Hint += suffix
		}
	}
}

// Waiver records why a finding does not count.
type Waiver struct {
	Reason  string `json:"reason"`
	Expires string `json:"expires"` // YYYY-MM-DD
}

// PackageSummary is one package seen.
type PackageSummary struct {
	Path      string            `json:"path"`
	Namespace string            `json:"namespace,omitempty"`
	Providers []ProviderSummary `json:"providers"`
	// ConfigMaps are the package's ConfigMaps that hold provider
	// components, selected by a provider or not (air-gap charts).
	ConfigMaps []ConfigMapSummary `json:"configMaps,omitempty"`
}

// ConfigMapSummary is one provider components ConfigMap seen.
type ConfigMapSummary struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	File      string `json:"file,omitempty"` // slash path relative to the root
}

// ProviderSummary is one provider seen.
type ProviderSummary struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Object is the object as written when it is not an operator
	// provider object: "CAPIProvider/<metadata.name>" for Rancher Turtles.
	Object string `json:"object,omitempty"`
	// Namespace is the namespace the provider is installed in; File the
	// file that holds it (slash path relative to the root): many
	// providers of one package tell apart by them.
	Namespace string `json:"namespace,omitempty"`
	File      string `json:"file,omitempty"`
	Version   string `json:"version,omitempty"`   // spec.version
	ConfigMap string `json:"configMap,omitempty"` // the ConfigMap its selector picks
	Artifact  string `json:"artifact,omitempty"`  // registry reference with digest, when checked
	// Source is where the cluster-api-operator takes the provider's
	// components from, and what holds those bytes; nil when unknown (a
	// report about an artifact rather than a tree).
	Source *Source `json:"source,omitempty"`
}

// Source kinds: where the operator takes a provider's components from.
const (
	// SourceVendored: ConfigMaps of the tree (spec.fetchConfig.selector).
	SourceVendored = "vendored"
	// SourceOCI: an OCI artifact (spec.fetchConfig.oci).
	SourceOCI = "oci"
	// SourceURL: a release the operator downloads from
	// spec.fetchConfig.url.
	SourceURL = "url"
	// SourceDefault: no spec.fetchConfig; a release the operator
	// downloads from the repository clusterctl's built-in provider list
	// names.
	SourceDefault = "default"
)

// Source says where a provider's components come from.
type Source struct {
	Kind string `json:"kind"` // one of the Source* kinds
	// Pinned: the bytes the cluster gets are held: vendored files under
	// SHA-256 pins, or an OCI artifact read and checked in this run.
	Pinned bool `json:"pinned"`
	// Registry is HOST[:PORT] of an OCI source.
	Registry string `json:"registry,omitempty"`
	// Ref is the artifact an OCI source fetches (REPOSITORY:TAG), or the
	// repository URL a url or default source resolves to.
	Ref string `json:"ref,omitempty"`
	// Release is the release a url or default source downloads: ""
	// when the operator takes the latest one at install time.
	Release string `json:"release,omitempty"`
	// URLs are the files a url or default source downloads at install
	// time (components, then metadata.yaml), when they can be named.
	URLs []string `json:"urls,omitempty"`
	// Status says, in words, what holds the bytes or why nothing does.
	Status string `json:"status"`
}

// SourceCounts counts a report's providers by source.
type SourceCounts struct {
	// Pinned providers install bytes the tree pins or the run verified.
	Pinned int `json:"pinned"`
	// Unpinned providers are vendored in the tree with no SHA-256 pin.
	Unpinned int `json:"unpinned"`
	// Fetched providers are downloaded at install time, with nothing
	// holding their bytes.
	Fetched  int `json:"fetched"`
	Vendored int `json:"vendored"`
	OCI      int `json:"oci"`
	URL      int `json:"url"`
	Default  int `json:"default"`
}

// Summary counts.
type Summary struct {
	Packages  int  `json:"packages"`
	Providers int  `json:"providers"`
	Errors    int  `json:"errors"`
	Warnings  int  `json:"warnings"`
	Waived    int  `json:"waived"`
	Skipped   int  `json:"skipped,omitempty"` // charts not checked (see Report.Skipped)
	Passed    bool `json:"passed"`            // no error findings
	// Sources counts the providers by source; nil when no provider has
	// one.
	Sources *SourceCounts `json:"sources,omitempty"`
}

// Tally recomputes the summary from the findings and packages.
func (r *Report) Tally() {
	s := Summary{Packages: len(r.Packages), Skipped: len(r.Skipped)}
	for _, p := range r.Packages {
		s.Providers += len(p.Providers)
		for _, pr := range p.Providers {
			if pr.Source != nil {
				if s.Sources == nil {
					s.Sources = &SourceCounts{}
				}
				s.Sources.add(pr.Source)
			}
		}
	}
	for _, f := range r.Findings {
		switch {
		case f.Waiver != nil:
			s.Waived++
		case f.Severity == Error:
			s.Errors++
		case f.Severity == Warning:
			s.Warnings++
		}
	}
	s.Passed = s.Errors == 0
	r.Summary = s
}

func (c *SourceCounts) add(src *Source) {
	switch src.Kind {
	case SourceVendored:
		c.Vendored++
	case SourceOCI:
		c.OCI++
	case SourceURL:
		c.URL++
	case SourceDefault:
		c.Default++
	}
	switch {
	case src.Pinned:
		c.Pinned++
	case src.Kind == SourceVendored:
		c.Unpinned++
	default:
		c.Fetched++
	}
}

// ExitCode is 1 when the report has error findings, else 0.
func (r *Report) ExitCode() int {
	if r.Summary.Errors > 0 {
		return 1
	}
	return 0
}
