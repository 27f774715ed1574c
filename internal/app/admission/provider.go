package admission

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/pkg/remote"
)

// providerObject is what the decisions read of a provider object
// (operator.cluster.x-k8s.io/v1alpha2, every kind).
type providerObject struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Version     string `json:"version"`
		FetchConfig *struct {
			URL      string `json:"url"`
			OCI      string `json:"oci"`
			Selector *struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
		} `json:"fetchConfig"`
	} `json:"spec"`
}

func (d *Decider) provider(ctx context.Context, req *admissionv1.AdmissionRequest) Verdict {
	kind := req.Kind.Kind
	var p providerObject
	if pr := decode(req.Object.Raw, &p, "the "+kind); pr != nil {
		return Verdict{Problems: []Problem{*pr}}
	}
	name := firstNonEmpty(p.Metadata.Name, req.Name)
	v := Verdict{Object: kind + " " + objectName(firstNonEmpty(p.Metadata.Namespace, req.Namespace), name)}
	spec := operator.Spec{Kind: kind, Name: name, Version: p.Spec.Version}
	if fc := p.Spec.FetchConfig; fc != nil {
		spec.OCI, spec.URL, spec.Selector = fc.OCI, fc.URL, fc.Selector != nil
	}
	raw, _ := json.Marshal(p.Spec)
	v.Key = d.key("provider", kind, name, string(raw))
	typ := operator.Types(kind)[0].Type
	id := typ + "-" + name

	switch {
	case spec.OCI != "":
		v.Problems, v.Vouched = d.oci(ctx, spec, &v)
	case spec.Selector:
		if got := p.Spec.FetchConfig.Selector.MatchLabels[IdentityLabel]; got != id {
			v.Problems = append(v.Problems, Problem{Rule: RuleSelector,
				Message: fmt.Sprintf("spec.fetchConfig.selector does not require %s=%s, so it can select a ConfigMap the webhook never judged (one created before it, or labelled otherwise)", IdentityLabel, id),
				Fix:     fmt.Sprintf("add %s: %s to spec.fetchConfig.selector.matchLabels and to the release's ConfigMap", IdentityLabel, id)})
		}
	default:
		v.Problems, v.Vouched = d.download(spec)
	}
	return v
}

// oci decides a provider that installs from spec.fetchConfig.oci.
func (d *Decider) oci(ctx context.Context, spec operator.Spec, v *Verdict) ([]Problem, string) {
	var out []Problem
	for _, pr := range operator.Check(spec) {
		if pr.Warning {
			continue
		}
		out = append(out, Problem{Rule: RuleOCI,
			Message: fmt.Sprintf("spec.fetchConfig.oci %q: %s (operator rule %s)", spec.OCI, pr.Message, pr.Rule),
			Fix:     pr.Hint})
	}
	if len(out) > 0 {
		return out, ""
	}
	src, err := operator.ParseSource(spec.OCI, spec.Version)
	if err != nil { // operator.Check reported it
		return []Problem{{Rule: RuleOCI, Message: err.Error(), Fix: operator.FormHint}}, ""
	}
	if !remote.Allowed(src.Repository, d.registries()) {
		return []Problem{{Rule: RuleOCI,
			Message: fmt.Sprintf("spec.fetchConfig.oci points at %s, outside the registries the admission policy trusts (%v)", src.Repository, d.registries()),
			Fix:     "publish the release with builder push under a trusted prefix and point spec.fetchConfig.oci there, or add the prefix to admission.registries in the policy"}}, ""
	}
	if d.Releases == nil {
		return []Problem{{Rule: RuleUnsigned, Message: "no registry is configured to look the release up", Fix: "configure admission in the service"}}, ""
	}
	r, err := d.Releases.Lookup(ctx, src.Ref())
	if err != nil {
		v.Key = ""
		return []Problem{{Rule: RuleUnverified, Message: fmt.Sprintf("could not check %s: %v", src.Ref(), err),
			Fix: "retry once the registry answers; if it is slow, raise the webhook's timeoutSeconds (at most 30)"}}, ""
	}
	if r.Problem != "" {
		return []Problem{{Rule: RuleUnsigned, Message: fmt.Sprintf("the operator would install %s: %s", src.Ref(), r.Problem), Fix: r.Fix}}, ""
	}
	if r.Kind != spec.Kind || r.Name != spec.Name {
		return []Problem{{Rule: RuleContent,
			Message: fmt.Sprintf("%s@%s is the signed release of %s/%s, not of %s/%s", r.Ref, r.Digest, r.Kind, r.Name, spec.Kind, spec.Name),
			Fix:     "point spec.fetchConfig.oci at this provider's own repository"}}, ""
	}
	return nil, r.Ref + "@" + r.Digest
}

// download decides a provider the operator downloads at install time.
func (d *Decider) download(spec operator.Spec) ([]Problem, string) {
	var from string
	if spec.URL != "" {
		from = "spec.fetchConfig.url " + spec.URL
	} else {
		dl, ok := operator.DefaultDownload(spec.Kind, spec.Name, spec.Version)
		if !ok {
			return []Problem{{Rule: RuleDownload, Message: dl.Problem,
				Fix: "install it from a signed release: spec.fetchConfig.oci or a labelled ConfigMap (builder vendor makes one)"}}, ""
		}
		from = "clusterctl's built-in repository " + dl.Repository
	}
	if d.Policy != nil && d.Policy.Admission != nil {
		for _, pin := range d.Policy.Admission.Pinned {
			if pin.Kind == spec.Kind && pin.Name == spec.Name && pin.Version == spec.Version && pin.URL == spec.URL {
				return nil, fmt.Sprintf("policy pin (components sha256:%s)", short(pin.Components))
			}
		}
	}
	release := spec.Version
	if release == "" {
		release = "the latest release (no spec.version)"
	}
	return []Problem{{Rule: RuleDownload,
		Message: fmt.Sprintf("the operator downloads %s from %s at install time: nothing signed vouches for those bytes and the release can be replaced upstream", release, from),
		Fix:     "install it from a signed release (builder vendor makes a ConfigMap package, builder push an OCI artifact), or pin its bytes under admission.pinned in the policy"}}, ""
}
