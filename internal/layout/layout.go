// Package layout decides which vendored files are a provider release's
// components, metadata and blob.
//
// It decides, in one place, which vendored file of a provider
// package is each provider release's components YAML, its metadata and its
// blob. The loader (pkg/load) runs Of once per package and stores the
// result on model.Package.Layout; the builder (build, push, bump) and the
// checks read it there instead of deciding again.
//
// What a file is follows from what the chart does with it, not from its
// name:
//
//   - blob: the vendored file whose bytes are exactly the rendered
//     ConfigMap's components (the pin's blob first when several are), else
//     the pin's `blob`;
//   - components YAML: the pin's components source (pin.yaml `components`,
//     else its one source ending in components.yaml, else its only source
//     that is not metadata), else the vendored plain file whose bytes are
//     what the ConfigMap's components inflate to (by content), else, as a
//     last resort for unpinned packages whose YAML was edited after the
//     blob was built, the one *components.yaml the blob's or provider's
//     name points to;
//   - metadata: the vendored file whose bytes are the ConfigMap's
//     data.metadata, else the pin's metadata source (pin.yaml `metadata`,
//     else its one source named metadata*).
//
// Of derives the layout of a package as the loader fills it (the digests it
// compares); FromPins derives what the pins alone say, for a package whose
// chart cannot be rendered yet (a first build).
package layout

import (
	"crypto/sha256"
	"fmt"
	"path"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
)

// Of derives the layout of a package being loaded: one release per components
// ConfigMap (in the package's order), then one per pin entry no ConfigMap
// took. The loader calls it once the package's files, ConfigMaps and
// pins are in; everything else reads model.Package.Layout. It reads only the model: file digests (model.File), the
// ConfigMaps' component digests and metadata bytes, the providers'
// selectors and the pins.
func Of(pkg *model.Package) *model.Layout {
	l := &model.Layout{}
	if pkg == nil {
		return l
	}
	taken := map[*pin.Provider]bool{}
	for _, cm := range pkg.ConfigMaps {
		provs := Selecting(pkg, cm)
		pp := pinFor(pkg, cm, provs)
		r := &model.LayoutRelease{Name: cm.Name, ConfigMap: cm, Providers: provs, Pin: pp}
		if pp != nil {
			taken[pp] = true
		}
		derive(pkg, r)
		l.Releases = append(l.Releases, r)
	}
	if pkg.Pins != nil && pkg.Pins.File != nil {
		for i := range pkg.Pins.File.Providers {
			pp := &pkg.Pins.File.Providers[i]
			if taken[pp] {
				continue
			}
			r := &model.LayoutRelease{Name: pp.Release, Pin: pp, ReleaseFiles: PinFiles(pp)}
			l.Releases = append(l.Releases, r)
		}
	}
	return l
}

// FromPins is the layout the pins alone give: one release per pin entry,
// with the pin's blob, components and metadata sources. An entry whose
// components source is ambiguous is an error naming it and the fix.
func FromPins(f *pin.File) (*model.Layout, error) {
	l := &model.Layout{}
	if f == nil {
		return l, nil
	}
	for i := range f.Providers {
		pp := &f.Providers[i]
		if _, err := PinComponents(*pp); err != nil {
			return nil, err
		}
		l.Releases = append(l.Releases, &model.LayoutRelease{Name: pp.Release, Pin: pp, ReleaseFiles: PinFiles(pp)})
	}
	return l, nil
}

// PinFiles are the files a pin entry names: its blob, its components
// source (PinComponents) and its metadata source (PinMetadata), each
// matched by pin; "" for a role the pin does not name.
func PinFiles(pp *pin.Provider) model.ReleaseFiles {
	var f model.ReleaseFiles
	if pp.Blob != "" {
		f.Blob, f.BlobBy = pp.Blob, model.MatchedByPin
	}
	if c, _ := PinComponents(*pp); c != "" {
		f.Components, f.ComponentsBy = c, model.MatchedByPin
	}
	if m := PinMetadata(*pp); m != "" {
		f.Metadata, f.MetadataBy = m, model.MatchedByPin
	}
	return f
}

// PinComponents is the pinned source that is the provider's components
// YAML: pin.yaml's `components`, else its one source whose `to` ends in
// components.yaml, else its only source that is not metadata. "" with no
// error when the pin has no such source (e.g. it pins metadata only); an
// error when several sources could be it and the pin does not say which.
func PinComponents(pp pin.Provider) (string, error) {
	if pp.Components != "" {
		return pp.Components, nil
	}
	var named, other []string
	meta := PinMetadata(pp)
	for _, s := range pp.Sources {
		if s.To == "" {
			continue
		}
		if strings.HasSuffix(s.To, "components.yaml") {
			named = append(named, s.To)
		}
		if s.To != meta && !strings.HasPrefix(path.Base(s.To), "metadata") {
			other = append(other, s.To)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], nil
	case len(named) > 1:
		return "", fmt.Errorf("%s: several sources end in components.yaml (%s): say which is the components file with `components: <to>` in %s", pp.ID(), strings.Join(named, ", "), pin.FileName)
	case len(other) == 1:
		return other[0], nil
	case len(other) > 1 && (pp.Blob != "" || len(pp.Patches) > 0):
		return "", fmt.Errorf("%s: no source is named *components.yaml and several could be (%s): say which is the components file with `components: <to>` in %s", pp.ID(), strings.Join(other, ", "), pin.FileName)
	}
	return "", nil
}

// PinMetadata is the pinned source that is the provider's metadata.yaml:
// pin.yaml's `metadata`, else its one source whose file name starts with
// "metadata"; "" when none or several do.
func PinMetadata(pp pin.Provider) string {
	if pp.Metadata != "" {
		return pp.Metadata
	}
	var m []string
	for _, s := range pp.Sources {
		if s.To != "" && s.To != pp.Components && strings.HasPrefix(path.Base(s.To), "metadata") {
			m = append(m, s.To)
		}
	}
	if len(m) == 1 {
		return m[0]
	}
	return ""
}

// Inflated reports whether a blob inspection inflated the whole first gzip
// member, so that RawSHA256 is the digest of what the cluster gets.
func Inflated(info *blob.Info) bool {
	if info == nil {
		return false
	}
	if info.Err == nil {
		return true
	}
	ce, ok := blob.IsCorrupt(info.Err)
	return ok && (ce.Kind == blob.MultiMember || ce.Kind == blob.Trailing || ce.Kind == blob.BadChecksum)
}

// derive fills the files of a ConfigMap's release.
func derive(pkg *model.Package, r *model.LayoutRelease) {
	deriveBlob(pkg, r)
	deriveComponents(pkg, r)
	deriveMetadata(pkg, r)
}

// deriveBlob finds the blob: the vendored file with exactly the
// ConfigMap's bytes (the pinned one, then a .gz, first), else the pinned
// blob.
func deriveBlob(pkg *model.Package, r *model.LayoutRelease) {
	pp, comp := r.Pin, r.ConfigMap.Components
	usable := comp != nil && comp.DecodeErr == nil
	if usable {
		var same []string
		for rel, f := range pkg.Files {
			if f.SHA256 == comp.SHA256 && f.Size == comp.Size {
				same = append(same, rel)
			}
		}
		sort.Slice(same, func(i, j int) bool {
			a, b := same[i], same[j]
			if pp != nil && (a == pp.Blob) != (b == pp.Blob) {
				return a == pp.Blob
			}
			if ga, gb := strings.HasSuffix(a, ".gz"), strings.HasSuffix(b, ".gz"); ga != gb {
				return ga
			}
			return a < b
		})
		if len(same) > 0 {
			r.Blob, r.BlobBy = same[0], model.MatchedByBytes
		}
	}
	if r.Blob == "" && pp != nil && pp.Blob != "" {
		r.Blob, r.BlobBy = pp.Blob, model.MatchedByPin
	}
}

// deriveComponents finds the components YAML: by pin, then by content,
// then by name.
func deriveComponents(pkg *model.Package, r *model.LayoutRelease) {
	pp, comp := r.Pin, r.ConfigMap.Components
	usable := comp != nil && comp.DecodeErr == nil
	var content blob.Digest
	known := false
	if usable {
		content, known = comp.SHA256, true
		if comp.Gzip {
			content, known = blob.Digest{}, false
			if comp.Blob != nil && Inflated(comp.Blob) {
				content, known = comp.Blob.RawSHA256, true
			}
		}
	}
	blobFile := ""
	if r.BlobBy == model.MatchedByBytes {
		blobFile = r.Blob
	}
	if pp != nil {
		if c, _ := PinComponents(*pp); c != "" {
			r.Components, r.ComponentsBy = c, model.MatchedByPin
		}
	}
	if r.Components == "" && known {
		if c := contentMatch(pkg, content); c != "" {
			r.Components, r.ComponentsBy = c, model.MatchedByContent
		}
	}
	if r.Components == "" && pp == nil && (comp == nil || comp.Gzip || comp.DecodeErr != nil) {
		// Only a blob (or a blob that cannot be read) needs a YAML found by
		// name: plain components are themselves what reviewers see.
		if c := nameMatch(pkg, blobFile, r.Providers); c != "" && c != r.Blob {
			r.Components, r.ComponentsBy = c, model.MatchedByName
		}
	}
}

// deriveMetadata finds the metadata: the vendored file with exactly
// data.metadata's bytes, else the pinned one.
func deriveMetadata(pkg *model.Package, r *model.LayoutRelease) {
	cm, pp := r.ConfigMap, r.Pin
	if len(cm.MetadataRaw) > 0 {
		want := sha256.Sum256(cm.MetadataRaw)
		pinned := ""
		if pp != nil {
			pinned = PinMetadata(*pp)
		}
		var same []string
		for rel, f := range pkg.Files {
			if f.Blob == nil && blob.Digest(want) == f.SHA256 && f.Size == int64(len(cm.MetadataRaw)) {
				same = append(same, rel)
			}
		}
		sort.Slice(same, func(i, j int) bool {
			if (same[i] == pinned) != (same[j] == pinned) {
				return same[i] == pinned
			}
			return same[i] < same[j]
		})
		if len(same) > 0 {
			r.Metadata, r.MetadataBy = same[0], model.MatchedByBytes
		}
	}
	if r.Metadata == "" && pp != nil {
		if m := PinMetadata(*pp); m != "" {
			r.Metadata, r.MetadataBy = m, model.MatchedByPin
		}
	}
}

// Selecting returns the package's providers whose selector matches cm in
// its namespace, the one whose spec.version is cm's name first.
func Selecting(pkg *model.Package, cm *model.ConfigMap) []*model.Provider {
	var out []*model.Provider
	for _, pr := range pkg.Providers {
		if pr.Namespace == cm.Namespace && Selects(pr.Selector, cm.Labels) {
			out = append(out, pr)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version == cm.Name && out[j].Version != cm.Name })
	return out
}

// Selects reports whether sel matches set, with the operator's semantics
// (Selector): an empty selector matches everything; nil, and a selector
// the operator cannot convert, match nothing.
func Selects(sel *model.Selector, set map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := Selector(sel)
	return err == nil && s.Matches(labels.Set(set))
}

// Selector converts a model selector with apimachinery's own conversion,
// as the operator does. An empty selector matches everything.
func Selector(s *model.Selector) (labels.Selector, error) {
	ls := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{
			Key:      r.Key,
			Operator: metav1.LabelSelectorOperator(r.Operator),
			Values:   r.Values,
		})
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, fmt.Errorf("invalid fetchConfig.selector: %w", err)
	}
	return sel, nil
}

// pinFor finds the pin entry of a ConfigMap: its release is the
// ConfigMap's name, or the spec.version of a provider selecting it; for
// pins assembled from a Makefile (no kind, name or release), the one whose
// version the ConfigMap's name is a release of.
func pinFor(pkg *model.Package, cm *model.ConfigMap, provs []*model.Provider) *pin.Provider {
	if pkg.Pins == nil || pkg.Pins.File == nil {
		return nil
	}
	ps := pkg.Pins.File.Providers
	for i := range ps {
		if ps[i].Release != "" && ps[i].Release == cm.Name {
			return &ps[i]
		}
	}
	for _, pr := range provs {
		for i := range ps {
			if ps[i].Release != "" && ps[i].Release == pr.Version {
				return &ps[i]
			}
		}
	}
	return nil
}

// contentMatch returns the vendored plain file whose SHA-256 is digest,
// preferring *components.yaml names.
func contentMatch(pkg *model.Package, digest blob.Digest) string {
	var c []string
	for rel, f := range pkg.Files {
		if f.Blob == nil && f.SHA256 == digest {
			c = append(c, rel)
		}
	}
	sort.Slice(c, func(i, j int) bool {
		a, b := strings.HasSuffix(c[i], "components.yaml"), strings.HasSuffix(c[j], "components.yaml")
		if a != b {
			return a
		}
		return c[i] < c[j]
	})
	if len(c) == 0 {
		return ""
	}
	return c[0]
}

// IsYAMLName reports whether a file name or slash path ends in .yaml or
// .yml, in any case: what the loader reads as YAML.
func IsYAMLName(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// nameMatch finds the vendored YAML by name, for unpinned packages whose
// YAML no longer equals the blob: x.yaml.gz ↔ x.yaml; components-talos.gz ↔
// the one *components*.yaml naming talos; components.gz ↔
// <type>-components.yaml, core-components.yaml; else a *components*.yaml
// naming the provider; else the only *components*.yaml.
func nameMatch(pkg *model.Package, blobFile string, provs []*model.Provider) string {
	v := componentsYAMLs(pkg)
	n := parseBlobName(blobFile)
	if n.twin != "" && v.has(n.twin) {
		return n.twin
	}
	if n.suffix != "" {
		if y := v.only(naming(n.suffix)); y != "" {
			return y
		}
	}
	if n.plain {
		if y := v.typed(n.dir, provs); y != "" {
			return y
		}
		if y := path.Join(n.dir, "core-components.yaml"); v.has(y) {
			return y
		}
	}
	for _, pr := range provs {
		if pr.Name == "" {
			continue
		}
		if y := v.only(naming(pr.Name)); y != "" {
			return y
		}
	}
	if blobFile == "" {
		if y := v.typed(n.dir, provs); y != "" {
			return y
		}
	}
	if n.suffix != "" {
		// A suffixed blob (components-talos.gz) whose YAML names no suffix
		// is not the package's one unsuffixed YAML: that belongs to
		// components.gz.
		return ""
	}
	return v.only(func(b string) bool { return strings.HasSuffix(b, "components.yaml") })
}

// blobName is what a blob's file name says of its YAML: the folder it is
// in, its twin (x.yaml for x.yaml.gz), the suffix it names
// (components-talos.gz, talos-components.gz) or none (plain: components.gz).
type blobName struct {
	dir, twin, suffix string
	plain             bool
}

// parseBlobName reads blobFile's name ("": no blob, so dir is files).
func parseBlobName(blobFile string) blobName {
	if blobFile == "" {
		return blobName{dir: "files"}
	}
	n := blobName{dir: path.Dir(blobFile)}
	stem := strings.TrimSuffix(path.Base(blobFile), ".gz")
	if IsYAMLName(stem) {
		n.twin = path.Join(n.dir, stem)
	}
	switch {
	case stem == "components":
		n.plain = true
	case strings.HasPrefix(stem, "components-"):
		n.suffix = strings.TrimPrefix(stem, "components-")
	case strings.HasSuffix(stem, "-components"):
		n.suffix = strings.TrimSuffix(stem, "-components")
	}
	return n
}

// vendoredYAMLs are a package's vendored plain YAML files; components are
// those whose name says components, sorted.
type vendoredYAMLs struct {
	pkg        *model.Package
	components []string
}

func componentsYAMLs(pkg *model.Package) vendoredYAMLs {
	v := vendoredYAMLs{pkg: pkg}
	for rel, f := range pkg.Files {
		if f.Blob == nil && IsYAMLName(rel) && strings.Contains(path.Base(rel), "components") {
			v.components = append(v.components, rel)
		}
	}
	sort.Strings(v.components)
	return v
}

// has reports whether rel is a vendored file that is no blob.
func (v vendoredYAMLs) has(rel string) bool {
	f := v.pkg.Files[rel]
	return f != nil && f.Blob == nil
}

// only is the one components YAML whose base name pred accepts; "" when
// none or several are.
func (v vendoredYAMLs) only(pred func(base string) bool) string {
	var m []string
	for _, y := range v.components {
		if pred(path.Base(y)) {
			m = append(m, y)
		}
	}
	if len(m) == 1 {
		return m[0]
	}
	return ""
}

// typed is dir/<type>-components.yaml of the first provider whose type
// has one.
func (v vendoredYAMLs) typed(dir string, provs []*model.Provider) string {
	for _, pr := range provs {
		if y := path.Join(dir, pr.Type()+"-components.yaml"); pr.Type() != "" && v.has(y) {
			return y
		}
	}
	return ""
}

// naming accepts a components file name that names s.
func naming(s string) func(base string) bool {
	return func(b string) bool { return strings.Contains(b, s) && strings.Contains(b, "components") }
}

// PinOf is the package's pin of provider p: the pin.yaml entry of its kind
// and name, else the one of its release, else a Makefile-assembled pin of
// its upstream version.
func PinOf(pkg *model.Package, p *model.Provider) *pin.Provider {
	if pkg.Pins == nil || pkg.Pins.File == nil {
		return nil
	}
	ps := pkg.Pins.File.Providers
	for i := range ps {
		if ps[i].Kind == p.Kind && ps[i].Name == p.Name {
			return &ps[i]
		}
	}
	for i := range ps {
		if ps[i].Release != "" && ps[i].Release == p.Version {
			return &ps[i]
		}
	}
	for i := range ps {
		if ps[i].Kind == "" && ps[i].Name == "" && pin.MatchesRelease(ps[i].Version, p.Version) {
			return &ps[i]
		}
	}
	return nil
}
