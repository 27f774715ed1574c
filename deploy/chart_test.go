// Package deploy holds the Helm chart of the verifier service (chart/);
// its tests lint it with Helm's own linter, render it with Helm's engine
// for the default and the HA values, and validate every rendered object
// against the Kubernetes schemas.
package deploy

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const chartDir = "chart"

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	if file == "" {
		return map[string]any{}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return v
}

func TestChartLint(t *testing.T) {
	for _, values := range []string{"", "chart/values-ha.yaml"} {
		l := lint.All(chartDir, readValues(t, values), "pinseal", false)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("helm lint (values %q): %s", values, m)
			}
		}
	}
}

// render renders the chart with values as `helm template` would.
func render(t *testing.T, values map[string]any, apis ...string) (map[string]string, error) {
	t.Helper()
	caps := *chartutil.DefaultCapabilities
	caps.APIVersions = append(append(chartutil.VersionSet{}, caps.APIVersions...), apis...)
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "pinseal", Namespace: "pinseal", IsInstall: true}, &caps)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Render(ch, vals)
}

// objects splits rendered manifests into objects, by kind.
func objects(t *testing.T, files map[string]string) map[string][]*unstructured.Unstructured {
	t.Helper()
	out := map[string][]*unstructured.Unstructured{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(doc) == "" || strings.HasSuffix(name, "NOTES.txt") {
				continue
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if m == nil {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			out[u.GetKind()] = append(out[u.GetKind()], u)
		}
	}
	return out
}

// validate checks obj against the schema of its kind. The schemas are the
// structured-merge-diff schemas client-go generates from the Kubernetes
// OpenAPI document (the ones server-side apply uses), compiled into
// k8s.io/client-go/applyconfigurations: no cluster, no network. Unknown
// fields, wrong types and unknown kinds are errors.
func validate(obj *unstructured.Unstructured) error {
	tc := applyconfigurations.NewTypeConverter(scheme.Scheme)
	if _, err := tc.ObjectToTyped(obj); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	// Strict decoding into the k8s.io/api types as well.
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return fmt.Errorf("%s: %w", obj.GetKind(), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, typed, true); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func TestChartRendersValidObjects(t *testing.T) {
	for _, tc := range []struct {
		values   string
		replicas int64
		kinds    []string
		apis     []string
	}{
		{"", 1, []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Secret", "Service"}, nil},
		// Without the Prometheus Operator's CRD the ServiceMonitor is left out.
		{"chart/values-ha.yaml", 3, []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Service"}, nil},
		{"chart/values-ha.yaml", 3, []string{"ConfigMap", "Deployment", "PodDisruptionBudget", "Service", "ServiceMonitor"}, []string{"monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"}},
	} {
		t.Run("values="+tc.values+",apis="+strings.Join(tc.apis, "+"), func(t *testing.T) {
			files, err := render(t, readValues(t, tc.values), tc.apis...)
			if err != nil {
				t.Fatal(err)
			}
			objs := objects(t, files)
			var kinds []string
			for k := range objs {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			if strings.Join(kinds, ",") != strings.Join(tc.kinds, ",") {
				t.Fatalf("kinds %v, want %v", kinds, tc.kinds)
			}
			for kind, list := range objs {
				for _, o := range list {
					if kind == "ServiceMonitor" {
						// A CRD (prometheus-operator): not among the
						// built-in schemas; check its shape.
						if eps, _, _ := unstructured.NestedSlice(o.Object, "spec", "endpoints"); o.GetAPIVersion() != "monitoring.coreos.com/v1" || len(eps) != 1 {
							t.Errorf("ServiceMonitor %+v", o.Object)
						}
						continue
					}
					if err := validate(o); err != nil {
						t.Error(err)
					}
				}
			}
			dep := objs["Deployment"][0]
			if n, _, _ := unstructured.NestedFieldNoCopy(dep.Object, "spec", "replicas"); fmt.Sprint(n) != fmt.Sprint(tc.replicas) {
				t.Errorf("replicas %d, want %d", n, tc.replicas)
			}
			c := mustContainer(t, dep)
			for path, want := range map[string]any{
				"securityContext.readOnlyRootFilesystem":   true,
				"securityContext.runAsNonRoot":             true,
				"securityContext.allowPrivilegeEscalation": false,
				"livenessProbe.httpGet.path":               "/healthz",
				"readinessProbe.httpGet.path":              "/readyz",
			} {
				got, _, _ := unstructured.NestedFieldNoCopy(c, strings.Split(path, ".")...)
				if got != want {
					t.Errorf("container %s = %v, want %v", path, got, want)
				}
			}
			cfg := objs["ConfigMap"][0]
			serve, _, _ := unstructured.NestedString(cfg.Object, "data", "serve.yaml")
			if tc.replicas > 1 && (!strings.Contains(serve, "database: postgres://") || !strings.Contains(serve, "databasePasswordFile:") || strings.Contains(serve, "password:")) {
				t.Errorf("HA config:\n%s\nwant a PostgreSQL database with the password from a file", serve)
			}
		})
	}
}

func mustContainer(t *testing.T, dep *unstructured.Unstructured) map[string]any {
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers", len(cs))
	}
	return cs[0].(map[string]any)
}

// TestChartValidationCatches: the validation sees a wrong field and a
// wrong type, and the chart refuses replicas without PostgreSQL.
func TestChartValidationCatches(t *testing.T) {
	files, err := render(t, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	dep := objects(t, files)["Deployment"][0]
	typo := dep.DeepCopy()
	unstructured.SetNestedField(typo.Object, int64(2), "spec", "replica")
	if err := validate(typo); err == nil {
		t.Error("a Deployment with spec.replica validated")
	}
	wrongType := dep.DeepCopy()
	unstructured.SetNestedField(wrongType.Object, "three", "spec", "replicas")
	if err := validate(wrongType); err == nil {
		t.Error("a Deployment with a string spec.replicas validated")
	}
	if _, err := render(t, map[string]any{"replicaCount": 2}); err == nil || !strings.Contains(err.Error(), "database.url") {
		t.Errorf("2 replicas without PostgreSQL: %v, want a failure naming database.url", err)
	}
}
