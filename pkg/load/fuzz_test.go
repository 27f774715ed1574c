package load

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadPackage runs the whole loader over a plain manifest package made
// of the input: ConfigMaps are built, base64 decoded, blobs inflated and
// matched. It must never panic (safeLoad would turn a panic into an
// "internal error" problem, which fails here) nor fail the scan.
func FuzzLoadPackage(f *testing.F) {
	f.Add([]byte("apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  version: v1.10.1-core\n  fetchConfig:\n    selector:\n      matchLabels:\n        core-components: cozy\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.10.1-core\n  labels:\n    core-components: cozy\n  annotations:\n    provider.cluster.x-k8s.io/compressed: \"true\"\nbinaryData:\n  components: H4sIAAAAAAAAA0tMTEwEAEXlmK0EAAAA\ndata:\n  metadata: |\n    releaseSeries: [{major: 1, minor: 10, contract: v1beta1}]\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v1.0.0, labels: {a: b}}\nbinaryData:\n  components:\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v1.0.0}\nbinaryData: {components: [1, 2]}\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v1.0.0}\nbinaryData: {components: \"%%%\"}\ndata: {components: x, metadata: [x]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "pkg")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Tree(context.Background(), root, Options{Workers: 1, Limit: 1 << 20})
		if err != nil {
			t.Fatalf("Tree: %v", err)
		}
		for _, p := range tr.Packages {
			for _, pr := range p.Problems {
				if strings.Contains(pr.Message, "internal error") {
					t.Fatalf("loader panicked: %s", pr.Message)
				}
			}
		}
	})
}
