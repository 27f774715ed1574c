package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
)

// TestRelocateCommand: `builder relocate` moves the core package's image
// in the YAML and the blob and records the map; a dry run and a second run
// write nothing; bad maps are usage errors.
func TestRelocateCommand(t *testing.T) {
	root := fixture.CleanCopy(t)
	core := filepath.Join(root, "packages/system/capi-providers-core")
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(core, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	pinBefore, yamlBefore := read("pin.yaml"), read("files/core-components.yaml")
	const m = "registry.k8s.io/cluster-api=mirror.example:5000/capi"

	out, _, err := runBuildTestCmd(t, "relocate", core, "--map", m, "--dry-run")
	if err != nil || !strings.Contains(out, "would write [pin.yaml files/core-components.yaml files/components.gz]") || read("pin.yaml") != pinBefore || read("files/core-components.yaml") != yamlBefore {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	out, _, err = runBuildTestCmd(t, "relocate", core, "--map", m)
	if err != nil || !strings.Contains(out, "files/core-components.yaml:131: registry.k8s.io/cluster-api/cluster-api-controller:v1.10.1 -> mirror.example:5000/capi/cluster-api-controller:v1.10.1") {
		t.Fatalf("relocate: %v\n%s", err, out)
	}
	if !strings.Contains(read("pin.yaml"), "  relocate:\n  - from: registry.k8s.io/cluster-api\n    to: mirror.example:5000/capi\n") ||
		!strings.Contains(read("files/core-components.yaml"), "image: mirror.example:5000/capi/cluster-api-controller:v1.10.1\n") {
		t.Errorf("pin.yaml or YAML not relocated")
	}
	out, _, err = runBuildTestCmd(t, "relocate", core, "--map", m, "--json")
	validateJSON(t, "relocate.schema.json", out)
	var res struct {
		Recorded bool
		Files    []string
		Images   []struct{ From, To string }
	}
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || !res.Recorded || len(res.Files) != 0 || len(res.Images) != 1 {
		t.Errorf("second run: %v %+v\n%s", err, res, out)
	}
	for _, bad := range [][]string{
		{"relocate", core},
		{"relocate", core, "--map", "registry.k8s.io"},
		{"relocate", core, "--map", "registry.k8s.io=mirror.example/x:v1"},
	} {
		if _, _, err := runBuildTestCmd(t, bad...); err == nil {
			t.Errorf("%v accepted", bad)
		} else if _, ok := err.(usageError); !ok {
			t.Errorf("%v: %v is not a usage error", bad, err)
		}
	}
}
