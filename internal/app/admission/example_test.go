package admission_test

import (
	"context"
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/pinseal/pinseal/internal/app/admission"
	"github.com/pinseal/pinseal/pkg/policy"
)

// A provider whose fetchConfig.oci names a digest is refused under
// enforce, with the object, the rule and the fix.
func ExampleDecider_Decide() {
	pol, _ := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nadmission:\n  registries: [registry.example/capi]\n"), "policy.yaml")
	obj, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": "cluster-api", "namespace": "capi"},
		"spec": map[string]any{"version": "v1.10.1-core", "fetchConfig": map[string]any{
			"oci": "registry.example/capi/core-cluster-api@sha256:0123456789012345678901234567890123456789012345678901234567890123"}},
	})
	req := &admissionv1.AdmissionRequest{UID: "1", Operation: admissionv1.Create,
		Kind:   metav1.GroupVersionKind{Group: admission.Group, Version: "v1alpha2", Kind: "CoreProvider"},
		Object: runtime.RawExtension{Raw: obj}}
	d := &admission.Decider{Policy: pol}
	v := d.Decide(context.Background(), req)
	resp := admission.Respond(req, v, admission.Enforce).Response
	fmt.Println(resp.Allowed, v.Problems[0].Rule)
	// Output: false oci-source
}
