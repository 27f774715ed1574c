//go:build integration

package server

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/pinseal/pinseal/internal/app/service/store"
	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
)

// TestIntegrationClusterSource: a cluster source is scanned against its
// tree source and registry like any other source: a hand-edited
// Deployment in the real API server is an open finding in GET
// /v1/findings and on the dashboard (in Chromium); once the API server
// stops, the scan fails with the reason.
func TestIntegrationClusterSource(t *testing.T) {
	w := kubetest.NewWorld(t)
	ctx := context.Background()
	deps := w.Dyn.Resource(kubetest.GVRDeployment).Namespace(kubetest.NS)
	u, err := deps.Get(ctx, "capi-controller-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "registry.example/capi:hotfix"
	unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
	if _, err := deps.Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t)
	cfg.PublicReads = true
	cfg.Registries = []string{w.Prefix.Host}
	cfg.Sources = []SourceConfig{
		{Name: "tree", Path: w.Root},
		{Name: "prod", Cluster: &ClusterSourceConfig{Kubeconfig: w.Srv.Kubeconfig, Tree: "tree"}, Policy: remotetest.WritePolicy(t, w.Key)},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	engine := NewVerifyEngine(cfg, true, nil)
	t.Cleanup(engine.Sandbox.Close)
	ts := startServer(t, cfg, engine)
	d := ts.scanNow("prod")
	if d.Scan.Status != store.Succeeded {
		t.Fatalf("scan of the cluster: %+v", d.Scan)
	}
	var fs struct{ Findings []store.Finding }
	ts.GetJSON("/v1/findings?source=prod", 200, &fs)
	if len(fs.Findings) != 1 || fs.Findings[0].Finding.Check != "cluster-workload" ||
		fs.Findings[0].Finding.Package != "pinseal-test/cozy-cluster-api" || !strings.Contains(fs.Findings[0].Finding.Message, "registry.example/capi:hotfix") {
		t.Fatalf("findings of the cluster source: %+v, want the hand-edited image", fs.Findings)
	}

	dom := dumpDOM(t, ts.Base+"/")
	for _, want := range []string{`id="source-prod"`, `<h4 class="check">cluster-workload</h4>`, "pinseal-test/cozy-cluster-api", "registry.example/capi:hotfix"} {
		if !strings.Contains(dom, want) {
			t.Errorf("dashboard DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, kubetest.AdminToken) {
		t.Error("the dashboard shows the cluster's token")
	}

	w.Srv.Stop()
	d = ts.scanNow("prod")
	if d.Scan.Status != store.Failed || !strings.Contains(d.Scan.Error, "connection refused") {
		t.Fatalf("scan of a stopped API server: %+v, want failed with the reason", d.Scan)
	}
}
