package deploy

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartClusterAccess: clusterAccess.enabled adds a ServiceAccount the
// pod runs as, bound to a ClusterRole that only reads (get, list, watch)
// the provider kinds, ConfigMaps, Deployments and CRDs; off, the pod
// mounts no token.
func TestChartClusterAccess(t *testing.T) {
	files, err := render(t, map[string]any{"clusterAccess": map[string]any{"enabled": true}})
	if err != nil {
		t.Fatal(err)
	}
	objs := objects(t, files)
	for _, kind := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if len(objs[kind]) != 1 {
			t.Fatalf("%d %s, want 1", len(objs[kind]), kind)
		}
		if err := validate(objs[kind][0]); err != nil {
			t.Error(err)
		}
	}
	rules, _, _ := unstructured.NestedSlice(objs["ClusterRole"][0].Object, "rules")
	var granted []string
	for _, r := range rules {
		m := r.(map[string]any)
		for _, v := range m["verbs"].([]any) {
			if !slices.Contains([]string{"get", "list", "watch"}, v.(string)) {
				t.Errorf("ClusterRole grants %q: read-only means get, list and watch", v)
			}
		}
		for _, g := range m["apiGroups"].([]any) {
			for _, res := range m["resources"].([]any) {
				granted = append(granted, g.(string)+"/"+res.(string))
			}
		}
	}
	sort.Strings(granted)
	want := "/configmaps,apiextensions.k8s.io/customresourcedefinitions,apps/deployments," +
		"operator.cluster.x-k8s.io/addonproviders,operator.cluster.x-k8s.io/bootstrapproviders,operator.cluster.x-k8s.io/controlplaneproviders," +
		"operator.cluster.x-k8s.io/coreproviders,operator.cluster.x-k8s.io/infrastructureproviders,operator.cluster.x-k8s.io/ipamproviders," +
		"operator.cluster.x-k8s.io/runtimeextensionproviders,turtles-capi.cattle.io/capiproviders"
	if got := strings.Join(granted, ","); got != want {
		t.Errorf("ClusterRole resources\n %s\nwant\n %s", got, want)
	}
	spec, _, _ := unstructured.NestedMap(objs["Deployment"][0].Object, "spec", "template", "spec")
	if spec["serviceAccountName"] != objs["ServiceAccount"][0].GetName() || spec["automountServiceAccountToken"] != true {
		t.Errorf("pod spec runs as %v (automount %v), want the chart's ServiceAccount with its token", spec["serviceAccountName"], spec["automountServiceAccountToken"])
	}

	files, err = render(t, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	objs = objects(t, files)
	spec, _, _ = unstructured.NestedMap(objs["Deployment"][0].Object, "spec", "template", "spec")
	if len(objs["ClusterRole"]) != 0 || spec["automountServiceAccountToken"] != false {
		t.Errorf("by default: %d ClusterRoles, automount %v; want none and false", len(objs["ClusterRole"]), spec["automountServiceAccountToken"])
	}
}
