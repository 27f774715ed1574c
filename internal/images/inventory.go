package images

import (
	"path"
	"slices"
	"strconv"

	"github.com/pinseal/pinseal/pkg/model"
)

// Report is `builder images`: every image the providers of the loaded trees
// run (api/images.schema.json).
type Report struct {
	Images []Image `json:"images"`
	// Unique are the distinct references, sorted: what a mirroring script
	// copies.
	Unique []string `json:"unique"`
	// Unread are the workload documents whose images are not listed for
	// sure (model.Package.UnreadWorkloads).
	Unread []Unread `json:"unread,omitempty"`
}

// Unread is a workload document whose images are not listed for sure.
type Unread struct {
	Root    string `json:"root"`
	Package string `json:"package"`
	Kind    string `json:"kind,omitempty"`
	File    string `json:"file"` // slash path relative to root
	Line    int    `json:"line"`
	InBlob  bool   `json:"inBlob,omitempty"`
	Why     string `json:"why"`
	// Error: image-ref reports it as an error (ambiguous, or a value that
	// is no image reference), else as a warning (too large).
	Error bool `json:"error"`
}

// Image is one image reference where it is written.
type Image struct {
	Root       string   `json:"root"`    // the DIR argument the package was found under
	Package    string   `json:"package"` // slash path of the package relative to root
	Providers  []string `json:"providers"`
	Release    string   `json:"release"`
	Ref        string   `json:"ref"`
	Repository string   `json:"repository"`
	Tag        string   `json:"tag,omitempty"`
	Digest     string   `json:"digest,omitempty"`
	Workload   string   `json:"workload"`
	Container  string   `json:"container"`
	File       string   `json:"file"` // slash path relative to root
	Line       int      `json:"line"`
	// InBlob: File is a gzip blob and Line a line of what it inflates to.
	InBlob bool `json:"inBlob"`
}

// Add appends the images of a loaded tree found under root.
func (r *Report) Add(root string, t *model.Tree) {
	for _, p := range t.Packages {
		for _, img := range p.Images {
			ref := Parse(img.Ref)
			provs := img.Providers
			if provs == nil {
				provs = []string{}
			}
			file := img.File
			if p.Path != "" && p.Path != "." {
				file = path.Join(p.Path, img.File)
			}
			r.Images = append(r.Images, Image{Root: root, Package: p.Path, Providers: provs, Release: img.Release,
				Ref: img.Ref, Repository: ref.Repository, Tag: ref.Tag, Digest: ref.Digest,
				Workload: img.Workload, Container: img.Container, File: file, Line: img.Line, InBlob: img.InBlob})
		}
		for _, u := range p.UnreadWorkloads {
			file := u.File
			if p.Path != "" && p.Path != "." {
				file = path.Join(p.Path, u.File)
			}
			r.Unread = append(r.Unread, Unread{Root: root, Package: p.Path, Kind: u.Kind, File: file, Line: u.Line,
				InBlob: u.InBlob, Why: u.Why, Error: u.Error})
		}
	}
	r.Unique = r.Unique[:0]
	for _, img := range r.Images {
		r.Unique = append(r.Unique, img.Ref)
	}
	slices.Sort(r.Unique)
	r.Unique = slices.Compact(r.Unique)
}

// Mismatches returns, per package and release, the references that only
// the YAML or only the blob holds: a blob that differs from its YAML runs
// other images than the ones reviewed.
func (r *Report) Mismatches() []Image {
	type key struct{ root, pkg, release string }
	inYAML, inBlob := map[key]map[string]bool{}, map[key]map[string]bool{}
	for _, img := range r.Images {
		k := key{img.Root, img.Package, img.Release}
		m := inYAML
		if img.InBlob {
			m = inBlob
		}
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][img.Ref] = true
	}
	var out []Image
	for _, img := range r.Images {
		k := key{img.Root, img.Package, img.Release}
		other := inBlob
		if img.InBlob {
			other = inYAML
		}
		// Only when both sides were read: a blob with no vendored YAML is
		// not a mismatch.
		if other[k] != nil && !other[k][img.Ref] {
			out = append(out, img)
		}
	}
	return out
}

// Where is "file:line", with the blob's inflated content marked.
func (i Image) Where() string {
	s := i.File + ":" + strconv.Itoa(i.Line)
	if i.InBlob {
		s += " (inflated)"
	}
	return s
}
