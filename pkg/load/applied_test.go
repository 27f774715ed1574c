package load

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

// TestApplied: each release's objects are listed once, from the vendored
// YAML when the blob inflates to exactly it, else from the blob; CRDs
// carry their JSON.
func TestApplied(t *testing.T) {
	dir := filepath.Join("..", "..", "examples", "packages", "capi-providers-core")
	p, err := Package(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	count := func(p *model.Package) (objs, crds int, file string, inBlob bool) {
		for _, o := range p.Applied {
			objs++
			file, inBlob = o.File, o.InBlob
			if o.Kind == "CustomResourceDefinition" {
				var v map[string]any
				if json.Unmarshal(o.CRD, &v) != nil || v["kind"] != "CustomResourceDefinition" {
					t.Errorf("%s: CRD JSON %q", o.Name, o.CRD)
				}
				crds++
			}
			if o.Release != "v1.10.1-core" || len(o.Providers) != 1 || o.Line == 0 {
				t.Errorf("object %+v", o)
			}
		}
		return
	}
	objs, crds, file, inBlob := count(p)
	if crds != 6 || objs < 12 || file != "files/core-components.yaml" || inBlob {
		t.Fatalf("%d objects, %d CRDs from %s (in blob %v), want 6 CRDs of the YAML", objs, crds, file, inBlob)
	}

	// The YAML edited: the blob (what the cluster gets) is read instead.
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cp, "files", "core-components.yaml"), []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q, err := Package(context.Background(), cp, Options{})
	if err != nil {
		t.Fatal(err)
	}
	objs2, crds2, file, inBlob := count(q)
	if objs2 != objs || crds2 != 6 || file != "files/components.gz" || !inBlob {
		t.Fatalf("%d objects, %d CRDs from %s (in blob %v), want %d objects of the blob", objs2, crds2, file, inBlob, objs)
	}
}
