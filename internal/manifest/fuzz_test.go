package manifest

import (
	"bytes"
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
		objs, probs := Parse(data, "f.yaml")
		lines := bytes.Count(data, []byte{'\n'}) + 1
		for _, o := range objs {
			if o.Line < 1 || o.Line > lines {
				t.Fatalf("object %s/%s at line %d of a %d-line text", o.Kind, o.Name, o.Line, lines)
			}
			if d := duplicateKeys(o.Root); len(d) > 0 {
				t.Fatalf("object with duplicate key %q returned", d[0].key)
			}
			// Lookups on whatever came back must not panic either.
			_, _, _ = StringScalar(LookupPath(o.Root, "spec", "version"))
			_ = StringMap(LookupPath(o.Root, "metadata", "labels"), func(string, string, int) {})
			_ = IsProvider(o) || IsComponentsConfigMap(o)
		}
		for _, p := range probs {
			if p.File != "f.yaml" || p.Check != model.CheckPackageLoad || p.Message == "" || p.Line < 0 || p.Line > lines {
				t.Fatalf("bad problem %+v (text has %d lines)", p, lines)
			}
		}
	})
}
