package load

import (
	"bytes"
	"strings"
	"testing"
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
			if p.File != "f.yaml" || p.Check != CheckLoad || p.Message == "" || p.Line < 0 || p.Line > lines {
				t.Fatalf("bad problem %+v (text has %d lines)", p, lines)
			}
		}
	})
}

// FuzzParseMetadata: clusterctl metadata from anywhere never panics, and
// either parses or says why.
func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nreleaseSeries:\n- {major: 1, minor: 10, contract: v1beta1}\n"))
	f.Add([]byte("kind: Metadata\nreleaseSeries: [{major: x}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		md := ParseMetadata(data)
		if md == nil || (md.Err == nil && len(md.ReleaseSeries) == 0 && !strings.Contains(string(data), "releaseSeries")) {
			t.Fatalf("metadata %+v from %q", md, data)
		}
	})
}

// FuzzDiffStreams: two texts differ iff a diff comes back, and the diff
// points at the first differing byte.
func FuzzDiffStreams(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nx\nc\n"))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d := diffStreams(bytes.NewReader(a), bytes.NewReader(b))
		if bytes.Equal(a, b) != (d == nil) {
			t.Fatalf("equal=%v diff=%+v", bytes.Equal(a, b), d)
		}
		if d == nil {
			return
		}
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		if d.Offset != int64(i) || d.Line != bytes.Count(a[:i], []byte{'\n'})+1 {
			t.Fatalf("diff at line %d byte %d, want byte %d", d.Line, d.Offset, i)
		}
		if len(d.Excerpt) > diffMaxBytes || strings.Count(d.Excerpt, "\n") > diffMaxLines {
			t.Fatalf("excerpt too big: %d bytes", len(d.Excerpt))
		}
	})
}
