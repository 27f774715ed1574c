package vendor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

// FuzzSelectTemplate: whatever the template holds, the edit returns an
// error or a template that has the selector and keeps every line outside
// the provider's fetchConfig; it never panics.
func FuzzSelectTemplate(f *testing.F) {
	f.Add("---\nkind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  version: v1.10.1\n")
	f.Add("---\nkind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  version: v1.10.1\n{{- if .Values.registry }}\n  fetchConfig:\n    oci: x/y\n{{- end }}\n---\nkind: Other\n")
	f.Add("kind: CoreProvider\nmetadata:\n  name: cluster-api\nspec:\n  fetchConfig:\n    url: https://github.com/a/b/releases/latest/core-components.yaml\n  version: v1.10.1\n")
	f.Add("kind: CoreProvider\n  name: cluster-api\n---\nkind: CoreProvider\n  name: cluster-api\n")
	f.Fuzz(func(t *testing.T, tmpl string) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "templates", "p.yaml"), []byte(tmpl), 0o644); err != nil {
			t.Fatal(err)
		}
		tg := &target{dir: dir, pkg: &model.Package{Chart: true},
			provider: &model.Provider{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1", Location: model.Location{File: "templates/p.yaml"}}}
		_, out, _, err := tg.selectTemplate(map[string]string{SelectorLabel: "core-cluster-api"})
		if err != nil {
			return
		}
		if !strings.Contains(string(out), "      "+SelectorLabel+": core-cluster-api\n") {
			t.Fatalf("no selector in\n%s", out)
		}
		for _, l := range strings.SplitAfter(tmpl, "\n") {
			if l != "" && !strings.Contains(l, "fetchConfig") && !strings.HasPrefix(strings.TrimSpace(l), "{{") && !strings.HasPrefix(l, "    ") && !strings.Contains(string(out), l) {
				t.Fatalf("line %q is gone from\n%s", l, out)
			}
		}
	})
}
