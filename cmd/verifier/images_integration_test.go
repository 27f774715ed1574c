//go:build integration

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/blob"
)

const evilImage = "evil.example/x:latest"

// hiddenImageDocs are the ways a YAML reader (sigs.k8s.io/yaml, what
// kubectl and the cluster-api-operator use) resolves a workload's image to
// evil.example/x:latest that a line scan can miss.
var hiddenImageDocs = map[string]string{
	"image alias": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n    img: &img evil.example/x:latest\n" +
		"spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: *img\n",
	"merge key":  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        <<: {image: evil.example/x:latest}\n",
	"kind alias": "apiVersion: apps/v1\nmetadata:\n  name: d\n  labels: {k: &k Deployment}\nkind: *k\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: evil.example/x:latest\n",
	"marker line": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n" +
		`--- {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "evil.example/x:latest"}]}}}}` + "\n",
	"quoted kind line": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  annotations:\n    note: \"a\nkind: ConfigMap\n      b\"\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: evil.example/x:latest\n",
	"two specs":        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template: {spec: {containers: [{name: c, image: example.com/ok:v1.0.0}]}}\nspec:\n  template: {spec: {containers: [{name: c, image: evil.example/x:latest}]}}\n",
	"list":             "apiVersion: v1\nkind: List\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d}\n  spec:\n    template:\n      spec:\n        containers:\n        - name: c\n          image: evil.example/x:latest\n",
}

const cleanComponents = "apiVersion: v1\nkind: Namespace\nmetadata: {name: capi-system}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ok}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: example.com/ok:v1.0.0\n"

const hiddenProvider = "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\n  namespace: capi-system\nspec:\n  version: v1.10.1\n  fetchConfig:\n    selector:\n      matchLabels:\n        core-components: hidden\n---\n" +
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.10.1\n  namespace: capi-system\n  labels:\n    core-components: hidden\n"

// hiddenImagePackage writes a plain-manifest provider package whose
// components are comp: vendored YAML and reproducible blob, the blob in
// binaryData (gz), or comp itself as plain data.components.
func hiddenImagePackage(t *testing.T, comp string, gz bool) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "capi")
	if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "releaseSeries:\n- {major: 1, minor: 10, contract: v1beta1}\n"
	m := hiddenProvider
	if gz {
		b, err := blob.CompressBytes([]byte(comp))
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"files/core-components.yaml": []byte(comp), "files/components.gz": b, "files/metadata.yaml": []byte(md)} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m += "  annotations:\n    provider.cluster.x-k8s.io/compressed: \"true\"\nbinaryData:\n  components: " + base64.StdEncoding.EncodeToString(b) + "\n"
		m += "data:\n  metadata: |\n    " + strings.ReplaceAll(strings.TrimSuffix(md, "\n"), "\n", "\n    ") + "\n"
	} else {
		q, _ := json.Marshal(comp)
		m += "data:\n  components: " + string(q) + "\n  metadata: |\n    " + strings.ReplaceAll(strings.TrimSuffix(md, "\n"), "\n", "\n    ") + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// run runs a built binary; it returns stdout, stderr and the exit code.
func runBin(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	t.Fatalf("%s %v: %v", bin, args, err)
	return "", "", -1
}

// imageRefErrors are the messages of the image-ref errors of a JSON report.
func imageRefErrors(t *testing.T, out string) []string {
	t.Helper()
	var rep struct {
		Findings []struct{ Check, Severity, Message string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report: %v\n%.2000s", err, out)
	}
	var msgs []string
	for _, f := range rep.Findings {
		if f.Check == "image-ref" && f.Severity == "error" {
			msgs = append(msgs, f.Message)
		}
	}
	return msgs
}

// TestIntegrationHiddenImages: each way of writing an image that a YAML
// reader resolves and a line scan misses, in the vendored YAML and blob
// and in plain data.components, gives the image in `builder images
// --output list` and a red image-ref from `verifier check` (exit 1); the
// clean package lists its image and passes.
func TestIntegrationHiddenImages(t *testing.T) {
	verifierBin, builderBin := verifierBinary(t), buildBinary(t, "builder")
	for _, gz := range []bool{true, false} {
		clean := hiddenImagePackage(t, cleanComponents, gz)
		if out, errOut, code := runBin(t, builderBin, "images", "--output", "list", clean); code != 0 || out != "example.com/ok:v1.0.0\n" {
			t.Fatalf("clean (gz %v): builder images: exit %d\n%s%s", gz, code, out, errOut)
		}
		if out, _, code := runBin(t, verifierBin, "check", "--output", "json", clean); code != 0 {
			t.Fatalf("clean (gz %v): verifier check: exit %d\n%.3000s", gz, code, out)
		}
		for name, doc := range hiddenImageDocs {
			root := hiddenImagePackage(t, cleanComponents+"---\n"+doc, gz)
			out, errOut, code := runBin(t, builderBin, "images", "--output", "list", root)
			if code != 0 || !strings.Contains("\n"+out, "\n"+evilImage+"\n") {
				t.Errorf("%s (gz %v): builder images --output list: exit %d, %q (%s)", name, gz, code, out, errOut)
			}
			out, _, code = runBin(t, verifierBin, "check", "--output", "json", root)
			if msgs := imageRefErrors(t, out); code != 1 || len(msgs) == 0 {
				t.Errorf("%s (gz %v): verifier check: exit %d, image-ref errors %q", name, gz, code, msgs)
			}
		}
	}
}

// TestIntegrationImageValuesEscaped: an image value holding a newline and
// terminal controls is never printed as an image line: not by --output
// list (a mirroring script's input), not raw by the human output, and
// image-ref is red.
func TestIntegrationImageValuesEscaped(t *testing.T) {
	verifierBin, builderBin := verifierBinary(t), buildBinary(t, "builder")
	doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: \"example.com/ok:v1.0.0\\nevil.example/x:latest\\x1b[2J\"\n"
	for _, gz := range []bool{true, false} {
		root := hiddenImagePackage(t, cleanComponents+"---\n"+doc, gz)
		out, _, code := runBin(t, builderBin, "images", "--output", "list", root)
		if code != 0 || out != "example.com/ok:v1.0.0\n" {
			t.Errorf("gz %v: --output list: exit %d, %q", gz, code, out)
		}
		out, _, _ = runBin(t, builderBin, "images", root)
		if strings.Contains(out, "\x1b") || strings.Contains(out, "\nevil.example") {
			t.Errorf("gz %v: human output prints the value raw:\n%q", gz, out)
		}
		out, _, code = runBin(t, verifierBin, "check", "--output", "json", root)
		if msgs := imageRefErrors(t, out); code != 1 || len(msgs) == 0 {
			t.Errorf("gz %v: verifier check: exit %d, image-ref errors %q", gz, code, msgs)
		}
		out, _, _ = runBin(t, verifierBin, "check", root)
		if strings.Contains(out, "\x1b") || strings.Contains(out, "\nevil.example") {
			t.Errorf("gz %v: verifier's human report prints the value raw:\n%q", gz, out)
		}
	}
}
