package admission

import (
	"context"
	"errors"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/pinseal/pinseal/internal/operator"
)

// content is what the operator installs from a components ConfigMap.
type content struct {
	components, metadata string // SHA-256 hex; components inflated
	problem              *Problem
}

// isComponents reports whether the operator would read cm as a provider
// release: it holds components (data or binaryData) or metadata.
func isComponents(cm *corev1.ConfigMap) bool {
	_, d := cm.Data[ComponentsKey]
	_, b := cm.BinaryData[ComponentsKey]
	_, m := cm.Data[MetadataKey]
	return d || b || m
}

// read is what the operator installs from cm: components from
// binaryData when the compressed annotation is exactly "true" (inflated),
// else from data; metadata from data (cluster-api-operator v0.28.0
// internal/controller/phase_lifecycle.go: configmap repository).
func (d *Decider) read(ctx context.Context, cm *corev1.ConfigMap) content {
	var c content
	meta, ok := cm.Data[MetadataKey]
	if !ok {
		c.problem = &Problem{Rule: RuleComponents, Message: "it has no data.metadata, which the operator requires",
			Fix: "install the release as built: data.metadata is the release's metadata.yaml"}
		return c
	}
	c.metadata = sum([]byte(meta))
	if cm.Annotations[CompressedAnnotation] == "true" {
		gz, ok := cm.BinaryData[ComponentsKey]
		if !ok {
			c.problem = &Problem{Rule: RuleComponents, Message: "it is annotated " + CompressedAnnotation + ": \"true\" but has no binaryData.components",
				Fix: "put the release's components.gz under binaryData.components"}
			return c
		}
		h, err := inflated(ctx, gz, d.InflateLimit)
		if err != nil {
			fix := "put the release's components.gz (one complete gzip stream) under binaryData.components"
			if errors.Is(err, errLimit) {
				fix = "a provider release inflates to a few MB; this is not one"
			}
			c.problem = &Problem{Rule: RuleComponents, Message: fmt.Sprintf("binaryData.components does not inflate: %v", err), Fix: fix}
			return c
		}
		c.components = h
		return c
	}
	comp, ok := cm.Data[ComponentsKey]
	if !ok {
		c.problem = &Problem{Rule: RuleComponents, Message: "it has no data.components (and is not annotated " + CompressedAnnotation + ": \"true\" for binaryData.components)",
			Fix: "install the release as built: binaryData.components with the compressed annotation, or data.components"}
		return c
	}
	c.components = sum([]byte(comp))
	return c
}

// ReleaseOf is which release of which provider a components ConfigMap
// with name and labels holds: id is <type>-<name>, from the identity label,
// else the labels of the operator's own store of a fetched release
// (operator.StoreLabels), "" when neither; release is the operator's name
// for it, the version label, else the ConfigMap's name.
func ReleaseOf(name string, labels map[string]string) (id, release string) {
	id = labels[IdentityLabel]
	if t, n := labels[operator.LabelType], labels[operator.LabelName]; id == "" && t != "" && n != "" {
		id = t + "-" + n
	}
	release = labels[operator.LabelVersion]
	if release == "" {
		release = name
	}
	return id, release
}

func identity(cm *corev1.ConfigMap) string {
	id, _ := ReleaseOf(cm.Name, cm.Labels)
	return id
}

func release(cm *corev1.ConfigMap) string {
	_, rel := ReleaseOf(cm.Name, cm.Labels)
	return rel
}

func (d *Decider) configMap(ctx context.Context, req *admissionv1.AdmissionRequest) Verdict {
	var cm corev1.ConfigMap
	if p := decode(req.Object.Raw, &cm, "the ConfigMap"); p != nil {
		return Verdict{Problems: []Problem{*p}}
	}
	v := Verdict{Object: "ConfigMap " + objectName(firstNonEmpty(cm.Namespace, req.Namespace), firstNonEmpty(cm.Name, req.Name))}
	if !isComponents(&cm) {
		v.Key = d.key("configmap-other")
		return v
	}
	c := d.read(ctx, &cm)
	id, rel := identity(&cm), release(&cm)
	v.Key = d.key("configmap", string(req.Operation), id, rel, c.components, c.metadata, cm.Annotations[CompressedAnnotation])

	if req.Operation == admissionv1.Update {
		var old corev1.ConfigMap
		if decode(req.OldObject.Raw, &old, "the old ConfigMap") == nil && isComponents(&old) {
			oc := d.read(ctx, &old)
			v.Key = d.key(v.Key, oc.components, oc.metadata, release(&old))
			if release(&old) == rel && (oc.components != c.components || oc.metadata != c.metadata) {
				v.Problems = append(v.Problems, Problem{Rule: RuleEdit,
					Message: fmt.Sprintf("it changes the components or metadata of release %s in place: clusters that installed %s never get the change (the operator installs a release once)", rel, rel),
					Fix:     "build the change as a new release (builder bump or a new release name) and point spec.version at it; leave this ConfigMap as it was"})
			}
		}
	}
	if c.problem != nil {
		v.Problems = append(v.Problems, *c.problem)
		return v
	}
	if id == "" {
		v.Problems = append(v.Problems, Problem{Rule: RuleIdentity,
			Message: "it holds provider components but does not say which provider's release they are, so no signed release can vouch for them",
			Fix:     fmt.Sprintf("label it %s: <type>-<name> (e.g. core-cluster-api, infrastructure-proxmox): the repository its release is published in", IdentityLabel)})
		return v
	}
	if !semver(rel) {
		v.Problems = append(v.Problems, Problem{Rule: RuleVersion,
			Message: fmt.Sprintf("its release name %q (the %s label, else the ConfigMap's name) is not a semantic version, so the operator cannot install it", rel, operator.LabelVersion),
			Fix:     "name the ConfigMap after the release it holds (e.g. v1.10.1-core), as builder writes it"})
		return v
	}
	vouched, p, unverified := d.vouch(ctx, id, rel, c.components, c.metadata, "the ConfigMap's content")
	if unverified {
		v.Key = ""
	}
	if p != nil {
		v.Problems = append(v.Problems, *p)
	}
	v.Vouched = vouched
	return v
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
