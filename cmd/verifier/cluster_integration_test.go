//go:build integration

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/pinseal/pinseal/internal/testkit/kubetest"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestIntegrationClusterCommand: `verifier cluster` against a real API
// server holding the example tree as installed: exit 0 on the clean
// cluster, 1 with the finding once the core provider is behind its
// spec.version (JSON naming context, namespace and provider), 2 once the
// API server is gone.
func TestIntegrationClusterCommand(t *testing.T) {
	w := kubetest.NewWorld(t)
	args := []string{"cluster", "--kubeconfig", w.Srv.Kubeconfig, "--tree", w.Root,
		"--registry", w.Prefix.String(), "--plain-http", "--key", remotetest.WritePublicKey(t, w.Key)}
	out, code, err := runVerifier(t, args...)
	if code != 0 || !strings.Contains(out, "PASSED") || !strings.Contains(out, "pinseal-test/cozy-cluster-api") {
		t.Fatalf("clean cluster: exit %d (%v)\n%s", code, err, out)
	}

	if _, code, err := runVerifier(t, "cluster", "--kubeconfig", w.Srv.Kubeconfig, "--context", "nope"); code != 2 || !strings.Contains(err.Error(), `context "nope"`) {
		t.Errorf("unknown context: exit %d, %v; want 2 naming it", code, err)
	}

	prov := w.Dyn.Resource(kubetest.ProviderGVR("CoreProvider")).Namespace(kubetest.NS)
	u, err := prov.Get(context.Background(), "cluster-api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	unstructured.SetNestedField(u.Object, "v1.10.0-core", "status", "installedVersion")
	if _, err := prov.UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out, code, err = runVerifier(t, append(args, "--output", "json")...)
	if code != 1 {
		t.Fatalf("provider behind: exit %d (%v), want 1\n%s", code, err, out)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Findings) != 1 || r.Findings[0].Check != "cluster-installed" || r.Findings[0].Package != "pinseal-test/cozy-cluster-api" || r.Findings[0].Provider != "CoreProvider/cluster-api" {
		t.Fatalf("findings %+v, want one cluster-installed finding on the core provider", r.Findings)
	}

	w.Srv.Stop()
	_, code, err = runVerifier(t, args...)
	if code != 2 || err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("stopped API server: exit %d, %v; want 2 with the reason", code, err)
	}
}
