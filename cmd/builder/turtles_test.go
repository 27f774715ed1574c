package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/internal/testkit/releaseapi"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// rke2Components is a bootstrap components YAML of release tag.
func rke2Components(tag string) []byte {
	return []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: rke2-bootstrap-controller-manager\n  namespace: rke2-bootstrap-system\nspec:\n  selector:\n    matchLabels: {app: x}\n  template:\n    metadata:\n      labels: {app: x}\n    spec:\n      containers:\n      - name: manager\n        image: registry.rancher.com/rancher/cluster-api-provider-rke2-bootstrap:" + tag + "\n")
}

// treeErrors are the error findings of verifier check on root.
func treeErrors(t *testing.T, root string) []string {
	t.Helper()
	_, r, err := verify.Run(context.Background(), root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range r.Findings {
		if f.Severity == report.Error {
			out = append(out, f.Check+" "+f.Package+": "+f.Message)
		}
	}
	return out
}

// TestTurtlesWorkflow: outdated, vendor, plan and bump on the Rancher
// Turtles charts as they are (CAPIProvider templates reading dashed
// values with `index .Values`, a core with no spec.version selecting the
// chart's inline ConfigMap): the providers chart's rke2 bootstrap
// provider, pinned to v0.25.0 by its values, is downloaded at install
// time, so outdated has nothing to compare; vendor finds its CAPIProvider
// and points it at a pinned ConfigMap; outdated then sees v0.26.0, plan
// orders it against the core's contract (read from the core's ConfigMap,
// v1.13.3), and bump moves it there by editing the value the template
// reads. The tree has no error after each step.
func TestTurtlesWorkflow(t *testing.T) {
	t.Setenv("PINSEAL_MIRRORS", "")
	root := t.TempDir()
	if err := fixture.WriteTurtles(root); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(root, fixture.TurtlesProvidersChart)
	vals := filepath.Join(chart, "values.yaml")
	b, err := os.ReadFile(vals)
	if err != nil {
		t.Fatal(err)
	}
	const on = "  bootstrapRKE2:\n    enabled: true\n"
	if !strings.Contains(string(b), on) {
		t.Fatalf("values.yaml has no %q", on)
	}
	if err := os.WriteFile(vals, []byte(strings.Replace(string(b), on, on+"    version: v0.25.0\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	api := releaseapi.New(t)
	api.Add("rancher/cluster-api-provider-rke2",
		releaseapi.Release{Tag: "v0.26.0", Files: []releaseapi.File{{Name: "bootstrap-components.yaml", Data: rke2Components("v0.26.0")}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.25=v1beta2", "0.26=v1beta2")}}},
		releaseapi.Release{Tag: "v0.25.0", Files: []releaseapi.File{{Name: "bootstrap-components.yaml", Data: rke2Components("v0.25.0")}, {Name: "metadata.yaml", Data: releaseapi.Metadata("0.25=v1beta2")}}})
	web := []string{"--api-url", api.URL(), "--allow-host", api.ObjectsHost()}
	const id = "BootstrapProvider/rke2"
	row := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, id) && !strings.HasPrefix(l, "?") && !strings.HasPrefix(l, "!") {
				return l
			}
		}
		return ""
	}

	out, _, err := runBuildTestCmd(t, append([]string{"outdated", chart}, web...)...)
	if f := strings.Fields(row(out)); err != nil || len(f) < 4 || f[2] != "-" || f[3] != "?" {
		t.Fatalf("outdated before vendor: %v\n%s", err, out)
	}
	// Over the whole tree, the URL the Turtles clusterctl-config ConfigMap
	// (the other chart) gives rke2 is where it is downloaded from.
	out, _, _ = runBuildTestCmd(t, append([]string{"outdated", root}, web...)...)
	if !strings.Contains(out, id+": the operator downloads its release at install time (no spec.fetchConfig: https://github.com/rancher/cluster-api-provider-rke2/releases/v0.25.0/bootstrap-components.yaml from Turtles' clusterctl config (ConfigMap clusterctl-config))") {
		t.Fatalf("outdated over the tree does not name the clusterctl-config URL:\n%s", out)
	}

	out, _, err = runBuildTestCmd(t, append([]string{"vendor", chart, "--provider", id, "--mirror", api.Mirror(), "--retries", "0"}, web...)...)
	if err != nil {
		t.Fatalf("vendor: %v\n%s", err, out)
	}
	tmpl, _ := os.ReadFile(filepath.Join(chart, "templates", "bootstrap-rke2.yaml"))
	if !strings.Contains(string(tmpl), "kind: CAPIProvider") || !strings.Contains(string(tmpl), "selector:") {
		t.Fatalf("vendor did not point the CAPIProvider at its ConfigMap:\n%s", tmpl)
	}
	if errs := treeErrors(t, root); len(errs) > 0 {
		t.Fatalf("errors after vendor:\n%s", strings.Join(errs, "\n"))
	}

	out, _, err = runBuildTestCmd(t, append([]string{"outdated", chart}, web...)...)
	var eo errOutdated
	if f := strings.Fields(row(out)); !errors.As(err, &eo) || len(f) < 4 || f[2] != "v0.25.0" || f[3] != "v0.26.0" {
		t.Fatalf("outdated after vendor: %v\n%s", err, out)
	}

	out, _, _ = runBuildTestCmd(t, append([]string{"plan", root}, web...)...)
	if !strings.Contains(out, "core CoreProvider/cluster-api "+fixture.TurtlesCoreVersion+" serves v1beta2") ||
		!strings.Contains(out, id+": v0.25.0 -> v0.26.0") || !strings.Contains(out, "builder bump "+chart+" --provider "+id+" --to v0.26.0") {
		t.Fatalf("plan:\n%s", out)
	}

	out, _, err = runBuildTestCmd(t, "bump", chart, "--tree", root, "--provider", id, "--to", "v0.26.0", "--mirror", api.Mirror(), "--retries", "0", "--trust-on-first-use")
	if err != nil {
		t.Fatalf("bump: %v\n%s", err, out)
	}
	b, _ = os.ReadFile(vals)
	if !strings.Contains(string(b), on+"    version: v0.26.0\n") {
		t.Errorf("bump did not edit the value the template reads:\n%s", b)
	}
	if errs := treeErrors(t, root); len(errs) > 0 {
		t.Fatalf("errors after bump:\n%s", strings.Join(errs, "\n"))
	}
	out, _, err = runBuildTestCmd(t, append([]string{"outdated", chart}, web...)...)
	if f := strings.Fields(row(out)); err != nil || len(f) < 4 || f[2] != "v0.26.0" {
		t.Fatalf("outdated after bump: %v\n%s", err, out)
	}
}
