package check

import (
	"crypto/sha256"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/pinseal/pinseal/internal/layout"
	"github.com/pinseal/pinseal/internal/operator"
	ver "github.com/pinseal/pinseal/internal/version"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// The registry checks judge what pkg/remote recorded in
// model.Provider.Artifact; providers without an Artifact (no registry
// given) are skipped, so without a registry they report nothing. They
// split what can differ between the tree and the registry so that one
// change turns one of them red:
//
//   - version-reused: the artifact tagged with the release is a different
//     release than the tree's: its config names another kind, name, type,
//     release, upstream version, contract or set of pins, or its raw YAML
//     layer is not the tree's vendored components YAML. The content of the
//     release changed while its name did not (or the tag was overwritten
//     with another release).
//   - registry-digest: the same release (no version-reused difference),
//     but the packaged bytes differ: components.gz is not the blob the
//     tree's ConfigMap carries, or metadata.yaml is not the tree's
//     metadata; also a tag that is missing or cannot be read, a layer
//     whose bytes do not match the manifest, a missing layer.
//   - signature: a trusted key signed the manifest digest.
//   - provenance: a trusted key attested SLSA provenance about the
//     manifest digest, by an allowed builder, whose materials equal the
//     pins recorded in the artifact's config (the tree's pins when it has
//     no pinseal config; version-reused holds the two pin sets equal).

// Registry returns the registry checks (registry-digest, version-reused,
// signature, provenance, oci-install) runnable over a tree whose providers carry
// Artifacts. builders are the allowed SLSA builder ids; none means
// pinseal's own (version.BuilderID).
func Registry(builders []string) []Check {
	if len(builders) == 0 {
		builders = []string{ver.BuilderID}
	}
	builders = slices.Clone(builders)
	return []Check{
		withRun(RegistryDigest, registryDigest),
		withRun(VersionReused, versionReused),
		withRun(Signature, signature),
		withRun(Provenance, func(in *Input) []report.Finding { return provenance(in, builders) }),
		withRun(OCIInstall, ociInstall),
	}
}

// ArtifactChecks returns the checks of `verifier verify REF`, run over a
// model of one artifact (a provider whose Artifact has Content), and the
// only list of them: the tree's other checks (ConfigMaps, selectors, pins
// in a tree) do not apply to a lone artifact. They are the registry checks
// plus blob-corrupt, blob-header, blob-yaml and
// metadata-series judged on the artifact's layers (components.gz gunzips
// to exactly the raw YAML layer, its gzip header is reproducible,
// metadata.yaml has the release's series with a contract equal to the
// config's). They have the IDs of the tree checks they stand in for.
func ArtifactChecks(builders []string) []Check {
	return append(Registry(builders),
		withRun(model.CheckBlobCorrupt, artifactBlobCorrupt),
		withRun(BlobHeader, artifactBlobHeader),
		withRun(BlobYAML, artifactBlobYAML),
		withRun(MetadataSeries, artifactMetadata),
	)
}

// withRun is the catalog entry id with run as its implementation.
func withRun(id string, run Func) Check {
	c, _ := Lookup(id)
	c.Run = run
	return c
}

// withArtifacts calls fn for every provider that has an Artifact.
func withArtifacts(t *model.Tree, fn func(pkg *model.Package, p *model.Provider, a *model.Artifact)) {
	providers(t, func(pkg *model.Package, p *model.Provider) {
		if p.Artifact != nil {
			fn(pkg, p, p.Artifact)
		}
	})
}

// providerID is p.ID(), or "" for a provider the model knows nothing of
// (an artifact with no pinseal config).
func providerID(p *model.Provider) string {
	if p.Kind == "" && p.Name == "" {
		return ""
	}
	return p.ID()
}

// local is what the tree says a provider's release artifact must hold.
// Empty digests are unknown (and not compared).
type local struct {
	pin                    *pin.Provider
	blob, blobFile         string // "sha256:<hex>" of the blob the ConfigMap carries
	metadata, metadataFile string
	yaml, yamlFile         string
	version, contract      string
}

// localRelease gathers the tree side of p's release: the ConfigMap its
// selector picks (its blob, its metadata, the vendored YAML it was matched
// with, its series' contract) and its pin.
func localRelease(ix *Index, pkg *model.Package, p *model.Provider) local {
	l := local{pin: layout.PinOf(pkg, p)}
	if l.pin != nil {
		l.version = l.pin.Version
	}
	if installsFromOCI(p) {
		return l
	}
	sum := func(in *model.Package, name string) string {
		if f := in.Files[name]; f != nil && name != "" {
			return f.SHA256.String()
		}
		return ""
	}
	// The ConfigMap the operator installs, and the package it is in (a
	// selector may pick one in another package of the namespace).
	var cm *model.ConfigMap
	cpkg := pkg
	if m, ok := ix.Select(pkg, p).Picked(p.Version); ok {
		cm, cpkg = m.ConfigMap, m.Package
	}
	var comp *model.Components
	if cm != nil && cm.Components != nil && cm.Components.DecodeErr == nil {
		comp = cm.Components
	}

	// Which file is the blob, the YAML and the metadata: the package
	// layout the loader decided (model.Package.Layout), for the ConfigMap
	// the operator installs, else for the provider's pin.
	var files model.ReleaseFiles
	if cm != nil {
		if r := cpkg.Layout.ConfigMap(cm); r != nil {
			files = r.ReleaseFiles
		}
	} else if r := pkg.Layout.Provider(p); r != nil {
		files = r.ReleaseFiles
	}

	// Blob: the bytes the cluster gets, else the layout's blob file.
	switch {
	case comp != nil && comp.Gzip:
		l.blob, l.blobFile = comp.SHA256.String(), rel2(cpkg, pkg, files.Blob)
	case sum(cpkg, files.Blob) != "":
		l.blob, l.blobFile = sum(cpkg, files.Blob), rel2(cpkg, pkg, files.Blob)
	}

	// YAML: the layout's components file, else what the ConfigMap holds or
	// inflates to.
	switch {
	case sum(cpkg, files.Components) != "":
		l.yaml, l.yamlFile = sum(cpkg, files.Components), rel2(cpkg, pkg, files.Components)
	case comp != nil && !comp.Gzip:
		l.yaml = comp.SHA256.String()
	case comp != nil && comp.Blob != nil && comp.Blob.Err == nil:
		l.yaml = comp.Blob.RawSHA256.String()
	}

	// Metadata: the layout's metadata file, else the ConfigMap's own.
	switch {
	case sum(cpkg, files.Metadata) != "":
		l.metadata, l.metadataFile = sum(cpkg, files.Metadata), rel2(cpkg, pkg, files.Metadata)
	case cm != nil && len(cm.MetadataRaw) > 0:
		l.metadata = blob.Digest(sha256.Sum256(cm.MetadataRaw)).String()
	}
	if cm != nil {
		if c, _, ok := releaseContract(cm); ok {
			l.contract = c
		}
	}
	return l
}

// rel2 makes a file of package from relative to package to (findings are
// located relative to the provider's package).
func rel2(from, to *model.Package, file string) string {
	if file == "" || from == to {
		return file
	}
	r, err := filepath.Rel(filepath.FromSlash(pkgPath(to)), filepath.FromSlash(path.Join(pkgPath(from), file)))
	if err != nil {
		return ""
	}
	return filepath.ToSlash(r)
}

// comparePins lists how got differs from want, by URL and SHA-256 (the
// vendored path is not part of what was pinned); empty means equal sets.
// wantName and gotName say what each set is in the messages.
func comparePins(want, got []pin.Source, wantName, gotName string) []string {
	w, g := map[string]string{}, map[string]string{}
	for _, s := range want {
		w[s.URL] = strings.ToLower(s.SHA256)
	}
	for _, s := range got {
		g[s.URL] = strings.ToLower(s.SHA256)
	}
	var diffs []string
	for u, ws := range w {
		gs, ok := g[u]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s (sha256 %s) is in %s but not in %s", u, shortHex(ws), wantName, gotName))
		case gs != ws:
			diffs = append(diffs, fmt.Sprintf("%s: sha256 %s in %s, %s in %s", u, shortHex(ws), wantName, shortHex(gs), gotName))
		}
	}
	for u, gs := range g {
		if _, ok := w[u]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s (sha256 %s) is in %s but not in %s", u, shortHex(gs), gotName, wantName))
		}
	}
	sort.Strings(diffs)
	return diffs
}

func shortDigest(d string) string {
	return shortHex(strings.TrimPrefix(d, "sha256:"))
}

// namedByTree: the artifact's repository is the one the provider's
// spec.fetchConfig.oci tells the operator to fetch from. A platform's
// mirror names its repositories as it likes (a chart templating
// <registry>/capi/<type>-<name>-components); the tree's kind and name,
// compared above, tie the release to the provider.
func namedByTree(p *model.Provider, a *model.Artifact) bool {
	if p.FetchOCI == "" {
		return false
	}
	src, err := operator.ParseSource(p.FetchOCI, p.Version)
	return err == nil && src.Repository == a.Repository
}

// releaseDifferences lists how the artifact's release differs from the
// tree's (version-reused); empty when it is the same release.
func releaseDifferences(p *model.Provider, a *model.Artifact, l local) []string {
	c := a.Config
	if c == nil {
		mt := a.ConfigMediaType
		if mt == "" {
			mt = "none"
		}
		return []string{fmt.Sprintf("it is not a pinseal provider release (config media type %s)", mt)}
	}
	var d []string
	field := func(name, reg, tree string) {
		if tree != "" && reg != tree {
			d = append(d, fmt.Sprintf("%s %q in the registry, %q in the tree", name, reg, tree))
		}
	}
	field("kind", c.Kind, p.Kind)
	field("name", c.Name, p.Name)
	field("type", c.Type, p.Type())
	// The repository is the one of the config's kind and name: a signed
	// release copied into another provider's repository is not that
	// provider's release (with a tree, the kind/name fields above say it).
	if want := model.RepositoryName(c.Type, c.Name); len(d) == 0 && c.Type != "" && c.Name != "" && path.Base(a.Repository) != want && !namedByTree(p, a) {
		d = append(d, fmt.Sprintf("repository %s holds %s/%s, whose releases belong in repository %s", a.Repository, c.Kind, c.Name, want))
	}
	field("release", c.Release, p.Version)
	// The signed provenance names the release too: the tag must be it.
	if pr := a.Provenance; pr.Valid && pr.Release != "" && pr.Release != p.Version {
		d = append(d, fmt.Sprintf("release %q in the provenance, %q in the tree", pr.Release, p.Version))
	}
	field("upstream version", c.Version, l.version)
	field("contract", c.Contract, l.contract)
	if l.pin != nil && len(l.pin.Sources) > 0 {
		for _, x := range comparePins(l.pin.Sources, c.Pins, "the tree's pins", "the artifact's pins") {
			d = append(d, "pins: "+x)
		}
	}
	if l.yaml != "" && a.YAMLSHA256 != "" && !model.SameSHA256(a.YAMLSHA256, l.yaml) {
		where := "the tree's components"
		if l.yamlFile != "" {
			where = l.yamlFile
		}
		d = append(d, fmt.Sprintf("components YAML: layer %s is sha256 %s, %s is %s", a.YAMLTitle, shortDigest(a.YAMLSHA256), where, shortDigest(l.yaml)))
	}
	return d
}

// prefixOf is the PREFIX an artifact was looked up under.
func prefixOf(p *model.Provider, a *model.Artifact) string {
	return strings.TrimSuffix(a.Repository, "/"+p.RepositoryName())
}

func pushHint(pkg *model.Package, p *model.Provider, a *model.Artifact) string {
	if a.OCISource {
		return fmt.Sprintf("`builder push DIR --to PREFIX --key cosign.key` pushes the release to PREFIX/%s-%s:%s; point spec.fetchConfig.oci there, or copy a pushed release to %s with its signatures (`cosign copy`)", p.Type(), p.Name, p.Version, a.Ref)
	}
	plain := ""
	if a.PlainHTTP {
		plain = " --plain-http"
	}
	return fmt.Sprintf("`builder push %s --to %s --key cosign.key%s`", pkg.CommandPath(), prefixOf(p, a), plain)
}

// registryDigest: the artifact tagged with the release can be read, has
// every layer, and (when it is the tree's release) holds exactly the
// tree's blob and metadata.
func registryDigest(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		add := func(loc model.Location, msg, hint string, settings ...report.Setting) {
			f := newFinding(RegistryDigest, pkg, providerID(p), loc, msg, hint)
			f.Settings = settings
			out = append(out, f)
		}
		switch {
		case ociSourceRefused(a):
			return // oci-source: the operator cannot read the value either
		case a.Refused != "":
			hint, settings := refusedHint(a)
			add(p.Location, fmt.Sprintf("%s installs from %s (spec.fetchConfig.oci), which was not checked: %s", p.ID(), a.Ref, a.Refused),
				hint, settings...)
			return
		case a.Tampered:
			add(p.Location, fmt.Sprintf("the registry serves bytes for %s that do not match the digests in its manifest: %s", a.Ref, a.Err),
				"do not deploy it; the signed manifest names other bytes: find out who changed the registry's storage, then push the release again")
			return
		case a.Err != "":
			add(p.Location, fmt.Sprintf("the artifact %s could not be read: %s", a.Ref, a.Err),
				"check that the registry is reachable and that the docker config has credentials for it, then run again; for a plain HTTP registry, allow plain HTTP",
				report.SettingPlainHTTP)
			return
		case !a.Found:
			add(p.Location, fmt.Sprintf("release %s of %s is not in the registry: %s does not exist", p.Version, p.ID(), a.Ref),
				"push it: "+pushHint(pkg, p, a))
			return
		}
		if len(a.Missing) > 0 {
			add(p.Location, fmt.Sprintf("the artifact %s lacks layer %s", a.Pinned(), strings.Join(a.Missing, ", ")),
				"the cluster-api-operator and the verifier need components.gz, metadata.yaml and components.yaml: push the release with `builder push`")
		}
		l := localRelease(ix, pkg, p)
		if a.Config == nil || len(releaseDifferences(p, a, l)) > 0 {
			return // another release: version-reused
		}
		if l.blob != "" && a.BlobSHA256 != "" && !model.SameSHA256(a.BlobSHA256, l.blob) {
			what := l.blobFile
			if what == "" {
				what = "the ConfigMap's components"
			}
			add(model.Location{File: l.blobFile},
				fmt.Sprintf("the registry's %s:%s holds components.gz sha256 %s, but %s is sha256 %s: the same release, different blob bytes", a.Repository, p.Version, shortDigest(a.BlobSHA256), what, shortDigest(l.blob)),
				fmt.Sprintf("the YAML and pins are unchanged, so the blob was regenerated or edited on one side: restore it (`builder build %s`) so that it equals the released one, or, if the new bytes are intended, bump the release", pkg.CommandPath()))
		}
		if l.metadata != "" && a.MetadataSHA256 != "" && !model.SameSHA256(a.MetadataSHA256, l.metadata) {
			what := l.metadataFile
			if what == "" {
				what = "the ConfigMap's metadata"
			}
			add(model.Location{File: l.metadataFile},
				fmt.Sprintf("the registry's %s:%s holds metadata.yaml sha256 %s, but %s is sha256 %s", a.Repository, p.Version, shortDigest(a.MetadataSHA256), what, shortDigest(l.metadata)),
				"restore the released metadata.yaml, or bump the release if the change is intended")
		}
	})
	return out
}

// refusedHint says how to get a refused fetchConfig.oci artifact checked,
// and the settings it asks to change.
func refusedHint(a *model.Artifact) (string, []report.Setting) {
	host, _, _ := strings.Cut(a.Repository, "/")
	return fmt.Sprintf("point spec.fetchConfig.oci at a registry you allow, or, if %s is a registry you trust, allow it (and plain HTTP, if it serves plain HTTP)", host),
		[]report.Setting{report.SettingAllowRegistry, report.SettingPlainHTTP}
}

// versionReused: the release tag does not hold another release than the
// tree's.
func versionReused(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	ix := in.Index
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		if !a.Found || a.Err != "" {
			return // registry-digest says why
		}
		l := localRelease(ix, pkg, p)
		d := releaseDifferences(p, a, l)
		if len(d) == 0 {
			return
		}
		// The packaged bytes differ too, as a rule: say so in the detail.
		if l.blob != "" && a.BlobSHA256 != "" && !model.SameSHA256(a.BlobSHA256, l.blob) {
			d = append(d, fmt.Sprintf("components.gz: sha256 %s in the registry, %s in the tree", shortDigest(a.BlobSHA256), shortDigest(l.blob)))
		}
		if l.metadata != "" && a.MetadataSHA256 != "" && !model.SameSHA256(a.MetadataSHA256, l.metadata) {
			d = append(d, fmt.Sprintf("metadata.yaml: sha256 %s in the registry, %s in the tree", shortDigest(a.MetadataSHA256), shortDigest(l.metadata)))
		}
		f := newFinding(VersionReused, pkg, providerID(p), p.Location,
			fmt.Sprintf("release tag %s holds %s, which differs from the tree's release %s: %s", a.Ref, a.Pinned(), p.Version, d[0]),
			"releases are immutable: give the changed package a new release (ConfigMap name and spec.version) and push that; if the tag was overwritten in the registry, restore the released artifact")
		if len(d) > 1 {
			f.Detail = strings.Join(d, "\n")
		}
		out = append(out, f)
	})
	return out
}

// signature: a trusted key signed the artifact's manifest digest.
func signature(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		s := a.Signature
		if !a.Found || !s.Checked || s.Valid {
			return
		}
		msg, hint, settings := verdictWords(false, s.Reason, a.Pinned(), s.Form, pushHint(pkg, p, a))
		f := newFinding(Signature, pkg, providerID(p), p.Location, msg, hint)
		f.Detail = s.Message
		f.Settings = settings
		out = append(out, f)
	})
	return out
}

// verdictWords words the finding about a signature (prov false) or a
// provenance attestation (prov true) that did not verify for reason:
// every reason in this one switch, each case with the signature's words
// first and the provenance's second. ref is the artifact, form what was
// found, push how to push and sign it again. settings are those the hint
// asks to change.
func verdictWords(prov bool, reason model.Reason, ref, form, push string) (msg, hint string, settings []report.Setting) {
	what := "signature"
	if prov {
		what = "provenance attestation"
	}
	one := func(sig, att string) string {
		if prov {
			return att
		}
		return sig
	}
	r := reason
	if r == model.WrongPredicate && !prov {
		r = "" // a signature of another predicate type: not valid (default)
	}
	if w, ok := keylessWords[r]; ok {
		if form == "" {
			form = "the " + what
		}
		return fmt.Sprintf("the %s of %s (%s) %s (%s)", what, ref, form, w.is, r), w.hint, nil
	}
	switch r {
	case model.NoSignature:
		return one(fmt.Sprintf("the artifact %s is not signed", ref), fmt.Sprintf("the artifact %s has no provenance attestation", ref)),
			one("sign it with the release key: "+push+", or `cosign sign --key cosign.key "+ref+"`", "attest it with the release key: "+push), nil
	case model.OtherKey:
		return one(fmt.Sprintf("the artifact %s is signed, but by none of the trusted keys", ref), fmt.Sprintf("the provenance attestations of %s are signed by none of the trusted keys", ref)),
			one("unless the signer is trusted, this artifact was not released by you: do not deploy it; if the signer is trusted, add its public key to the trusted keys",
				"do not deploy it unless the attester is trusted; if it is, add its public key to the trusted keys"), []report.Setting{report.SettingTrustedKeys}
	case model.WrongDigest:
		return one(fmt.Sprintf("the signature stored for %s was made by a trusted key for another digest (copied from another artifact)", ref),
				fmt.Sprintf("the provenance attestation stored for %s is about another artifact (its subject is another digest)", ref)),
			one("do not deploy it: the signed artifact is a different one; push and sign the release again and find out who copied the signature",
				"do not deploy it: attest the release again with `builder push` and find out who copied the attestation"), nil
	case model.WrongPredicate:
		return fmt.Sprintf("the attestations of %s are not SLSA provenance v1", ref),
			"attest it with `builder push --key`, which stores SLSA provenance v1", nil
	case model.NoTrustedKeys:
		return fmt.Sprintf("the %s of %s cannot be verified: no trusted keys", one("signature", "provenance"), ref),
			"add the release key's public key (cosign.pub) to the trusted keys", []report.Setting{report.SettingTrustedKeys}
	case model.ReadError:
		return fmt.Sprintf("the %s of %s could not be read", one("signatures", "attestations"), ref),
			"check that the registry is reachable and run again", nil
	case model.TooLarge:
		return fmt.Sprintf("the %s image stored for %s exceeds the verifier's bounds, so it was not read", one("signature", "attestation"), ref),
			one("a signature image holds one small layer per signing key; this one was not made by cosign or `builder push`: delete its .sig tag and sign again with the release key: ",
				"an attestation image holds one small layer per attestation; this one was not made by cosign or `builder push`: delete its .att tag and attest again: ") + push, nil
	default:
		return fmt.Sprintf("the %s %s %s is not valid (%s)", what, one("stored for", "of"), ref, reason),
			one("sign it again with the release key: ", "attest it again: ") + push, nil
	}
}

// keylessWords say what a Sigstore bundle or keyless signature that did
// not verify is, and what to do, by reason.
var keylessWords = map[model.Reason]struct{ is, hint string }{
	model.BadSignature: {"names a trusted signer, but its signature does not verify: it was changed after signing",
		"do not deploy it: the stored bundle was tampered with; sign and attest the release again and find out who changed it"},
	model.WrongIdentity: {"is a valid keyless signature by an identity the policy does not trust",
		"if that workflow or account is your release signer, add its issuer and subject to the policy's identities; otherwise do not deploy it"},
	model.CertExpired: {"was made with a certificate that was not valid at the signing time its timestamps prove",
		"sign it again (a Fulcio certificate is valid for minutes: the signature needs a timestamp from that window)"},
	model.UntrustedCert: {"is signed with a certificate that does not chain to the trusted root",
		"set the policy's trustedRoot to the Sigstore instance that issued it (trusted_root.json), or do not deploy it"},
	model.NoTimestamp: {"is keyless but carries no verified timestamp or transparency-log time",
		"sign with a timestamp authority or transparency log (cosign's default signing config), and check the policy's trustedRoot and tlog"},
	model.TLogMissing: {"has no transparency-log entry that verifies, which the policy requires",
		"sign with upload to the transparency log, or set the policy's tlog to optional"},
}

// provenance: a valid SLSA provenance attestation about the artifact's
// digest, by an allowed builder, whose materials equal the pins.
func provenance(in *Input, builders []string) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		pr := a.Provenance
		if !a.Found || !pr.Checked {
			return
		}
		ref := a.Pinned()
		add := func(msg, hint, detail string) {
			f := newFinding(Provenance, pkg, providerID(p), p.Location, msg, hint)
			f.Detail = detail
			out = append(out, f)
		}
		if !pr.Valid {
			msg, hint, settings := verdictWords(true, pr.Reason, ref, pr.Form, pushHint(pkg, p, a))
			add(msg, hint, pr.Message)
			out[len(out)-1].Settings = settings
			return
		}
		if !slices.Contains(builders, pr.BuilderID) {
			add(fmt.Sprintf("the provenance of %s names builder %q, which the policy does not allow (builders: %s)", ref, pr.BuilderID, quoteList(builders)),
				"build releases with an allowed builder, or add this builder id to the policy's builders if you trust it", "")
		}
		// The pins to compare with: the artifact's own, else (no pinseal
		// config: version-reused or registry-digest says why) the tree's.
		pins, pinsName := []pin.Source(nil), "the artifact's pins"
		switch pp := layout.PinOf(pkg, p); {
		case a.Config != nil:
			pins = a.Config.Pins
		case pp != nil:
			pins, pinsName = pp.Sources, "the tree's pins"
		default:
			return // nothing to compare the materials with
		}
		if d := comparePins(pins, pr.Materials, pinsName, "the provenance"); len(d) > 0 {
			add(fmt.Sprintf("the provenance of %s lists other materials than %s: %s", ref, pinsName, d[0]),
				"the artifact was not built from the pinned sources (or the attestation belongs to another build): rebuild and push it from the pins with `builder push --key`",
				strings.Join(d, "\n"))
		}
	})
	return append(out, provenanceImages(t)...)
}

// provenanceImages: the images a provenance lists as resolved dependencies
// are the images the artifact's components run: those of its YAML layer
// when the layers were read (verify REF), else those of the tree's
// release, whose bytes registry-digest compares with the artifact's.
func provenanceImages(t *model.Tree) []report.Finding {
	var out []report.Finding
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		pr := a.Provenance
		if !a.Found || !pr.Checked || !pr.Valid || !pr.ImagesRecorded || a.Err != "" {
			return // an artifact that could not be read is registry-digest's
		}
		var want []string
		what := "the artifact's components"
		switch {
		case a.Content != nil:
			want = a.Content.Images
		case installsFromOCI(p):
			return
		default:
			what = "the tree's release " + p.Version
			for _, img := range pkg.Images {
				if img.Release == p.Version {
					want = append(want, img.Ref)
				}
			}
		}
		slices.Sort(want)
		want = slices.Compact(want)
		got := slices.Sorted(slices.Values(pr.Images))
		var missing, extra []string
		for _, r := range want {
			if _, ok := slices.BinarySearch(got, r); !ok {
				missing = append(missing, r)
			}
		}
		for _, r := range got {
			if _, ok := slices.BinarySearch(want, r); !ok {
				extra = append(extra, r)
			}
		}
		if len(missing)+len(extra) == 0 {
			return
		}
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "it does not list "+strings.Join(missing, ", "))
		}
		if len(extra) > 0 {
			parts = append(parts, "it lists "+strings.Join(extra, ", ")+", which "+what+" do not run")
		}
		out = append(out, newFinding(Provenance, pkg, providerID(p), p.Location,
			fmt.Sprintf("the provenance of %s names other images than %s run: %s", a.Pinned(), what, strings.Join(parts, "; ")),
			"the attestation does not describe these components (another build, or the components changed after it was made): push the release again with `builder push --key` so its provenance lists the images it runs"))
	})
	return out
}

// layerFinding is a finding located in a layer of the artifact.
func layerFinding(id string, pkg *model.Package, p *model.Provider, layer, msg, hint string) report.Finding {
	return newFinding(id, pkg, providerID(p), model.Location{File: layer}, msg, hint)
}

// withContent calls fn for every provider whose artifact's layers were
// inspected.
func withContent(t *model.Tree, fn func(pkg *model.Package, p *model.Provider, a *model.Artifact, c *model.ArtifactContent)) {
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		if a.Content != nil && a.Err == "" {
			fn(pkg, p, a, a.Content)
		}
	})
}

const rebuildArtifact = "the artifact is not what `builder push` makes: rebuild the package reproducibly (`builder build`) and push a new release"

// artifactBlobCorrupt: components.gz is one valid complete gzip stream.
func artifactBlobCorrupt(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withContent(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact, c *model.ArtifactContent) {
		if c.Blob == nil || (c.Blob.Err == nil && c.Blob.HeaderErr == nil) {
			return
		}
		out = append(out, layerFinding(model.CheckBlobCorrupt, pkg, p, "components.gz",
			fmt.Sprintf("layer components.gz of %s %s", a.Pinned(), corruptMessage(c.Blob)), rebuildArtifact))
	})
	return out
}

// artifactBlobHeader: the gzip header of components.gz is reproducible.
func artifactBlobHeader(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withContent(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact, c *model.ArtifactContent) {
		if c.Blob == nil || c.Blob.HeaderErr != nil {
			return
		}
		if probs := c.Blob.Header.Problems(); len(probs) > 0 {
			out = append(out, layerFinding(BlobHeader, pkg, p, "components.gz",
				fmt.Sprintf("gzip header of layer components.gz of %s is not reproducible: it %s", a.Pinned(), strings.Join(probs, ", ")), rebuildArtifact))
		}
	})
	return out
}

// artifactBlobYAML: gunzip(components.gz) is exactly the raw YAML layer.
func artifactBlobYAML(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withContent(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact, c *model.ArtifactContent) {
		if c.Blob == nil || c.Blob.Err != nil || c.Blob.HeaderErr != nil || a.YAMLSHA256 == "" {
			return // blob-corrupt or registry-digest (missing layer)
		}
		if c.Blob.RawSHA256 == c.YAMLDigest && c.Diff == nil {
			return
		}
		msg := fmt.Sprintf("layer components.gz of %s inflates to something other than layer %s", a.Pinned(), a.YAMLTitle)
		line := 0
		detail := ""
		if d := c.Diff; d != nil {
			msg += fmt.Sprintf(": first difference at line %d (byte %d)", d.Line, d.Offset)
			line, detail = d.Line, d.Excerpt
		} else {
			msg += fmt.Sprintf(" (%d bytes, sha256 %s; the YAML layer has %d bytes, sha256 %s)", c.Blob.RawSize, shortHex(c.Blob.RawSHA256.Hex()), c.YAMLSize, shortHex(c.YAMLDigest.Hex()))
		}
		f := newFinding(BlobYAML, pkg, providerID(p), model.Location{File: a.YAMLTitle, Line: line}, msg,
			"a ConfigMap install gets the blob, an OCI install (fetchConfig.oci) gets the YAML layer: they must be the same manifest; "+rebuildArtifact)
		f.Detail = detail
		out = append(out, f)
	})
	return out
}

// artifactMetadata: metadata.yaml parses and has a series with a contract
// for the release's major.minor, equal to the config's contract.
func artifactMetadata(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withContent(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact, c *model.ArtifactContent) {
		md := c.Metadata
		if md == nil {
			return // registry-digest: missing layer
		}
		add := func(msg, hint string) {
			out = append(out, layerFinding(MetadataSeries, pkg, p, "metadata.yaml", msg, hint))
		}
		if md.Err != nil {
			add(fmt.Sprintf("layer metadata.yaml of %s does not parse: %v", a.Pinned(), md.Err), "vendor the metadata.yaml of the same upstream release and push a new release")
			return
		}
		v, err := version.ParseGeneric(c.Version)
		if err != nil {
			add(fmt.Sprintf("the release series of %s cannot be looked up: its version %q is not a version", a.Pinned(), c.Version),
				"push releases named after their upstream version (v1.2.3 or v1.2.3-<suffix>)")
			return
		}
		s, ok := series(md, v.Major(), v.Minor())
		if !ok {
			add(fmt.Sprintf("layer metadata.yaml of %s has no releaseSeries for %d.%d (version %s); it lists %s", a.Pinned(), v.Major(), v.Minor(), c.Version, listSeries(md)),
				fmt.Sprintf("vendor the metadata.yaml of release %s (it must list major: %d, minor: %d with its contract) and push a new release", c.Version, v.Major(), v.Minor()))
			return
		}
		if a.Config != nil && a.Config.Contract != "" && a.Config.Contract != s.Contract {
			add(fmt.Sprintf("the config of %s says contract %s, but metadata.yaml says %s for %d.%d", a.Pinned(), a.Config.Contract, s.Contract, v.Major(), v.Minor()),
				"the config and the metadata were not built together: push a new release with `builder push`")
		}
	})
	return out
}

// ociInstall: every operator release with OCI support finds the
// artifact's components YAML and metadata by their layer titles, for the
// provider's type (old and new names), name and spec.version.
func ociInstall(in *Input) []report.Finding {
	t := in.Tree
	var out []report.Finding
	withArtifacts(t, func(pkg *model.Package, p *model.Provider, a *model.Artifact) {
		if !a.Found || a.Err != "" || a.YAMLSHA256 == "" || a.MetadataSHA256 == "" {
			return // registry-digest: unreadable, or a layer is missing
		}
		types := operator.Types(p.Kind)
		if len(types) == 0 {
			return // not a provider kind: version-reused says what it is
		}
		titles := make(map[string]bool, len(a.Layers))
		for title := range a.Layers {
			titles[title] = true
		}
		var problems []string
		for _, tn := range types {
			op := operator.Provider{Type: tn.Type, Name: p.Name, Version: p.Version}
			who := fmt.Sprintf("operator %s (type %q)", tn.Releases, tn.Type)
			f, err := operator.Find(titles, op)
			if f.Components != "" && !model.SameSHA256(a.Layers[f.Components], a.YAMLSHA256) {
				problems = append(problems, fmt.Sprintf("%s installs layer %s (sha256 %s), not the components YAML %s (sha256 %s)",
					who, f.Components, shortDigest(a.Layers[f.Components]), a.YAMLTitle, shortDigest(a.YAMLSHA256)))
			}
			if f.Metadata != "" && !model.SameSHA256(a.Layers[f.Metadata], a.MetadataSHA256) {
				problems = append(problems, fmt.Sprintf("%s reads metadata from layer %s (sha256 %s), not metadata.yaml (sha256 %s)",
					who, f.Metadata, shortDigest(a.Layers[f.Metadata]), shortDigest(a.MetadataSHA256)))
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", who, err))
			}
		}
		if len(problems) == 0 {
			return
		}
		f := newFinding(OCIInstall, pkg, providerID(p), p.Location,
			fmt.Sprintf("the cluster-api-operator cannot install %s for %s as checked: %s", a.Pinned(), p.ID(), problems[0]),
			"push the release with `builder push`, which titles the raw YAML components.yaml (found by every operator release for every kind) and the metadata metadata.yaml; an artifact already released under this tag is immutable, so push it as a new release")
		if len(problems) > 1 {
			f.Detail = strings.Join(problems, "\n")
		}
		out = append(out, f)
	})
	return out
}

// installsFromOCI reports whether p installs from its fetchConfig.oci
// artifact: the tree then holds no ConfigMap or vendored components of it
// to compare the registry's with, only its pins.
func installsFromOCI(p *model.Provider) bool {
	return p.Selector == nil && p.FetchOCI != ""
}
