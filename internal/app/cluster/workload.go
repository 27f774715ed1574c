package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pinseal/pinseal/pkg/report"
)

// installedFrom is the ConfigMap the operator installed p from: the
// operator's store of an OCI release, else the match of its selector
// whose version is status.installedVersion (spec.version before the
// first install); nil when there is none, or more than one.
func installedFrom(p *Provider) *ConfigMap {
	if p.FetchOCI != "" {
		if len(p.Stored) == 1 {
			return p.Stored[0]
		}
		return nil
	}
	v := p.InstalledVersion
	if v == "" {
		v = p.Version
	}
	var found *ConfigMap
	for _, cm := range p.Matches {
		if versionOf(cm) == v {
			if found != nil {
				return nil
			}
			found = cm
		}
	}
	return found
}

// components parses what p installed; nil (and no finding) when the
// ConfigMap is missing or ambiguous (cluster-configmap and cluster-oci
// report that), a finding of check id when it cannot be read.
func (in *Input) components(id string, p *Provider) (*Installed, *report.Finding) {
	cm := installedFrom(p)
	if cm == nil {
		return nil, nil
	}
	raw, _, err := content(cm, in.Limit)
	var inst *Installed
	if err == nil {
		inst, err = parseInstalled(raw)
	}
	if err != nil {
		f := in.finding(id, p, p.Namespace,
			fmt.Sprintf("the components %s/%s was installed from cannot be read: %v", p.Kind, p.Name, err),
			fmt.Sprintf("restore ConfigMap %s/%s from the package", cm.Namespace, cm.Name))
		return nil, &f
	}
	return inst, nil
}

// workloads: each provider's Deployments run the images its installed
// components name, with their replicas, both as the provider's own
// customizations (spec.deployment, spec.additionalDeployments) change
// them: the operator applies those itself, so they are no hand edit.
func workloads(in *Input) []report.Finding {
	var out []report.Finding
	for _, p := range in.Snap.Providers {
		if in.denied(CheckWorkload, p.Namespace) {
			continue
		}
		inst, bad := in.components(CheckWorkload, p)
		if bad != nil {
			out = append(out, *bad)
		}
		if inst == nil {
			continue
		}
		for _, want := range inst.Deployments {
			out = append(out, in.deployment(p, want, len(inst.Deployments))...)
		}
	}
	return out
}

// deployment compares the Deployment the components hold (want, one of n),
// customized as p asks, with the one of that name in p's namespace (the
// operator installs the components into the provider's namespace).
func (in *Input) deployment(p *Provider, want *Deployment, n int) []report.Finding {
	i := slices.IndexFunc(in.Snap.Deployments, func(d *Deployment) bool { return d.Namespace == p.Namespace && d.Name == want.Name })
	obj := fmt.Sprintf("Deployment %s/%s", p.Namespace, want.Name)
	if i < 0 {
		return []report.Finding{in.finding(CheckWorkload, p, p.Namespace,
			fmt.Sprintf("%s, which the installed components of release %q hold, is not in the cluster", obj, p.InstalledVersion),
			"let the operator reinstall the provider (delete the provider object's applied-spec-hash annotation) or redeploy it")}
	}
	got := in.Snap.Deployments[i]
	ov, field := overrideFor(p, want.Name, n)
	out := in.containers(p, obj, want, got, ov, field)
	replicas, source := want.Replicas, fmt.Sprintf("the installed components of release %q say", p.InstalledVersion)
	if ov.Replicas != nil {
		replicas, source = ov.Replicas, "the provider's "+field+".replicas says"
	}
	if replicas != nil && got.Replicas != nil && *got.Replicas != *replicas {
		out = append(out, in.finding(CheckWorkload, p, p.Namespace,
			fmt.Sprintf("%s has %d replicas, %s %d", obj, *got.Replicas, source, *replicas),
			"set replicas in the provider's spec.deployment.replicas instead of editing the Deployment"))
	}
	return out
}

// containers compares got's containers with want's, each image as the
// override ov (at field of p) sets it.
func (in *Input) containers(p *Provider, obj string, want, got *Deployment, ov Override, field string) []report.Finding {
	var out []report.Finding
	for _, c := range want.Containers {
		image, source := c.Image, fmt.Sprintf("the installed components of release %q name", p.InstalledVersion)
		if u, ok := ov.Images[c.Name]; ok {
			image, source = u, fmt.Sprintf("the provider's %s.containers[%s].imageUrl names", field, c.Name)
		}
		j := slices.IndexFunc(got.Containers, func(g Container) bool { return g.Name == c.Name })
		switch {
		case j < 0:
			out = append(out, in.finding(CheckWorkload, p, p.Namespace,
				fmt.Sprintf("%s has no container %q, which the installed components of release %q run with image %s", obj, c.Name, p.InstalledVersion, image),
				"redeploy the provider: the Deployment was edited by hand"))
		case got.Containers[j].Image != image:
			out = append(out, in.finding(CheckWorkload, p, p.Namespace,
				fmt.Sprintf("%s container %q runs image %s, %s %s: the Deployment was edited by hand", obj, c.Name, got.Containers[j].Image, source, image),
				"restore the image (the operator does not revert hand edits), set it in the provider's spec.deployment.containers[].imageUrl, or release the new image as a new provider version"))
		}
	}
	for _, g := range got.Containers {
		if !slices.ContainsFunc(want.Containers, func(c Container) bool { return c.Name == g.Name }) {
			out = append(out, in.finding(CheckWorkload, p, p.Namespace,
				fmt.Sprintf("%s runs container %q (image %s), which the installed components of release %q do not hold", obj, g.Name, g.Image, p.InstalledVersion),
				"remove the container added by hand, or release it as a new provider version"))
		}
	}
	return out
}

// crds: every CRD the installed components hold is in the cluster, with
// each version they serve served and the same storage version.
func crds(in *Input) []report.Finding {
	var out []report.Finding
	for _, p := range in.Snap.Providers {
		if in.denied(CheckCRD, "") {
			break
		}
		inst, bad := in.components(CheckCRD, p)
		if bad != nil {
			out = append(out, *bad)
		}
		if inst == nil {
			continue
		}
		for _, want := range inst.CRDs {
			out = append(out, in.crd(p, want)...)
		}
	}
	return out
}

func (in *Input) crd(p *Provider, want *CRD) []report.Finding {
	got := in.Snap.CRDs[want.Name]
	obj := "CustomResourceDefinition " + want.Name
	if got == nil {
		return []report.Finding{in.finding(CheckCRD, p, "",
			fmt.Sprintf("%s, which the installed components of %s/%s release %q hold, is not in the cluster", obj, p.Kind, p.Name, p.InstalledVersion),
			"let the operator reinstall the provider, or apply the CRD from the release")}
	}
	var out []report.Finding
	for _, v := range want.Versions {
		i := slices.IndexFunc(got.Versions, func(g CRDVersion) bool { return g.Name == v.Name })
		switch {
		case i < 0 && v.Served:
			out = append(out, in.finding(CheckCRD, p, "",
				fmt.Sprintf("%s has no version %s, which release %q of %s/%s serves (the cluster has %s): objects of that version cannot be read or written", obj, v.Name, p.InstalledVersion, p.Kind, p.Name, versions(got)),
				"apply the release's CRD; a release that dropped a served version without conversion must not be installed over objects of it"))
		case i >= 0 && v.Served && !got.Versions[i].Served:
			out = append(out, in.finding(CheckCRD, p, "",
				fmt.Sprintf("%s does not serve version %s, which release %q of %s/%s serves", obj, v.Name, p.InstalledVersion, p.Kind, p.Name),
				"apply the release's CRD"))
		case i >= 0 && v.Storage && !got.Versions[i].Storage:
			out = append(out, in.finding(CheckCRD, p, "",
				fmt.Sprintf("%s stores version %s, release %q of %s/%s stores %s", obj, storage(got), p.InstalledVersion, p.Kind, p.Name, storage(want)),
				"apply the release's CRD (and migrate stored objects to its storage version)"))
		}
	}
	return out
}

func versions(c *CRD) string {
	var s []string
	for _, v := range c.Versions {
		s = append(s, v.Name)
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func storage(c *CRD) string {
	for _, v := range c.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return "none"
}
