package images

import (
	"strings"
	"testing"
)

const rewriteDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: capi-controller-manager
  annotations:
    note: "image: registry.k8s.io/cluster-api/not-an-image:v1"
spec:
  template:
    spec:
      initContainers:
      - {name: wait, image: 'registry.k8s.io/cluster-api/wait:v1'}
      containers:
      - name: manager
        image: "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1" # the manager
        args: ["--image=registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1"]
      - name: proxy
        image: gcr.io/kubebuilder/kube-rbac-proxy:v0.8.0
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: x
spec:
  image: registry.k8s.io/cluster-api/crd-field:v1
`

func TestRewriteMovesOnlyWorkloadImages(t *testing.T) {
	move := func(ref string) (string, bool) {
		if rest, ok := strings.CutPrefix(ref, "registry.k8s.io/cluster-api/"); ok {
			return "mirror.example:5000/capi/" + rest, true
		}
		return ref, false
	}
	out, moved, err := Rewrite([]byte(rewriteDoc), move)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		"image: 'registry.k8s.io/cluster-api/wait:v1'", "image: 'mirror.example:5000/capi/wait:v1'",
		`image: "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1"`, `image: "mirror.example:5000/capi/cluster-api-controller:v1.10.1"`,
	).Replace(rewriteDoc)
	if string(out) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", out, want)
	}
	if len(moved) != 2 || moved[0].Line != 11 || moved[1].Line != 14 || moved[1].To != "mirror.example:5000/capi/cluster-api-controller:v1.10.1" {
		t.Errorf("moved %+v", moved)
	}
	again, moved, err := Rewrite(out, move)
	if err != nil || string(again) != string(out) || len(moved) != 0 {
		t.Errorf("a second rewrite changed %d images (err %v)", len(moved), err)
	}
}

func TestRewriteRefuses(t *testing.T) {
	all := func(ref string) (string, bool) { return "mirror.example/" + ref, true }
	for name, doc := range map[string]string{
		"block scalar":  "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: >-\n      quay.io/x:v1\n",
		"escaped":       "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: \"quay.io/x\\x3av1\"\n",
		"over the size": "kind: Pod\nspec:\n  containers:\n  - name: a\n    image: quay.io/x:v1\n  x: [" + strings.Repeat("1,", maxDoc/2) + "1]\n",
		"not parsing":   "kind: Pod\nspec: [\n",
	} {
		out, _, err := Rewrite([]byte(doc), all)
		if err == nil || out != nil {
			t.Errorf("%s: rewritten without error:\n%.300s", name, out)
		}
	}
}

func TestOversizedNamesDocument(t *testing.T) {
	big := "kind: ConfigMap\n---\nkind: DaemonSet\nspec:\n  x: [" + strings.Repeat("1,", maxDoc/2) + "1]\n"
	_, err := Scan(strings.NewReader(big))
	o := Oversized(err)
	if len(o) != 1 || o[0].Line != 3 || o[0].Kind != "DaemonSet" || !strings.Contains(o[0].Error(), "line 3: a DaemonSet document over 256 KiB") {
		t.Errorf("oversized %+v (%v)", o, err)
	}
	if Oversized(nil) != nil {
		t.Error("Oversized(nil) lists something")
	}
}
