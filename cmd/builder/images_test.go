package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
)

// extraWorkloads are appended to a blob's content only: a CronJob with an
// init container and a Pod with an ephemeral container, on lines counted
// from the end of the YAML they follow.
const extraWorkloads = `---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: cleanup
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          initContainers:
          - name: wait
            image: busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111
          containers:
          - name: run
            image: registry.example:5000/tools/cleanup:v2.0.0
---
apiVersion: v1
kind: Pod
metadata:
  name: debug
spec:
  containers:
  - name: main
    image: registry.example/debug:v1
  ephemeralContainers:
  - name: shell
    image: registry.example/shell:v3
`

// TestImagesCommand: images in a vendored YAML and in a blob that has no
// YAML beside it are all listed with their lines, in every output.
func TestImagesCommand(t *testing.T) {
	root := fixture.CleanCopy(t)
	cp := filepath.Join(root, "packages/system/capi-providers-cpprovider")
	yml := filepath.Join(cp, "files/control-plane-components.yaml")
	data, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	base := strings.Count(string(data), "\n")
	gz, err := blob.CompressBytes(append(data, extraWorkloads...))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cp, "files/components.gz"), gz, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(yml); err != nil { // the blob alone holds the images
		t.Fatal(err)
	}

	out, _, err := runBuildTestCmd(t, "images", "--output", "json", cp)
	if err != nil {
		t.Fatalf("images: %v\n%s", err, out)
	}
	validateJSON(t, "images.schema.json", out)
	var rep struct {
		Images []struct {
			Ref, File, Workload, Container string
			Providers                      []string
			Line                           int
			InBlob                         bool
		}
		Unique []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, img := range rep.Images {
		if !img.InBlob || img.File != "files/components.gz" || !slices.Equal(img.Providers, []string{"ControlPlaneProvider/kubeadm"}) {
			t.Errorf("image %s: file %s inBlob %v providers %v", img.Ref, img.File, img.InBlob, img.Providers)
		}
		got = append(got, img.Workload+"/"+img.Container+" "+img.Ref+" "+strconv.Itoa(img.Line-base))
	}
	want := []string{
		"Deployment/kubeadm-controller-manager/manager registry.k8s.io/cluster-api/kubeadm-control-plane-controller:v1.10.1 " + strconv.Itoa(131-base),
		"CronJob/cleanup/wait busybox@sha256:1111111111111111111111111111111111111111111111111111111111111111 14",
		"CronJob/cleanup/run registry.example:5000/tools/cleanup:v2.0.0 17",
		"Pod/debug/main registry.example/debug:v1 26",
		"Pod/debug/shell registry.example/shell:v3 29",
	}
	if !slices.Equal(got, want) {
		t.Errorf("images (line after the YAML's %d):\n%s\nwant\n%s", base, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	out, _, err = runBuildTestCmd(t, "images", "--output", "list", root)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !slices.IsSorted(lines) || !slices.Contains(lines, "registry.example/shell:v3") || !slices.Contains(lines, "quay.io/capk/capk-manager:v0.1.9") || len(lines) != len(slices.Compact(slices.Clone(lines))) {
		t.Errorf("list output not the sorted distinct references:\n%s", out)
	}

	out, _, err = runBuildTestCmd(t, "images", root)
	if err != nil || !strings.Contains(out, "packages/system/capi-providers-core/files/core-components.yaml:131") ||
		!strings.Contains(out, "packages/system/capi-providers-cpprovider/files/components.gz:") {
		t.Errorf("human output: %v\n%s", err, out)
	}

	if _, _, err := runBuildTestCmd(t, "images", "--output", "yaml", root); err == nil {
		t.Error("--output yaml accepted")
	}
}

// A blob that differs from its YAML shows the images of both, and the human
// output names the references only one of them holds.
func TestImagesBlobDiffersFromYAML(t *testing.T) {
	root := fixture.CleanCopy(t)
	cp := filepath.Join(root, "packages/system/capi-providers-cpprovider")
	yml := filepath.Join(cp, "files/control-plane-components.yaml")
	data, err := os.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "kubeadm-control-plane-controller:v1.10.1", "kubeadm-control-plane-controller:v1.10.2", 1)
	if edited == string(data) {
		t.Fatal("fixture image not found")
	}
	if err := os.WriteFile(yml, []byte(edited), 0o644); err != nil { // the blob keeps v1.10.1
		t.Fatal(err)
	}
	out, _, err := runBuildTestCmd(t, "images", cp)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"! files/control-plane-components.yaml:131: only the YAML holds registry.k8s.io/cluster-api/kubeadm-control-plane-controller:v1.10.2",
		"! files/components.gz:131 (inflated): only the blob holds registry.k8s.io/cluster-api/kubeadm-control-plane-controller:v1.10.1",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
