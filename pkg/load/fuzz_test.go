package load

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

// FuzzLoadObjects feeds arbitrary text to the rendered-YAML parser: it must
// never panic, every object and problem must point into the text, and an
// object is never returned from a document with duplicate keys.
func FuzzLoadObjects(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.10.1-core\nbinaryData:\n  components: H4sIAAAAAAAAA0tMTEwEAEXlmK0EAAAA\n"))
	f.Add([]byte("---\n# Source: c/templates/p.yaml\napiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  version: v1.10.1-core\n  fetchConfig:\n    selector:\n      matchLabels:\n        core-components: cozy\n---\n"))
	f.Add([]byte("--- {kind: A}\n...\n--- !!map\nkind: B\n"))
	f.Add([]byte("a: &a [*a, *a]\nb: &b {x: *a, y: *b}\n"))
	f.Add([]byte("kind: A\nkind: B\nmetadata: {name: x, name: y}\n"))
	f.Add([]byte("kind: A\n\tbad\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, probs := loadObjects(data, "f.yaml")
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, o := range objs {
			if o.Line < 1 || o.Line > lines {
				t.Fatalf("object %s/%s at line %d of a %d-line text", o.Kind, o.Name, o.Line, lines)
			}
			if d := duplicateKeys(o.root); len(d) > 0 {
				t.Fatalf("object with duplicate key %q returned", d[0].key)
			}
			// Lookups on whatever came back must not panic either.
			_, _, _ = stringScalar(lookupPath(o.root, "spec", "version"))
			_ = stringMap(lookupPath(o.root, "metadata", "labels"), func(string, string, int) {})
			_ = isProvider(o) || isComponentsConfigMap(o)
		}
		for _, p := range probs {
			if p.File != "f.yaml" || p.Check != model.CheckPackageLoad || p.Message == "" || p.Line < 0 || p.Line > lines {
				t.Fatalf("bad problem %+v (text has %d lines)", p, lines)
			}
		}
	})
}

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
