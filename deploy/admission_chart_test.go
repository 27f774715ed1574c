package deploy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func admissionValues(extra map[string]any) map[string]any {
	adm := map[string]any{"enabled": true, "mode": "enforce",
		"policy": map[string]any{"apiVersion": "pinseal/v1", "kind": "Policy", "admission": map[string]any{"registries": []any{"registry.example/capi"}}}}
	for k, v := range extra {
		adm[k] = v
	}
	return map[string]any{"admission": adm, "config": map[string]any{"registries": []any{"registry.example"}}}
}

// TestChartAdmission: admission.enabled adds the webhook configuration
// (only provider kinds and labelled ConfigMaps sent), its TLS (cert-manager
// when served, else a generated self-signed pair whose certificate is the
// caBundle) and the service's admission config; without it none of that.
func TestChartAdmission(t *testing.T) {
	for _, tc := range []struct {
		name        string
		apis        []string
		certManager bool
	}{
		{"self-signed", nil, false},
		{"cert-manager", []string{"cert-manager.io/v1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, err := render(t, admissionValues(nil), tc.apis...)
			if err != nil {
				t.Fatal(err)
			}
			objs := objects(t, files)
			hooks := objs["ValidatingWebhookConfiguration"]
			if len(hooks) != 1 {
				t.Fatalf("%d webhook configurations", len(hooks))
			}
			if err := validate(hooks[0]); err != nil {
				t.Fatal(err)
			}
			whs, _, _ := unstructured.NestedSlice(hooks[0].Object, "webhooks")
			if len(whs) != 3 {
				t.Fatalf("%d webhooks, want providers, configmaps, operator-store", len(whs))
			}
			for _, w := range whs {
				w := w.(map[string]any)
				name := w["name"].(string)
				rules := w["rules"].([]any)[0].(map[string]any)
				res := strings.Join(toStrings(rules["resources"]), ",")
				sel, hasSel := w["objectSelector"]
				switch {
				case strings.HasPrefix(name, "providers."):
					if !strings.Contains(res, "coreproviders") || !strings.Contains(res, "runtimeextensionproviders") || hasSel {
						t.Errorf("%s: resources %s selector %v", name, res, sel)
					}
				default:
					if res != "configmaps" || !hasSel {
						t.Errorf("%s: configmaps must be selected by label (resources %s, selector %v)", name, res, sel)
					}
				}
				if w["failurePolicy"] != "Fail" || w["timeoutSeconds"] != float64(10) && w["timeoutSeconds"] != int64(10) {
					t.Errorf("%s: failurePolicy %v timeoutSeconds %v", name, w["failurePolicy"], w["timeoutSeconds"])
				}
				cc := w["clientConfig"].(map[string]any)
				_, hasCA := cc["caBundle"]
				if hasCA == tc.certManager {
					t.Errorf("%s: caBundle set %v with cert-manager %v", name, hasCA, tc.certManager)
				}
				if svc := cc["service"].(map[string]any); svc["path"] != "/admit" {
					t.Errorf("%s: path %v", name, svc["path"])
				}
			}
			_, hasCert := objs["Certificate"]
			if hasCert != tc.certManager {
				t.Errorf("Certificate rendered %v with cert-manager %v", hasCert, tc.certManager)
			}
			if tc.certManager && hooks[0].GetAnnotations()["cert-manager.io/inject-ca-from"] == "" {
				t.Error("no cert-manager CA injection")
			}
			cfg := objs["ConfigMap"][0]
			serve, _, _ := unstructured.NestedString(cfg.Object, "data", "serve.yaml")
			pol, _, _ := unstructured.NestedString(cfg.Object, "data", "admission-policy.yaml")
			if !strings.Contains(serve, "admission:") || !strings.Contains(serve, "certFile: /etc/pinseal/admission-tls/tls.crt") || !strings.Contains(pol, "registry.example/capi") {
				t.Errorf("service config:\n%s\npolicy:\n%s", serve, pol)
			}
			if _, ok := objs["PodDisruptionBudget"]; !ok {
				t.Error("no PodDisruptionBudget for the webhook")
			}
			for _, o := range objs["Deployment"] {
				if err := validate(o); err != nil {
					t.Error(err)
				}
			}
		})
	}

	files, err := render(t, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objects(t, files)["ValidatingWebhookConfiguration"]; ok {
		t.Error("a webhook configuration without admission.enabled")
	}
	if _, err := render(t, admissionValues(map[string]any{"timeoutSeconds": 45})); err == nil || !strings.Contains(err.Error(), "at most 30") {
		t.Errorf("timeoutSeconds 45: %v", err)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
