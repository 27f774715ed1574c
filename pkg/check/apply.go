package check

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/pinseal/pinseal/pkg/model"
	"github.com/pinseal/pinseal/pkg/report"
)

// ExternalKinds are the kinds components-apply takes as served by CRDs a
// cluster installs beside the providers (GROUP/VERSION/KIND): cert-manager's,
// which every provider with webhooks needs. A policy's externalKinds add to
// them.
var ExternalKinds = []string{"cert-manager.io/v1/Certificate", "cert-manager.io/v1/Issuer", "cert-manager.io/v1/ClusterIssuer"}

// builtinKinds are the kinds a Kubernetes API server of the versions
// Cluster API supports serves itself, by group/version, as provider
// components use them (core, apps, rbac, admission, apiextensions,
// policy, networking, batch, coordination, scheduling, autoscaling,
// storage, discovery, certificates, flowcontrol, apiregistration).
var builtinKinds = map[string][]string{
	"v1": {"Namespace", "ServiceAccount", "Service", "ConfigMap", "Secret", "Pod", "Endpoints", "PersistentVolume",
		"PersistentVolumeClaim", "LimitRange", "ResourceQuota", "ReplicationController", "PodTemplate", "Event"},
	"apps/v1":                         {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ControllerRevision"},
	"batch/v1":                        {"Job", "CronJob"},
	"rbac.authorization.k8s.io/v1":    {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"},
	"admissionregistration.k8s.io/v1": {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"},
	"apiextensions.k8s.io/v1":         {"CustomResourceDefinition"},
	"apiregistration.k8s.io/v1":       {"APIService"},
	"policy/v1":                       {"PodDisruptionBudget"},
	"networking.k8s.io/v1":            {"NetworkPolicy", "Ingress", "IngressClass"},
	"coordination.k8s.io/v1":          {"Lease"},
	"scheduling.k8s.io/v1":            {"PriorityClass"},
	"autoscaling/v1":                  {"HorizontalPodAutoscaler"},
	"autoscaling/v2":                  {"HorizontalPodAutoscaler"},
	"storage.k8s.io/v1":               {"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment"},
	"discovery.k8s.io/v1":             {"EndpointSlice"},
	"certificates.k8s.io/v1":          {"CertificateSigningRequest"},
	"node.k8s.io/v1":                  {"RuntimeClass"},
	"flowcontrol.apiserver.k8s.io/v1": {"FlowSchema", "PriorityLevelConfiguration"},
}

// removedVersions are built-in group/versions API servers no longer serve,
// with the Kubernetes release that stopped serving them.
var removedVersions = map[string]string{
	"extensions/v1beta1": "1.16/1.22", "apps/v1beta1": "1.16", "apps/v1beta2": "1.16",
	"rbac.authorization.k8s.io/v1beta1": "1.22", "admissionregistration.k8s.io/v1beta1": "1.22",
	"apiextensions.k8s.io/v1beta1": "1.22", "apiregistration.k8s.io/v1beta1": "1.22",
	"networking.k8s.io/v1beta1": "1.22", "scheduling.k8s.io/v1beta1": "1.22", "coordination.k8s.io/v1beta1": "1.22",
	"policy/v1beta1": "1.25", "batch/v1beta1": "1.25", "discovery.k8s.io/v1beta1": "1.25",
	"autoscaling/v2beta1": "1.25", "autoscaling/v2beta2": "1.26", "flowcontrol.apiserver.k8s.io/v1beta2": "1.29",
	"storage.k8s.io/v1beta1": "1.22/1.27", "certificates.k8s.io/v1beta1": "1.22",
}

func componentsApplyCheck(external []string) Check {
	c, _ := Lookup(ComponentsApply)
	ext := append(slices.Clone(ExternalKinds), external...)
	c.Run = func(in *Input) []report.Finding { return componentsApply(in, ext) }
	return c
}

func componentsApplyDefault(in *Input) []report.Finding { return componentsApply(in, ExternalKinds) }

// servedKinds is a set of GROUP/VERSION/KIND keys ("" group: VERSION/KIND).
type servedKinds map[string]bool

func gvk(apiVersion, kind string) string { return apiVersion + "/" + kind }

// addCRD records the kinds a CRD serves; a CRD that does not decode
// serves none (its own finding says so).
func (s servedKinds) addCRD(v *model.CRDVerdict) {
	for _, k := range v.Kinds {
		s[k] = true
	}
}

// crdV1 is the API version of the CRDs the API server judges; CRDs of
// other versions only serve kinds.
const crdV1 = "apiextensions.k8s.io/v1"

// CRDFacts is what a CRDMemo keeps of one CustomResourceDefinition
// document: the object its bytes parse to (Line relative to the
// document's first line) and components-apply's verdict on it.
type CRDFacts struct {
	APIVersion string   `json:"a,omitempty"`
	Name       string   `json:"n,omitempty"`
	Namespace  string   `json:"s,omitempty"`
	Line       int      `json:"l,omitempty"`
	Decoded    bool     `json:"d,omitempty"`
	Kinds      []string `json:"k,omitempty"`
	Refusal    string   `json:"r,omitempty"`
}

// CRDMemo keeps CRDFacts across runs, by the SHA-256 of a CRD document's
// bytes (the whole input of the facts; the keeper adds this build's
// identity to its own key). Recall and Remember are called from several
// goroutines.
type CRDMemo interface {
	Recall(sum [32]byte) (CRDFacts, bool)
	Remember(sum [32]byte, f CRDFacts)
}

// CRDJudge judges the CustomResourceDefinition documents of a tree while
// its packages load (the loader's load.Options.CRDs), so that the model
// keeps each one's verdict and not its text: what the memo remembers is
// believed, and each document is judged once a process (packages that
// share a CRD share its verdict). Safe for concurrent use.
type CRDJudge struct {
	memo CRDMemo
	seen sync.Map // [32]byte -> CRDFacts
}

// NewCRDJudge is a CRDJudge that remembers across runs in memo (nil: only
// within the process).
func NewCRDJudge(memo CRDMemo) *CRDJudge { return &CRDJudge{memo: memo} }

// Recall is the object, its verdict set, that the document whose bytes
// have SHA-256 sum parsed to when it was judged before.
func (j *CRDJudge) Recall(sum [32]byte) (model.AppliedObject, bool) {
	if f, ok := j.seen.Load(sum); ok {
		return f.(CRDFacts).object(), true
	}
	if j.memo == nil {
		return model.AppliedObject{}, false
	}
	f, ok := j.memo.Recall(sum)
	if !ok {
		return model.AppliedObject{}, false
	}
	j.seen.Store(sum, f)
	return f.object(), true
}

// Judge judges the CRD o (Line relative to its document) from its JSON
// (nil when the document does not decode as JSON) and remembers the
// verdict under sum, the SHA-256 of the document's bytes. A panic of the
// API server's code is the CRD's refusal (never remembered), so the rest
// of its package still loads.
func (j *CRDJudge) Judge(sum [32]byte, o model.AppliedObject, crd []byte) (v *model.CRDVerdict) {
	defer func() {
		if r := recover(); r != nil {
			v = &model.CRDVerdict{Decoded: crd != nil, Refusal: fmt.Sprintf("internal error while judging it: %v (report this as a pinseal bug with the CRD attached)", r)}
		}
	}()
	v = judgeCRD(crd, o.APIVersion == crdV1)
	f := CRDFacts{APIVersion: o.APIVersion, Name: o.Name, Namespace: o.Namespace, Line: o.Line,
		Decoded: v.Decoded, Kinds: v.Kinds, Refusal: v.Refusal}
	j.seen.Store(sum, f)
	if j.memo != nil {
		j.memo.Remember(sum, f)
	}
	return v
}

func (f CRDFacts) object() model.AppliedObject {
	return model.AppliedObject{APIVersion: f.APIVersion, Kind: "CustomResourceDefinition", Name: f.Name, Namespace: f.Namespace,
		Location: model.Location{Line: f.Line}, CRD: &model.CRDVerdict{Decoded: f.Decoded, Kinds: f.Kinds, Refusal: f.Refusal}}
}

// judgeCRD decodes raw (JSON; nil when the document did not decode as
// JSON) once, as the API server decodes a request's body (decodeCRD):
// the kinds it serves and, when judge, the API server's answer to the
// operator's applying it.
func judgeCRD(raw []byte, judge bool) *model.CRDVerdict {
	if raw == nil {
		v := &model.CRDVerdict{}
		if judge {
			v.Refusal = "it does not decode as a Kubernetes object"
		}
		return v
	}
	v := &model.CRDVerdict{Decoded: true}
	if judge {
		if v1, crd, ok := fastInternalCRD(raw); ok {
			v.Kinds = kindsServed(v1)
			v.Refusal = validateCRD(crd)
			return v
		}
	}
	var v1 apiextv1.CustomResourceDefinition
	unknown, err := decodeCRD(raw, &v1)
	if err != nil {
		if judge {
			v.Refusal = fmt.Sprintf("it does not decode: %v", err)
		}
		return v
	}
	v.Kinds = kindsServed(&v1)
	if judge {
		v.Refusal = refusal(crdRefusalOf(&v1), unknown)
	}
	return v
}

// kindsServed lists the kinds (gvk) the CRD v1 serves.
func kindsServed(v1 *apiextv1.CustomResourceDefinition) []string {
	var kinds []string
	for _, ver := range v1.Spec.Versions {
		if ver.Served {
			kinds = append(kinds, gvk(v1.Spec.Group+"/"+ver.Name, v1.Spec.Names.Kind))
		}
	}
	return kinds
}

// decodeCRD decodes the JSON raw into v1 as the API server decodes a
// CustomResourceDefinition in a create's or a patch's body, and returns
// the fields it does not know. Keys match field names case-sensitively (a
// key that matches only by case, like openAPIv3Schema for
// openAPIV3Schema, is an unknown field), unknown fields are dropped, a
// duplicate key's last value wins, and numbers decoded into untyped
// values keep their integers (sigs.k8s.io/json, which k8s.io/apimachinery
// v0.37.2 pkg/runtime/serializer/json/json.go unmarshal calls; its strict
// check of unknown fields does not change what is stored). Duplicate keys
// are no refusal, and so not looked for: the API server warns of them
// under the Warn field validation it takes when a request names none
// (k8s.io/apiserver v0.37.0 pkg/endpoints/handlers/rest.go
// fieldValidation, create.go), as the operator's requests do, and warns
// of them under server-side apply too.
func decodeCRD(raw []byte, v1 *apiextv1.CustomResourceDefinition) (unknown []error, err error) {
	return kjson.UnmarshalStrict(raw, v1, kjson.DisallowUnknownFields)
}

// refusal is the finding's text for a CRD whose validation errors are
// invalid ("" when it validates) and whose unknown fields are unknown, ""
// when the operator can apply it. An unknown field is
// a refusal though a create only drops it (with a warning): the
// cluster-api-operator creates components through clusterctl
// (sigs.k8s.io/cluster-api v1.12.10 cmd/clusterctl/client/cluster/components.go
// createObj, no fieldValidation), and then on every later reconcile
// while its cache is current applies the components it cached
// server-side (cluster-api-operator v0.28.0
// internal/controller/genericprovider_controller.go
// applyManifestsFromData), which the API server, under the field
// validation the operator asks for (none: Warn), refuses for a field its
// schema does not declare. Within a schema the API server decodes by
// hand (items, additionalProperties: apiextensions v1 marshal.go) it
// drops unknown keys without a word on either path, and so do
// decodeCRD and the judge.
func refusal(invalid string, unknown []error) string {
	if len(unknown) == 0 {
		return invalid
	}
	fields := quoteErrors(unknown)
	if invalid != "" {
		return invalid + " (the API server drops what it does not know before it validates: " + fields + ")"
	}
	return "the operator's server-side apply of it is refused: " + fields +
		" (a create drops these fields with a warning, but the operator applies its cached components server-side on every later reconcile, and the API server refuses a field its schema does not declare)"
}

// componentsApply: every object of a release's components is one the API
// server accepts when the operator applies it: each CRD passes the API
// server's own validation (k8s.io/apiextensions-apiserver), and each
// object's kind is served (built in, by a CRD of the core provider's or
// the release's own components, or by an external CRD the policy names).
func componentsApply(in *Input, external []string) []report.Finding {
	t := in.Tree
	core := servedKinds{}
	hasCore := false
	for _, pkg := range t.Packages {
		for _, o := range pkg.Applied {
			if o.CRD != nil && o.CRD.Decoded && slices.ContainsFunc(o.Providers, func(p string) bool { return strings.HasPrefix(p, "CoreProvider/") }) {
				hasCore = true
				core.addCRD(o.CRD)
			}
		}
	}
	ext := servedKinds{}
	for _, k := range external {
		ext[k] = true
	}
	var out []report.Finding
	for _, pkg := range t.Packages {
		own := map[string]servedKinds{}
		for _, o := range pkg.Applied {
			if o.CRD != nil && o.CRD.Decoded {
				if own[o.Release] == nil {
					own[o.Release] = servedKinds{}
				}
				own[o.Release].addCRD(o.CRD)
			}
		}
		for _, o := range pkg.Applied {
			owner := strings.Join(o.Providers, ", ")
			if o.Kind == "CustomResourceDefinition" && o.APIVersion == crdV1 {
				if o.CRD == nil {
					out = append(out, newFinding(ComponentsApply, pkg, owner, o.Location,
						fmt.Sprintf("release %s: CustomResourceDefinition %q was not judged: the tree was loaded without a CRD judge (load.Options.CRDs)", o.Release, o.Name),
						"load the tree with verify.Run, or set load.Options.CRDs to check.NewCRDJudge(nil): this is a bug of the program that loaded it"))
					continue
				}
				if msg := o.CRD.Refusal; msg != "" {
					out = append(out, newFinding(ComponentsApply, pkg, owner, o.Location,
						fmt.Sprintf("release %s: the API server refuses CustomResourceDefinition %q: %s", o.Release, o.Name, msg),
						"fix the CRD upstream or in a patch (patches/, then `builder build`): a CRD the API server refuses installs nothing of the release, and the operator retries it for ever"))
				}
				continue
			}
			k := gvk(o.APIVersion, o.Kind)
			if own[o.Release][k] || core[k] || ext[k] || slices.Contains(builtinKinds[o.APIVersion], o.Kind) {
				continue
			}
			group, _, _ := strings.Cut(o.APIVersion, "/")
			if !hasCore && strings.HasSuffix(group, "cluster.x-k8s.io") {
				continue // the core provider's kinds, and the tree has none to read them from
			}
			msg := fmt.Sprintf("release %s: %s %q (%s): no API the cluster has serves this kind", o.Release, o.Kind, o.Name, o.APIVersion)
			hint := "add the CRD that serves it to the components, or name it in the policy's externalKinds (GROUP/VERSION/KIND) when the cluster installs it otherwise"
			if when, ok := removedVersions[o.APIVersion]; ok {
				msg = fmt.Sprintf("release %s: %s %q (%s): Kubernetes stopped serving %s in %s", o.Release, o.Kind, o.Name, o.APIVersion, o.APIVersion, when)
				hint = "use the kind's current API version"
			} else if _, ok := builtinKinds[o.APIVersion]; ok {
				msg += ": the API server serves no such kind in " + o.APIVersion
			}
			out = append(out, newFinding(ComponentsApply, pkg, owner, o.Location, msg, hint))
		}
	}
	return out
}

// maxCRDErrors is how many of a CRD's field errors a finding quotes.
const maxCRDErrors = 4

// crdRefusalOf is the API server's answer to creating the CRD v1 (as
// decoded from its JSON; defaulted in place), "" when it accepts it:
// defaulted as v1 and converted to the internal version by the functions
// the API server's scheme registers for them (called directly: the
// scheme's lookup by type is work for nothing), prepared as for a
// create (status cleared, the storage version stored:
// customresourcedefinition strategy PrepareForCreate,
// k8s.io/apiextensions-apiserver v0.37.0 pkg/registry/customresourcedefinition/strategy.go)
// and validated by validation.ValidateCustomResourceDefinition.
func crdRefusalOf(v1 *apiextv1.CustomResourceDefinition) string {
	crd, err := internalOf(v1)
	if err != nil {
		return fmt.Sprintf("it does not convert: %v", err)
	}
	return validateCRD(crd)
}

// internalOf is the CRD v1 defaulted (in place) and converted to the
// internal version.
func internalOf(v1 *apiextv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	apiextv1.SetObjectDefaults_CustomResourceDefinition(v1)
	crd := new(apiextensions.CustomResourceDefinition)
	if err := apiextv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, crd, nil); err != nil {
		return nil, err
	}
	return crd, nil
}

// validateCRD is the API server's answer to creating the internal CRD
// crd (prepared in place), "" when it accepts it.
func validateCRD(crd *apiextensions.CustomResourceDefinition) string {
	crd.Status = apiextensions.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			break
		}
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), crd)
	if len(errs) == 0 {
		return ""
	}
	return fieldErrors(errs)
}

// fieldErrors renders the first maxCRDErrors errors as the API server
// prints them (field: type: detail), and how many more there are, in
// the order of their text: the validation walks a schema's properties in
// Go's map order, so the errors come in a different order each run, and
// which of them the first maxCRDErrors are must not.
func fieldErrors(errs field.ErrorList) string {
	es := make([]error, len(errs))
	for i, e := range errs {
		es[i] = e
	}
	slices.SortStableFunc(es, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return "[" + quoteErrors(es) + "]"
}

// quoteErrors joins the first maxCRDErrors of errs, and says how many
// more there are.
func quoteErrors(errs []error) string {
	msgs := make([]string, 0, maxCRDErrors)
	for _, e := range errs[:min(len(errs), maxCRDErrors)] {
		msgs = append(msgs, e.Error())
	}
	s := strings.Join(msgs, ", ")
	if n := len(errs) - maxCRDErrors; n > 0 {
		s += fmt.Sprintf(", and %d more", n)
	}
	return s
}
