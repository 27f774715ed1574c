package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
)

// MovingTags are the tags image-ref always reads as moving: registries
// repoint them at every push. A reference with no tag and no digest means
// latest. A policy adds its own (policy movingTags), given to Builtin.
var MovingTags = []string{"latest", "main", "master"}

// imageRefCheck is the image-ref catalog entry with extra moving tags on
// top of MovingTags.
func imageRefCheck(extra []string) Check {
	c, _ := Lookup(ImageRef)
	moving := append(slices.Clone(MovingTags), extra...)
	c.Run = func(in *Input) []report.Finding { return imageRef(in, moving) }
	return c
}

func imageRefDefault(in *Input) []report.Finding { return imageRef(in, MovingTags) }

// imageRef: every image the components run is pinned by digest or on a tag
// that does not move; a digest-pinned image of the provider itself carries
// the release's version as its tag.
func imageRef(in *Input, moving []string) []report.Finding {
	t := in.Tree
	var out []report.Finding
	for _, pkg := range t.Packages {
		for _, img := range pkg.Images {
			ref := images.Parse(img.Ref)
			where := imageWhere(img)
			provider := strings.Join(img.Providers, ", ")
			switch {
			case ref.Digest == "" && (ref.Tag == "" || slices.Contains(moving, ref.Tag)):
				tag := "no tag (it means latest)"
				if ref.Tag != "" {
					tag = fmt.Sprintf("the moving tag %q", ref.Tag)
				}
				out = append(out, newFinding(ImageRef, pkg, provider, img.Location,
					fmt.Sprintf("image %q %s has no digest and %s: what the cluster runs changes whenever the tag is pushed again", img.Ref, where, tag),
					fmt.Sprintf("pin it by digest (%s@sha256:…, from `crane digest %s`) or use a release tag, in the vendored YAML and the blob alike (`builder build %s` rebuilds the blob from the YAML); if upstream ships it so, report it upstream and patch it (pin.yaml patches)", ref.Repository, img.Ref, pkg.CommandPath())))
			case ref.Digest != "" && ref.Tag != "" && ownImage(ref.Repository, img.Providers) &&
				pin.ReleaseVersion(ref.Tag) != "" && pin.ReleaseVersion(img.Release) != "" && !pin.MatchesRelease(ref.Tag, img.Release):
				f := newFinding(ImageRef, pkg, provider, img.Location,
					fmt.Sprintf("image %q %s is pinned by digest but its tag %q is not the release %s: the digest may be of another version than the tag says", img.Ref, where, ref.Tag, img.Release),
					fmt.Sprintf("check which version the digest is (`crane digest %s:%s`) and write the tag that matches it", ref.Repository, pin.ReleaseVersion(img.Release)))
				f.Severity = report.Warning
				out = append(out, f)
			}
		}
		out = append(out, unreadWorkloads(pkg)...)
	}
	return out
}

// unreadWorkloads: a workload document whose images were not read is a
// warning, since what it runs was neither listed nor checked; one YAML
// readers read differently, or an image value that is no reference, is an
// error: the verdict on what the cluster runs cannot be given.
func unreadWorkloads(pkg *model.Package) []report.Finding {
	var out []report.Finding
	for _, u := range pkg.UnreadWorkloads {
		doc := "a workload document"
		if u.Kind != "" {
			doc = "a " + u.Kind + " document"
		}
		where := fmt.Sprintf("%s:%d", u.File, u.Line)
		if u.InBlob {
			where += fmt.Sprintf(" (line %d of what the blob inflates to)", u.Line)
		}
		hint := u.Hint
		if hint == "" {
			hint = "look at that document: a workload's pod template is a few KiB, and a document this large usually carries data (a huge flow list, an embedded file) that does not belong in it"
		}
		if u.Error {
			out = append(out, newFinding(ImageRef, pkg, strings.Join(u.Providers, ", "), u.Location,
				fmt.Sprintf("%s at %s cannot be listed for sure: %s; the images the cluster runs may not be the ones listed and checked", doc, where, u.Why), hint))
			continue
		}
		f := newFinding(ImageRef, pkg, strings.Join(u.Providers, ", "), u.Location,
			fmt.Sprintf("%s at %s was not read for images (%s): the images it runs are neither listed nor checked", doc, where, u.Why), hint)
		f.Severity = report.Warning
		out = append(out, f)
	}
	return out
}

// imageWhere says which workload runs an image and whether the line is in
// a blob's inflated content.
func imageWhere(img model.Image) string {
	s := fmt.Sprintf("(%s, container %s", img.Workload, img.Container)
	if img.InBlob {
		s += fmt.Sprintf(", line %d of what the blob inflates to", img.Line)
	}
	return s + ")"
}

// ownImage reports whether repository is the provider's own image: its
// path names the provider (cluster-api-controller for core cluster-api,
// kubeadm-bootstrap-controller for kubeadm). Sidecars (kube-rbac-proxy)
// have versions of their own and are not compared with the release.
func ownImage(repository string, providers []string) bool {
	path := repository
	if i := strings.Index(path, "/"); i >= 0 {
		path = path[i+1:]
	}
	for _, p := range providers {
		_, name, _ := strings.Cut(p, "/")
		if name != "" && strings.Contains(strings.ToLower(path), strings.ToLower(name)) {
			return true
		}
	}
	return false
}
