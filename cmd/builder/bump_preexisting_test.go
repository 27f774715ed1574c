package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

// TestBumpCommandPreExisting: `builder bump` of talos in the monorepo as it
// stands, where kubeadm's blob (same package) has a header error from
// before: the bump goes through and says so, in words and in JSON
// (api/bump.schema.json's preExisting).
func TestBumpCommandPreExisting(t *testing.T) {
	up := "/siderolabs/cluster-api-bootstrap-provider-talos/releases/download/v0.6.13/"
	files := map[string][]byte{
		up + "bootstrap-components.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: cabpt-system\n"),
		up + "metadata.yaml":             []byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n- major: 0\n  minor: 6\n  contract: v1beta1\n"),
	}
	srv := serveFiles(t, files)
	for _, output := range []string{"human", "json"} {
		t.Run(output, func(t *testing.T) {
			root := t.TempDir()
			if err := fixture.AsItStands(root); err != nil {
				t.Fatal(err)
			}
			boot := filepath.Join(root, fixture.AsItStandsBootstrap)
			kubeadm, _ := os.ReadFile(filepath.Join(boot, "files/components.gz"))
			// The stand-in's release has none of talos's CRDs: a breaking
			// change this test of pre-existing findings lets through.
			out, stderr, err := runBuildTestCmd(t, "bump", boot, "--provider", "BootstrapProvider/talos", "--to", "v0.6.13", "--allow-breaking",
				"--tree", root, "--trust-on-first-use", "--mirror", "https://github.com/="+srv.URL+"/", "--cache", t.TempDir(), "--output", output)
			if err != nil {
				t.Fatalf("bump: %v\n%s\n%s", err, out, stderr)
			}
			if output == "json" {
				validateJSON(t, "bump.schema.json", out)
				var res struct {
					PreExisting []struct{ Check, Provider, File string }
				}
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatal(err)
				}
				if len(res.PreExisting) != 1 || res.PreExisting[0].Check != "blob-header" || res.PreExisting[0].Provider != "BootstrapProvider/kubeadm" ||
					res.PreExisting[0].File != fixture.AsItStandsBootstrap+"/files/components.gz" {
					t.Errorf("preExisting %+v, want kubeadm's blob-header", res.PreExisting)
				}
			} else if !strings.Contains(out, "pre-existing: 1 error finding") || !strings.Contains(out, "blob-header") || !strings.Contains(out, "bumped ") {
				t.Errorf("output does not report the pre-existing finding:\n%s", out)
			}
			if after, _ := os.ReadFile(filepath.Join(boot, "files/components.gz")); !bytes.Equal(kubeadm, after) {
				t.Error("the bump of talos changed kubeadm's blob")
			}
			// The pre-existing finding's fix works on the package the bump
			// left (pin.yaml lists talos only): builder build rebuilds
			// kubeadm's blob from its vendored YAML too.
			if output != "human" {
				return
			}
			r := checkTree(t, root, verify.Options{})
			var fix string
			for _, f := range r.Findings {
				if f.Check == "blob-header" && f.Provider == "BootstrapProvider/kubeadm" {
					fix = f.Hint
				}
			}
			if !strings.Contains(fix, "`builder build "+fixture.AsItStandsBootstrap+"`") {
				t.Fatalf("kubeadm's blob-header after the bump: hint %q", fix)
			}
			t.Chdir(root)
			if out, stderr, err := runBuildTestCmd(t, "build", fixture.AsItStandsBootstrap, "--offline", "--cache", t.TempDir()); err != nil {
				t.Fatalf("build: %v\n%s\n%s", err, out, stderr)
			}
			for _, f := range checkTree(t, root, verify.Options{}).Findings {
				if f.Package == fixture.AsItStandsBootstrap && f.Severity == report.Error {
					t.Errorf("after builder build: %s %s: %s", f.Check, f.Provider, f.Message)
				}
			}
		})
	}
}
