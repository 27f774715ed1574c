package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestBumpCommandBreaking: a capmox v0.7.8 whose ProxmoxCluster CRD no
// longer serves v1alpha1 (and has no conversion webhook) is refused with
// the tree unchanged, naming the CRD and the version; --allow-breaking
// bumps it, and the JSON lists the changes, breaking first.
func TestBumpCommandBreaking(t *testing.T) {
	root, dir, mirror, files := bumpExample(t)
	comp := "/cluster-api-provider-proxmox/v0.7.8/infrastructure-components.yaml"
	files[comp] = bytes.Replace(files[comp], []byte("\n    served: true\n"), []byte("\n    served: false\n"), 1)
	before := readTree(t, root)
	args := []string{"bump", dir, "--to", "v0.7.8", "--mirror", mirror, "--tree", root, "--cache", t.TempDir(), "--trust-on-first-use"}

	_, _, err := runBuildTestCmd(t, append(args, "--dry-run")...)
	if err == nil {
		t.Fatal("a release that stops serving a CRD version was not refused")
	}
	for _, want := range []string{"crd-version-removed", "CustomResourceDefinition/proxmoxclusters.infrastructure.cluster.x-k8s.io", "v1alpha1 is no longer served", "--allow-breaking"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
	if got := readTree(t, root); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("a refused bump changed files")
	}

	out, _, err := runBuildTestCmd(t, append(args, "--allow-breaking", "--output", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	validateJSON(t, "bump.schema.json", out)
	var res struct {
		Changes []struct {
			Kind, Object, Detail string
			Breaking             bool
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 2 || res.Changes[0].Kind != "crd-version-removed" || !res.Changes[0].Breaking ||
		res.Changes[1].Kind != "image-changed" || res.Changes[1].Object != "Deployment/capmox-controller-manager" {
		t.Errorf("changes: %s", out)
	}
}
