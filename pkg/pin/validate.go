package pin

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Kinds are the cluster-api-operator provider kinds a pin may name, in the
// order api/pin.schema.json lists them.
var Kinds = []string{
	"CoreProvider",
	"BootstrapProvider",
	"ControlPlaneProvider",
	"InfrastructureProvider",
	"IPAMProvider",
	"AddonProvider",
	"RuntimeExtensionProvider",
}

// The patterns below are shared, character for character, with
// api/pin.schema.json (schema_test.go keeps them equal). They use only the
// regexp syntax common to Go's RE2 and ECMA-262.
const (
	// NamePattern is a DNS-1123 label (at most 63 characters, see NameMaxLength).
	NamePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// VersionPattern is vMAJOR.MINOR.PATCH with an optional -prerelease.
	VersionPattern = `^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`
	// ReleasePattern is a version whose suffix keeps it a valid ConfigMap
	// name (DNS-1123 subdomain: lowercase, each dot-separated part starts and
	// ends with a letter or digit), e.g. v0.19.0-cozystack.0.
	ReleasePattern = `^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9a-z]([-0-9a-z]*[0-9a-z])?(\.[0-9a-z]([-0-9a-z]*[0-9a-z])?)*)?$`
	// SHA256Pattern is a lowercase hex SHA-256.
	SHA256Pattern = `^[0-9a-f]{64}$`
	// URLPattern admits http://host…, https://host… (no user info), and
	// file:///abs, file:/abs or file:rel (no host).
	URLPattern = `^(https?://[^ \x00-\x1f\x7f/?#@:][^ \x00-\x1f\x7f/?#@]*([/?#][^ \x00-\x1f\x7f]*)?|file:(///[^ \x00-\x1f\x7f/]|/[^ \x00-\x1f\x7f/]|[^ \x00-\x1f\x7f/])[^ \x00-\x1f\x7f]*)$`
	// PathPattern is a clean relative slash path that stays inside the
	// package directory: no leading "/", no empty, "." or ".." element, no
	// backslash, colon or control character.
	PathPattern = `^([^/\\:.\x00-\x1f\x7f][^/\\:\x00-\x1f\x7f]*|\.[^/\\:.\x00-\x1f\x7f][^/\\:\x00-\x1f\x7f]*|\.\.[^/\\:\x00-\x1f\x7f]+)(/([^/\\:.\x00-\x1f\x7f][^/\\:\x00-\x1f\x7f]*|\.[^/\\:.\x00-\x1f\x7f][^/\\:\x00-\x1f\x7f]*|\.\.[^/\\:\x00-\x1f\x7f]+))*$`

	// NameMaxLength bounds a provider name (DNS-1123 label).
	NameMaxLength = 63
	// ReleaseMaxLength bounds a release (DNS-1123 subdomain).
	ReleaseMaxLength = 253
)

// The patterns are compiled on first use, not at init: every process
// start (each verifier check, each render child) would pay for them.
var (
	nameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(NamePattern) })
	versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(VersionPattern) })
	releaseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(ReleasePattern) })
	sha256RE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(SHA256Pattern) })
	urlRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(URLPattern) })
	pathRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(PathPattern) })

	coreVersionRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)`)
	})
	prereleaseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i:alpha|beta|rc|pre|preview|dev)(\.?[0-9]+)*$`) })
)

// FieldError is one problem with one field of a pin file. Its message names
// the file, the line when known, the field path and what to do about it.
type FieldError struct {
	File    string // as given to Parse or Validate
	Line    int    // 1-based; 0 when unknown
	Field   string // e.g. providers[1].sources[0].sha256; "" for the whole file
	Problem string // what is wrong
	Fix     string // what to do
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
	}
	return b.String()
}

// FieldErrors returns every *FieldError inside err (as joined by Parse and
// Validate), in order.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if fe, ok := e.(*FieldError); ok {
			out = append(out, fe)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		walk(errors.Unwrap(e))
	}
	walk(err)
	return out
}

// ValidKind reports whether k is one of Kinds.
func ValidKind(k string) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// ValidVersion reports whether v is vMAJOR.MINOR.PATCH[-prerelease].
func ValidVersion(v string) bool { return versionRE().MatchString(v) }

// ValidSHA256 reports whether s is 64 lowercase hex digits.
func ValidSHA256(s string) bool { return sha256RE().MatchString(s) }

// ReleaseVersion returns the upstream version part of a release name: the
// leading vMAJOR.MINOR.PATCH plus any following "-" segments that are
// pre-release identifiers (alpha, beta, rc, pre, preview, dev, optionally
// numbered: rc.1, beta2). The rest is the package's suffix:
//
//	v1.10.1-core              -> v1.10.1
//	v0.6.12-bootstrap-talos   -> v0.6.12
//	v0.19.0-cozystack.0       -> v0.19.0
//	v1.0.0-rc.1-core          -> v1.0.0-rc.1
//	v0.7.7                    -> v0.7.7
//	bogus                     -> ""
//
// It is a best guess for reporting; to compare a pinned version with a
// release use MatchesRelease, which knows the version.
func ReleaseVersion(release string) string {
	m := coreVersionRE().FindString(release)
	if m == "" {
		return ""
	}
	rest := release[len(m):]
	if rest != "" && rest[0] != '-' && rest[0] != '+' {
		return "" // v1.2.3x: not a version
	}
	out := m
	for strings.HasPrefix(rest, "-") {
		seg := rest[1:]
		if i := strings.IndexAny(seg, "-+"); i >= 0 {
			seg = seg[:i]
		}
		if !prereleaseRE().MatchString(seg) {
			break
		}
		out += "-" + seg
		rest = rest[1+len(seg):]
	}
	return out
}

// MatchesRelease reports whether release is the ConfigMap name / spec.version
// of upstream version: equal to it, or version followed by "-" and a package
// suffix (v0.19.0 matches v0.19.0-cozystack.0, v0.6.12 matches
// v0.6.12-bootstrap-talos). A suffix that starts with a pre-release
// identifier does not count as a package suffix: v1.0.0 does not match
// v1.0.0-rc.1-core (that release is of v1.0.0-rc.1).
func MatchesRelease(version, release string) bool {
	if version == "" {
		return false
	}
	if release == version {
		return true
	}
	if !strings.HasPrefix(release, version+"-") {
		return false
	}
	suffix := release[len(version)+1:]
	first := suffix
	if i := strings.IndexAny(first, "-+"); i >= 0 {
		first = first[:i]
	}
	return first != "" && !prereleaseRE().MatchString(first)
}

// CheckPath returns nil when p is a clean relative slash path that stays
// inside the package directory (see PathPattern), else what is wrong with it.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("is empty")
	case strings.Contains(p, `\`):
		return fmt.Errorf("%q contains a backslash", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is absolute", p)
	case len(p) >= 2 && p[1] == ':':
		return fmt.Errorf("%q looks like a drive path", p)
	case p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		return fmt.Errorf("%q leaves the package directory", p)
	case strings.Contains(p, ":"):
		return fmt.Errorf("%q contains a colon", p)
	case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("%q contains a control character", p)
	case !pathRE().MatchString(p):
		return fmt.Errorf("%q is not clean (no \".\" or empty elements, no trailing slash)", p)
	}
	return nil
}

// CheckURL returns nil when u is an http, https or file URL a pin may name
// (see URLPattern), else what is wrong with it. User info in a URL is
// redacted from the message.
func CheckURL(u string) error {
	if u == "" {
		return errors.New("is empty")
	}
	// Quoted (and redacted) only for a message: most URLs are good.
	quoted := func() string { return fmt.Sprintf("%q", redactURL(u)) }
	if !urlRE().MatchString(u) {
		q := quoted()
		http := strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
		switch {
		case strings.ContainsFunc(u, func(r rune) bool { return r <= 0x20 || r == 0x7f }):
			return fmt.Errorf("%s contains a space or control character", q)
		case http && redactURL(u) != u:
			return fmt.Errorf("%s carries user info; credentials never belong in a pin file", q)
		case http:
			return fmt.Errorf("%s has no host", q)
		case strings.HasPrefix(u, "file:"):
			return fmt.Errorf("%s is neither file:///absolute/path nor file:relative/path", q)
		default:
			return fmt.Errorf("%s is not an http, https or file URL", q)
		}
	}
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("%s does not parse: %v", quoted(), errors.Unwrap(err))
	}
	if (pu.Scheme == "http" || pu.Scheme == "https") && pu.Hostname() == "" {
		return fmt.Errorf("%s has no host", quoted())
	}
	return nil
}

// redactURL replaces the user info of an http(s) URL with "***".
func redactURL(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	rest := u[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return u[:i+3] + "***" + rest[at:]
	}
	return u
}

// Validate checks f against the rules of api/pin.md and returns every
// problem found, joined, each a *FieldError naming file and field.
func (f *File) Validate(file string) error {
	return errors.Join(f.validate(file, nil)...)
}

// validate returns the problems of f; lines maps field paths to lines.
func (f *File) validate(file string, lines map[string]int) []error {
	v := &validator{file: file, lines: lines}
	if f == nil || len(f.Providers) == 0 {
		problem := "lists no provider"
		if f == nil || f.Providers == nil {
			problem = "is missing"
		}
		v.add("providers", problem, "add one entry per provider of the package (kind, name, version, release, sources)")
		return v.errs
	}
	seen := &providerSeen{writers: map[string]string{}, ids: map[string]string{}, releases: map[string]string{}}
	for i, p := range f.Providers {
		pp := fmt.Sprintf("providers[%d]", i)
		v.kindAndName(pp, p)
		v.versionAndRelease(pp, p)
		v.unique(pp, p, seen)
		v.sources(pp, p, seen)
		v.files(pp, p, seen)
		v.validateRelocate(pp, p.Relocate)
	}
	return v.errs
}

// providerSeen is what validate has met in earlier providers, each with
// the field that holds it.
type providerSeen struct {
	writers  map[string]string // to/blob path -> field that writes it
	ids      map[string]string // kind/name -> field
	releases map[string]string
}

func (v *validator) kindAndName(pp string, p Provider) {
	switch {
	case p.Kind == "":
		v.add(pp+".kind", "is missing", "set it to one of "+strings.Join(Kinds, ", "))
	case !ValidKind(p.Kind):
		fix := "use one of " + strings.Join(Kinds, ", ")
		if s := suggest(p.Kind, Kinds); s != "" {
			fix = fmt.Sprintf("did you mean %q? %s", s, fix)
		}
		v.add(pp+".kind", fmt.Sprintf("%q is not a cluster-api-operator provider kind", p.Kind), fix)
	}
	switch {
	case p.Name == "":
		v.add(pp+".name", "is missing", "set it to the metadata.name of the provider object, e.g. proxmox")
	case len(p.Name) > NameMaxLength || !nameRE().MatchString(p.Name):
		v.add(pp+".name", fmt.Sprintf("%q is not a DNS label", p.Name),
			"use at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit")
	}
}

func (v *validator) versionAndRelease(pp string, p Provider) {
	versionOK := false
	switch {
	case p.Version == "":
		v.add(pp+".version", "is missing", "set it to the upstream release tag, e.g. v0.7.7")
	case !versionRE().MatchString(p.Version):
		fix := "write it as vMAJOR.MINOR.PATCH with an optional -prerelease, e.g. v0.7.7"
		if versionRE().MatchString("v" + p.Version) {
			fix = fmt.Sprintf("add the leading v: %q", "v"+p.Version)
		}
		v.add(pp+".version", fmt.Sprintf("%q is not a version", p.Version), fix)
	default:
		versionOK = true
	}
	switch {
	case p.Release == "":
		v.add(pp+".release", "is missing", "set it to the ConfigMap name and spec.version, e.g. "+exampleRelease(p.Version, p.Name))
	case len(p.Release) > ReleaseMaxLength || !releaseRE().MatchString(p.Release):
		v.add(pp+".release", fmt.Sprintf("%q is not a valid release name", p.Release),
			"use the version plus a lowercase suffix, e.g. "+exampleRelease(p.Version, p.Name)+" (it must be a semver ConfigMap name)")
	case versionOK && !MatchesRelease(p.Version, p.Release):
		v.add(pp+".release", fmt.Sprintf("%q is not a release of version %q (its version part is %q)", p.Release, p.Version, ReleaseVersion(p.Release)),
			fmt.Sprintf("make the release start with %q followed by \"-\" and a suffix, or fix version", p.Version))
	}
}

// unique reports a provider or a release pinned twice.
func (v *validator) unique(pp string, p Provider, seen *providerSeen) {
	if p.Kind != "" && p.Name != "" {
		id := p.Kind + "/" + p.Name
		if prev, ok := seen.ids[id]; ok {
			v.add(pp, fmt.Sprintf("pins %s again (also %s)", id, prev), "keep one entry per provider")
		} else {
			seen.ids[id] = pp
		}
	}
	if p.Release != "" {
		if prev, ok := seen.releases[p.Release]; ok {
			v.add(pp+".release", fmt.Sprintf("%q is also the release of %s", p.Release, prev),
				"give each provider its own release suffix, e.g. -bootstrap-talos")
		} else {
			seen.releases[p.Release] = pp
		}
	}
}

func (v *validator) sources(pp string, p Provider, seen *providerSeen) {
	if len(p.Sources) == 0 {
		v.add(pp+".sources", "lists no source", "add the upstream components file: url, sha256 and to")
	}
	for j, s := range p.Sources {
		sp := fmt.Sprintf("%s.sources[%d]", pp, j)
		if err := CheckURL(s.URL); err != nil {
			fix := "use the https:// URL of the upstream release asset (http:// and file: also work)"
			if strings.HasPrefix(s.URL, "file:") {
				fix = "write file:///absolute/path, or file:path/relative/to/the/package"
			}
			v.add(sp+".url", err.Error(), fix)
		}
		switch {
		case s.SHA256 == "":
			v.add(sp+".sha256", "is missing", "set it to the SHA-256 of the upstream bytes: the 64 hex digits `sha256sum FILE` prints")
		case !sha256RE().MatchString(s.SHA256):
			v.add(sp+".sha256", describeBadSHA(s.SHA256), fixBadSHA(s.SHA256))
		}
		if err := CheckPath(s.To); err != nil {
			v.add(sp+".to", err.Error(), "give a clean path relative to the package directory, e.g. files/components.yaml")
		} else if prev, ok := seen.writers[s.To]; ok {
			v.add(sp+".to", fmt.Sprintf("%q is also written by %s", s.To, prev), "give each source its own file")
		} else {
			seen.writers[s.To] = sp + ".to"
		}
	}
}

// files checks the provider's other paths: patches, checksums, the
// components and metadata roles and the blob.
func (v *validator) files(pp string, p Provider, seen *providerSeen) {
	for j, pt := range p.Patches {
		if err := CheckPath(pt); err != nil {
			v.add(fmt.Sprintf("%s.patches[%d]", pp, j), err.Error(), "give a clean path relative to the package directory, e.g. patches/0001-fix.diff")
		}
	}
	if p.Checksums != "" {
		if err := CheckURL(p.Checksums); err != nil {
			v.add(pp+".checksums", err.Error(), "use the URL of the checksums file of the release (e.g. .../releases/download/v1.2.3/checksums.txt)")
		}
	}
	for _, role := range [][2]string{{"components", p.Components}, {"metadata", p.Metadata}} {
		if role[1] == "" {
			continue
		}
		found := false
		for _, s := range p.Sources {
			found = found || s.To == role[1]
		}
		if !found {
			v.add(pp+"."+role[0], fmt.Sprintf("%q is not the `to` of any source of this provider", role[1]),
				fmt.Sprintf("set it to the `to` of the source that is the %s file, e.g. %s", role[0], exampleRole(role[0])))
		}
	}
	if p.Components != "" && p.Components == p.Metadata {
		v.add(pp+".metadata", fmt.Sprintf("%q is also the components file", p.Metadata), "name two different sources")
	}
	if p.Blob != "" {
		if err := CheckPath(p.Blob); err != nil {
			v.add(pp+".blob", err.Error(), "give a clean path relative to the package directory, e.g. files/components.gz")
		} else if prev, ok := seen.writers[p.Blob]; ok {
			v.add(pp+".blob", fmt.Sprintf("%q is also written by %s", p.Blob, prev), "give the blob its own file, e.g. files/components.gz")
		} else {
			seen.writers[p.Blob] = pp + ".blob"
		}
	}
}

type validator struct {
	file  string
	lines map[string]int
	errs  []error
}

func (v *validator) add(field, problem, fix string) {
	v.errs = append(v.errs, &FieldError{File: v.file, Line: lineOf(v.lines, field), Field: field, Problem: problem, Fix: fix})
}

// lineOf finds the line of field, or of its nearest parent that has one.
func lineOf(lines map[string]int, field string) int {
	for lines != nil {
		if l, ok := lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i <= 0 {
			return lines[""]
		}
		field = field[:i]
	}
	return 0
}

// exampleRelease suggests a release for a provider: its version and name.
func exampleRelease(version, name string) string {
	if !versionRE().MatchString(version) {
		version = "v0.7.7"
	}
	if name == "" || !nameRE().MatchString(name) {
		name = "infraprovider-proxmox"
	}
	return version + "-" + name
}

func describeBadSHA(s string) string {
	h := strings.TrimPrefix(s, "sha256:")
	switch {
	case h != s && sha256RE().MatchString(h):
		return fmt.Sprintf("%q carries a sha256: prefix", s)
	case len(h) == 64 && sha256RE().MatchString(strings.ToLower(h)):
		return fmt.Sprintf("%q has uppercase hex digits", s)
	default:
		return fmt.Sprintf("%q is %d characters, not 64 lowercase hex digits", s, len(s))
	}
}

func fixBadSHA(s string) string {
	h := strings.TrimPrefix(s, "sha256:")
	switch {
	case h != s && sha256RE().MatchString(h):
		return fmt.Sprintf("drop the prefix: %s", h)
	case len(h) == 64 && sha256RE().MatchString(strings.ToLower(h)):
		return fmt.Sprintf("write it in lowercase: %s", strings.ToLower(h))
	default:
		return "set it to the 64 hex digits `sha256sum FILE` prints for the upstream file"
	}
}

// suggest returns the candidate closest to s: equal but for case, within
// two edits, or the only one sharing its first letters (Infra ->
// InfrastructureProvider); "" if none is close.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	ls := strings.ToLower(s)
	for _, c := range candidates {
		if strings.EqualFold(s, c) {
			return c
		}
		if d := editDistance(ls, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	if n := min(len(ls), 5); n >= 3 {
		for _, c := range candidates {
			if strings.HasPrefix(strings.ToLower(c), ls[:n]) {
				if best != "" {
					return "" // ambiguous
				}
				best = c
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes), capped for
// long inputs.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func exampleRole(role string) string {
	if role == "metadata" {
		return "files/metadata-talos.yaml"
	}
	return "files/bootstrap-components-talos.yaml"
}
