// Package policy reads verification policies and applies them to findings.
//
// It reads verification policies (policies/default.yaml, or a
// --policy FILE) strictly, and applies them to findings: severity per check,
// waivers with an expiry date (an expired waiver is itself an error), and,
// for the registry checks, the trusted keys and allowed builder ids.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/policies"
)

// Header values of a policy document.
const (
	APIVersion = "pinseal/v1"
	Kind       = "Policy"
	// DateLayout is the layout of a waiver's expiry date.
	DateLayout = "2006-01-02"
)

// DefaultSource names the embedded default policy in messages.
const DefaultSource = "policies/default.yaml (built in)"

// Policy is a parsed, validated policy.
type Policy struct {
	APIVersion string                     `json:"apiVersion" yaml:"apiVersion"`
	Kind       string                     `json:"kind" yaml:"kind"`
	Checks     map[string]report.Severity `json:"checks,omitempty" yaml:"checks"`
	Waivers    []Waiver                   `json:"waivers,omitempty" yaml:"waivers"`
	// Keys are trusted signing keys: PEM file paths (relative to the policy
	// file) or inline PEM. Read them with KeyPEMs.
	Keys []string `json:"keys,omitempty" yaml:"keys"`
	// Builders are the allowed SLSA builder ids.
	Builders []string `json:"builders,omitempty" yaml:"builders"`
	// Identities are trusted keyless signers (Fulcio certificates): OIDC
	// issuer and subject (exact) or subjectRegExp.
	Identities []Identity `json:"identities,omitempty" yaml:"identities"`
	// TrustedRoot is Sigstore's trusted_root.json (Fulcio CAs, timestamp
	// authorities, transparency logs) that certifies keyless signatures:
	// a file path relative to the policy file. Empty: the public-good root
	// cached by cosign, when it is there; nothing is fetched.
	TrustedRoot string `json:"trustedRoot,omitempty" yaml:"trustedRoot"`
	// TLog is required, optional (the default when empty) or off:
	// whether a transparency-log entry must be there and verify.
	TLog string `json:"tlog,omitempty" yaml:"tlog"`
	// MovingTags are image tags the image-ref check reads as moving, on top
	// of check.MovingTags (latest, main, master) and no tag at all.
	MovingTags []string `json:"movingTags,omitempty" yaml:"movingTags"`
	// ExternalKinds are kinds (GROUP/VERSION/KIND) the components-apply
	// check takes as served by CRDs the cluster installs beside the
	// providers, on top of check.ExternalKinds (cert-manager's).
	ExternalKinds []string `json:"externalKinds,omitempty" yaml:"externalKinds"`
	// Exclude are path.Match patterns of directories under ROOT that
	// `verifier check` does not enter (as --exclude GLOB).
	Exclude []string `json:"exclude,omitempty" yaml:"exclude"`
	// Fixtures are path.Match patterns of directories under ROOT that hold
	// golden renders or test fixtures: checked, but their providers are
	// not compared with the rest of the tree (provider-duplicate).
	Fixtures []string `json:"fixtures,omitempty" yaml:"fixtures"`
	// Values give charts the values they need to render (helm template -f).
	Values []Values `json:"values,omitempty" yaml:"values"`
	// Admission is what the admission webhook of `verifier serve` trusts
	// besides the keys and identities above; nil: it trusts nothing.
	Admission *Admission `json:"admission,omitempty" yaml:"admission"`

	// Source is where the policy was read ("" or DefaultSource for the
	// built-in one); relative key paths resolve against its directory.
	Source string `json:"-" yaml:"-"`
}

// Values are values files for the charts at a package path, applied in
// order as `helm template -f FILE` applies them.
type Values struct {
	Package string   `json:"package" yaml:"package"` // path relative to ROOT, or a path.Match pattern
	Files   []string `json:"files" yaml:"files"`     // relative to the policy file's directory, or absolute
}

// ValuesFiles returns Values with every file resolved against the policy
// file's directory.
func (p *Policy) ValuesFiles() []Values {
	out := make([]Values, 0, len(p.Values))
	for _, v := range p.Values {
		r := Values{Package: v.Package}
		for _, f := range v.Files {
			if !filepath.IsAbs(f) && p.Source != "" && p.Source != DefaultSource {
				f = filepath.Join(filepath.Dir(p.Source), f)
			}
			r.Files = append(r.Files, f)
		}
		out = append(out, r)
	}
	return out
}

// Waiver accepts one check's findings on a package until a date.
type Waiver struct {
	Package  string `json:"package" yaml:"package"`             // path relative to ROOT, or a path.Match pattern
	Check    string `json:"check" yaml:"check"`                 // catalog ID
	Provider string `json:"provider,omitempty" yaml:"provider"` // Kind/name; empty: every provider of the package
	Reason   string `json:"reason" yaml:"reason"`
	Expires  string `json:"expires" yaml:"expires"` // YYYY-MM-DD: the last day the waiver holds (UTC)
}

// Identity is a trusted keyless signer: the certificate's OIDC issuer and
// its subject (SAN), exactly or by an RE2 regular expression (unanchored,
// as cosign's --certificate-identity-regexp: anchor it with ^...$).
type Identity struct {
	Issuer        string `json:"issuer" yaml:"issuer"`
	Subject       string `json:"subject,omitempty" yaml:"subject"`
	SubjectRegExp string `json:"subjectRegExp,omitempty" yaml:"subjectRegExp"`
}

// Admission is the admission webhook's part of a policy: where the
// releases it can vouch for are published, and the install-time downloads
// whose bytes it pins.
type Admission struct {
	// Registries are repository prefixes (HOST[:PORT]/PATH): a release
	// <type>-<name>:<release> is vouched for when PREFIX/<type>-<name>:<release>
	// is signed by a trusted key or identity and its provenance verifies;
	// a provider's spec.fetchConfig.oci must point within one of them.
	Registries []string `json:"registries,omitempty" yaml:"registries"`
	// Pinned are providers the operator downloads at install time
	// (spec.fetchConfig.url or clusterctl's built-in list) that are
	// admitted because their bytes are pinned here.
	Pinned []PinnedDownload `json:"pinned,omitempty" yaml:"pinned"`
	// GitSources are git sources of `verifier serve` (its sources: with
	// git:) whose trees vouch for a release at the commits listed: a
	// components ConfigMap is admitted when the tree at one of them renders
	// the ConfigMap of the same provider and release with the same
	// components and metadata.
	GitSources []GitVoucher `json:"gitSources,omitempty" yaml:"gitSources"`
}

// GitVoucher trusts a git source's tree at pinned commits. Commits are
// full SHA-1 hashes, never a branch: a branch moves whenever anyone with
// push access pushes, and the verdict would follow it.
type GitVoucher struct {
	// Source is the name of a sources: entry with git: in the service
	// config.
	Source string `json:"source" yaml:"source"`
	// Commits are the trusted commits (40 lowercase hex).
	Commits []string `json:"commits" yaml:"commits"`
}

// PinnedDownload pins the bytes of one provider release the operator
// downloads at install time.
type PinnedDownload struct {
	Kind    string `json:"kind" yaml:"kind"`       // CoreProvider, ...
	Name    string `json:"name" yaml:"name"`       // metadata.name
	Version string `json:"version" yaml:"version"` // spec.version
	// URL is spec.fetchConfig.url; "" for a provider clusterctl's
	// built-in list names.
	URL string `json:"url,omitempty" yaml:"url"`
	// Components and Metadata are the SHA-256 (64 hex) of the files the
	// operator downloads.
	Components string `json:"components" yaml:"components"`
	Metadata   string `json:"metadata" yaml:"metadata"`
}

// ExpiresAt is the instant the waiver stops holding: the end of its expiry
// day, UTC.
func (w Waiver) ExpiresAt() time.Time {
	d, err := time.Parse(DateLayout, w.Expires)
	if err != nil {
		return time.Time{}
	}
	return d.Add(24 * time.Hour)
}

// Expired reports whether the waiver no longer holds at now.
func (w Waiver) Expired(now time.Time) bool { return !now.Before(w.ExpiresAt()) }

// Covers reports whether the waiver applies to f.
func (w Waiver) Covers(f report.Finding) bool {
	if w.Check != f.Check {
		return false
	}
	if w.Provider != "" && w.Provider != f.Provider {
		return false
	}
	if w.Package == f.Package {
		return true
	}
	ok, _ := path.Match(w.Package, f.Package)
	return ok
}

// Default returns the built-in policy (policies/default.yaml).
func Default() *Policy {
	p, err := Parse(policies.Default, DefaultSource)
	if err != nil {
		panic(fmt.Sprintf("built-in policy is invalid: %v", err)) // caught by tests
	}
	return p
}

// Load reads and validates a policy file.
func Load(file string) (*Policy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w (want a policy YAML file; start from policies/default.yaml)", err)
	}
	return Parse(data, file)
}

// Parse reads a policy document strictly (unknown or duplicate fields are
// errors) and validates it. source names it in errors. It is read as YAML
// 1.2, so `off` is the string off, not false.
func Parse(data []byte, source string) (*Policy, error) {
	empty := fmt.Errorf("policy %s: empty document: start with `apiVersion: %s` and `kind: %s`", source, APIVersion, Kind)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, empty
	}
	var p Policy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, empty
		}
		return nil, fmt.Errorf("policy %s: %w (fields: apiVersion, kind, checks, waivers, keys, builders, identities, trustedRoot, tlog, movingTags, externalKinds, exclude, fixtures, values, admission; waiver fields: package, check, provider, reason, expires; identity fields: issuer, subject, subjectRegExp; values fields: package, files; admission fields: registries, pinned)", source, err)
	}
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("policy %s: more than one YAML document: keep one policy per file", source)
	}
	p.Source = source
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// tagRE is an image tag as the OCI distribution spec allows it. Like the
// package's other patterns it is compiled on first use, not at init:
// every process start (each verifier check, each render child) would pay
// for it, and its counted repetition compiles to some 100 KB.
var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`) })

var providerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]+/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`) })

// Validate checks the policy and returns every problem, each saying where
// and what to do.
func (p *Policy) Validate() error {
	v := &policyValidator{source: p.Source}
	if p.APIVersion != APIVersion {
		v.bad("apiVersion", "%q is not supported: use %q", p.APIVersion, APIVersion)
	}
	if p.Kind != Kind {
		v.bad("kind", "%q: use %q", p.Kind, Kind)
	}
	known := settable()
	v.checks(p, known)
	v.waivers(p, known)
	v.lists(p)
	v.identities(p)
	v.patterns(p)
	v.admission(p)
	return errors.Join(v.errs...)
}

// policyValidator collects a policy's problems, each naming the file and
// the field.
type policyValidator struct {
	source string
	errs   []error
}

func (v *policyValidator) bad(field, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("policy %s: %s: %s", v.source, field, fmt.Sprintf(format, args...)))
}

// checks validates the severities set under checks:.
func (v *policyValidator) checks(p *Policy, known []string) {
	for _, id := range slices.Sorted(maps.Keys(p.Checks)) {
		sev := p.Checks[id]
		if !slices.Contains(known, id) {
			if id == check.WaiverExpired {
				v.bad("checks."+id, "an expired waiver is always an error and cannot be changed")
			} else {
				v.bad("checks."+id, "unknown check: use one of %s", strings.Join(known, ", "))
			}
			continue
		}
		switch sev {
		case report.Off:
			if id == model.CheckPackageLoad {
				v.bad("checks."+id, "cannot be off: a package that does not load is checked by nothing else; use error or warning")
			}
		case report.Error, report.Warning:
		default:
			v.bad("checks."+id, "severity %q: use error, warning or off", sev)
		}
	}
}

func (v *policyValidator) waivers(p *Policy, known []string) {
	for i, w := range p.Waivers {
		field := fmt.Sprintf("waivers[%d]", i)
		if w.Package == "" || strings.HasPrefix(w.Package, "/") {
			v.bad(field+".package", "%q: name the package path relative to ROOT", w.Package)
		} else if _, err := path.Match(w.Package, ""); err != nil {
			v.bad(field+".package", "%q is not a valid path pattern: %v", w.Package, err)
		}
		if !slices.Contains(known, w.Check) {
			v.bad(field+".check", "%q is not a check that can be waived: use one of %s", w.Check, strings.Join(known, ", "))
		}
		if w.Provider != "" && !providerRE().MatchString(w.Provider) {
			v.bad(field+".provider", "%q: use Kind/name, e.g. BootstrapProvider/talos", w.Provider)
		}
		if strings.TrimSpace(w.Reason) == "" {
			v.bad(field+".reason", "missing: say why the finding is accepted")
		}
		if _, err := time.Parse(DateLayout, w.Expires); err != nil {
			v.bad(field+".expires", "%q is not a date: use YYYY-MM-DD (the last day the waiver holds)", w.Expires)
		}
	}
}

// lists validates keys, movingTags, externalKinds and builders.
func (v *policyValidator) lists(p *Policy) {
	for i, k := range p.Keys {
		if strings.TrimSpace(k) == "" {
			v.bad(fmt.Sprintf("keys[%d]", i), "empty: give a PEM file path or inline PEM")
		}
	}
	for i, tag := range p.MovingTags {
		if !tagRE().MatchString(tag) {
			v.bad(fmt.Sprintf("movingTags[%d]", i), "%q is not an image tag: use letters, digits, _ . - (at most 128, not starting with . or -), e.g. nightly", tag)
		}
	}
	for i, k := range p.ExternalKinds {
		if parts := strings.Split(k, "/"); len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			v.bad(fmt.Sprintf("externalKinds[%d]", i), "%q is not GROUP/VERSION/KIND: e.g. monitoring.coreos.com/v1/ServiceMonitor", k)
		}
	}
	for i, b := range p.Builders {
		if strings.TrimSpace(b) == "" {
			v.bad(fmt.Sprintf("builders[%d]", i), "empty: give a builder id URI")
		}
	}
}

// identities validates the signer identities and the tlog setting.
func (v *policyValidator) identities(p *Policy) {
	for i, id := range p.Identities {
		field := fmt.Sprintf("identities[%d]", i)
		if strings.TrimSpace(id.Issuer) == "" {
			v.bad(field+".issuer", "empty: name the OIDC issuer, e.g. https://token.actions.githubusercontent.com")
		}
		switch {
		case id.Subject == "" && id.SubjectRegExp == "":
			v.bad(field, "give subject or subjectRegExp (the certificate's identity, e.g. https://github.com/ORG/REPO/.github/workflows/release.yml@refs/heads/main)")
		case id.Subject != "" && id.SubjectRegExp != "":
			v.bad(field, "give subject or subjectRegExp, not both")
		case id.SubjectRegExp != "":
			if _, err := regexp.Compile(id.SubjectRegExp); err != nil {
				v.bad(field+".subjectRegExp", "%v", err)
			}
		}
	}
	switch p.TLog {
	case "", "required", "optional", "off":
	default:
		v.bad("tlog", "%q: use required, optional (the default) or off", p.TLog)
	}
}

// patterns validates exclude and values, which name packages by path
// pattern.
func (v *policyValidator) patterns(p *Policy) {
	for i, g := range p.Exclude {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" || strings.HasPrefix(g, "/") {
			v.bad(fmt.Sprintf("exclude[%d]", i), "%q is not a path pattern relative to ROOT (e.g. packages/apps/*)", g)
		}
	}
	for i, g := range p.Fixtures {
		if _, err := path.Match(g, ""); err != nil || strings.TrimSpace(g) == "" || strings.HasPrefix(g, "/") {
			v.bad(fmt.Sprintf("fixtures[%d]", i), "%q is not a path pattern relative to ROOT (e.g. tests/golden/*)", g)
		}
	}
	for i, val := range p.Values {
		field := fmt.Sprintf("values[%d]", i)
		if _, err := path.Match(val.Package, ""); err != nil || val.Package == "" || strings.HasPrefix(val.Package, "/") {
			v.bad(field+".package", "%q: name the chart path relative to ROOT, or a path pattern", val.Package)
		}
		if len(val.Files) == 0 {
			v.bad(field+".files", "missing: list the values files, as for helm template -f")
		}
		for j, f := range val.Files {
			if strings.TrimSpace(f) == "" {
				v.bad(fmt.Sprintf("%s.files[%d]", field, j), "empty: give a values file path (relative to the policy file)")
			}
		}
	}
}

// settable lists the check IDs a policy may set or waive.
func settable() []string {
	var ids []string
	for _, id := range check.IDs() {
		if id != check.WaiverExpired {
			ids = append(ids, id)
		}
	}
	return ids
}

// Severity is the severity the policy gives a check: its own setting, else
// the catalog default, else error (unknown IDs, e.g. from extra checks).
func (p *Policy) Severity(id string) report.Severity {
	if id == check.WaiverExpired {
		return report.Error
	}
	if s, ok := p.Checks[id]; ok {
		return s
	}
	if c, ok := check.Lookup(id); ok && c.Severity != "" {
		return c.Severity
	}
	return report.Error
}

// Enabled reports whether a check runs at all.
func (p *Policy) Enabled(id string) bool { return p.Severity(id) != report.Off }

// Apply sets each finding's severity, drops findings of checks that are off,
// marks findings covered by a live waiver, and adds one error finding per
// expired waiver (the findings it covered count again). now decides expiry.
func (p *Policy) Apply(findings []report.Finding, now time.Time) []report.Finding {
	out := make([]report.Finding, 0, len(findings))
	for _, f := range findings {
		sev := p.Severity(f.Check)
		if sev == report.Off {
			continue
		}
		// A check may mark a finding as at most a warning (something it
		// cannot judge, e.g. a computed version): the policy does not raise it.
		if f.Severity == report.Warning && sev == report.Error {
			sev = report.Warning
		}
		f.Severity = sev
		f.Waiver = nil
		for _, w := range p.Waivers {
			if w.Covers(f) && !w.Expired(now) {
				f.Waiver = &report.Waiver{Reason: w.Reason, Expires: w.Expires}
				break
			}
		}
		out = append(out, f)
	}
	for _, w := range p.Waivers {
		if !w.Expired(now) {
			continue
		}
		what := w.Check
		if w.Provider != "" {
			what += " of " + w.Provider
		}
		out = append(out, report.Finding{
			Check:    check.WaiverExpired,
			Severity: report.Error,
			Package:  w.Package,
			Provider: w.Provider,
			Message:  fmt.Sprintf("the waiver for %s on %s expired on %s (reason: %s)", what, w.Package, w.Expires, w.Reason),
			Hint:     fmt.Sprintf("fix the finding and remove the waiver, or renew it with a new expiry date in %s", p.sourceName()),
		})
	}
	return out
}

func (p *Policy) sourceName() string {
	if p.Source == "" {
		return DefaultSource
	}
	return p.Source
}

// KeyPEMs returns the trusted keys as PEM bytes: inline entries as they
// are, file entries read (relative paths resolve against the policy file's
// directory).
func (p *Policy) KeyPEMs() ([][]byte, error) {
	var out [][]byte
	for i, k := range p.Keys {
		if strings.Contains(k, "-----BEGIN ") {
			out = append(out, []byte(k))
			continue
		}
		file := k
		if !filepath.IsAbs(file) && p.Source != "" && p.Source != DefaultSource {
			file = filepath.Join(filepath.Dir(p.Source), file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("policy %s: keys[%d]: %w", p.sourceName(), i, err)
		}
		out = append(out, data)
	}
	return out, nil
}

// TrustedRootPath is the trustedRoot file, resolved against the policy
// file's directory; "" when the policy names none.
func (p *Policy) TrustedRootPath() string {
	if p.TrustedRoot == "" {
		return ""
	}
	if filepath.IsAbs(p.TrustedRoot) || p.Source == "" || p.Source == DefaultSource {
		return p.TrustedRoot
	}
	return filepath.Join(filepath.Dir(p.Source), p.TrustedRoot)
}

var (
	hex64RE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{64}$`) })
	admissionRef = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$`)
	})
	semverish = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$`) })
)

// admission validates the admission section.
func (v *policyValidator) admission(p *Policy) {
	a := p.Admission
	if a == nil {
		return
	}
	for i, r := range a.Registries {
		if !admissionRef().MatchString(r) {
			v.bad(fmt.Sprintf("admission.registries[%d]", i), "%q: want a repository prefix HOST[:PORT]/PATH, lowercase, no tag (e.g. registry.example.com/capi)", r)
		}
	}
	for i, d := range a.Pinned {
		field := fmt.Sprintf("admission.pinned[%d]", i)
		if d.Kind == "" || d.Name == "" {
			v.bad(field, "give kind (e.g. InfrastructureProvider) and name (the provider's metadata.name)")
		}
		if !semverish().MatchString(d.Version) {
			v.bad(field+".version", "%q: want the provider's spec.version, a semantic version such as v0.7.7", d.Version)
		}
		if !hex64RE().MatchString(d.Components) || !hex64RE().MatchString(d.Metadata) {
			v.bad(field, "components and metadata: want the SHA-256 (64 lowercase hex) of the files the operator downloads (sha256sum FILE)")
		}
	}
	for i, g := range a.GitSources {
		field := fmt.Sprintf("admission.gitSources[%d]", i)
		if g.Source == "" {
			v.bad(field+".source", "give the name of a git source of the service config (sources: NAME: git:)")
		}
		if len(g.Commits) == 0 {
			v.bad(field+".commits", "list the trusted commits (git rev-parse HEAD of a reviewed commit): a git source trusted at no commit vouches for nothing")
		}
		for j, c := range g.Commits {
			if !commitRE().MatchString(c) {
				v.bad(fmt.Sprintf("%s.commits[%d]", field, j), "%q: want a full commit hash (40 lowercase hex, git rev-parse COMMIT), not a branch or tag: a ref moves", c)
			}
		}
	}
}

var commitRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}$`) })
