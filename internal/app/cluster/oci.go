package cluster

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// OCIResult is the registry side of one fetchConfig.oci provider: the
// artifact at the tag it fetches, as `verifier verify` verifies it.
type OCIResult struct {
	// Ref is REPO:TAG of the artifact.
	Ref string
	// Refused says why the registry was not contacted (not allowed, or
	// a value the operator cannot read either); "" when it was.
	Refused string
	// Err says why the artifact could not be read at all.
	Err string
	// Artifact is what was read (nil with Refused or Err).
	Artifact *model.Artifact
	// Report is the verification's report (signature, provenance, the
	// artifact's inside), whose findings are the provider's too.
	Report *report.Report
}

// ociCopies: the operator's copy of each fetchConfig.oci release (the
// ConfigMap it stored the artifact in, once) holds what the registry
// artifact at that tag holds now, and that artifact verifies (signature
// and provenance under the policy).
func ociCopies(in *Input) []report.Finding {
	var out []report.Finding
	for _, p := range in.Snap.Providers {
		r := in.OCI[p]
		if p.FetchOCI == "" || r == nil {
			continue
		}
		switch {
		case r.Refused != "":
			out = append(out, in.finding(CheckOCI, p, p.Namespace,
				fmt.Sprintf("%s/%s installs from %s, which was not contacted: %s", p.Kind, p.Name, r.Ref, r.Refused),
				"allow that registry (--registry or --allow-registry) to compare the cluster's copy with it"))
			continue
		case r.Err != "":
			out = append(out, in.finding(CheckOCI, p, p.Namespace,
				fmt.Sprintf("the artifact %s/%s installs from, %s, could not be read: %s", p.Kind, p.Name, r.Ref, r.Err),
				"push the release to the registry, or point spec.fetchConfig.oci at where it is"))
			continue
		}
		out = append(out, in.verified(p, r)...)
		if in.denied(CheckOCI, p.Namespace) {
			continue
		}
		switch len(p.Stored) {
		case 0:
			if p.InstalledVersion != "" {
				out = append(out, in.finding(CheckOCI, p, p.Namespace,
					fmt.Sprintf("no ConfigMap in namespace %s holds the operator's copy of %s (release %q): the operator fetches it again on its next install", p.Namespace, r.Ref, p.Version),
					"nothing to do unless the operator fails to fetch; then look at its log"))
			}
			continue
		case 1:
		default:
			out = append(out, in.finding(CheckOCI, p, p.Namespace,
				fmt.Sprintf("%d ConfigMaps in namespace %s (%s) carry the labels of the operator's copy of release %q: the operator fails the provider", len(p.Stored), p.Namespace, names(p.Stored), p.Version),
				"delete all but the operator's own copy"))
		}
		for _, cm := range p.Stored {
			out = append(out, in.ociCopy(p, cm, r)...)
		}
	}
	return out
}

// ociCopy compares one stored copy with the artifact's layers: the raw
// components YAML layer the operator installs, and metadata.yaml.
func (in *Input) ociCopy(p *Provider, cm *ConfigMap, r *OCIResult) []report.Finding {
	a := r.Artifact
	var diffs []string
	got, _, err := content(cm, in.Limit)
	switch {
	case err != nil:
		diffs = append(diffs, "components: "+err.Error())
	case !model.SameSHA256(sha(got).String(), a.YAMLSHA256):
		diffs = append(diffs, fmt.Sprintf("components %s, the artifact's layer %s %s", sha(got), a.YAMLTitle, a.YAMLSHA256))
	}
	if !model.SameSHA256(sha(cm.Metadata).String(), a.MetadataSHA256) {
		diffs = append(diffs, fmt.Sprintf("metadata %s, the artifact's %s", sha(cm.Metadata), a.MetadataSHA256))
	}
	if len(diffs) == 0 {
		return nil
	}
	return []report.Finding{in.finding(CheckOCI, p, p.Namespace,
		fmt.Sprintf("ConfigMap %s/%s, the operator's copy of %s, differs from what the tag holds now (%s): the tag was moved after the operator's copy, which it never fetches again: %s",
			cm.Namespace, cm.Name, r.Ref, a.Digest, joinDiffs(diffs)),
		"release the new content under a new version (tags of releases must not move), or delete the copy so the operator fetches the tag again")}
}

func joinDiffs(d []string) string {
	s := d[0]
	for _, x := range d[1:] {
		s += "; " + x
	}
	return s
}

// verified re-homes the artifact verification's findings onto the
// cluster's provider.
func (in *Input) verified(p *Provider, r *OCIResult) []report.Finding {
	if r.Report == nil {
		return nil
	}
	var out []report.Finding
	for _, f := range r.Report.Findings {
		f.Package, f.Provider, f.File, f.Line = in.where(p.Namespace), p.ID(), "", 0
		f.Message = fmt.Sprintf("artifact %s (installed by %s/%s): %s", r.Ref, p.Kind, p.Name, f.Message)
		f.Severity, f.Waiver = "", nil
		out = append(out, f)
	}
	return out
}
