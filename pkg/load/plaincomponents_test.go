package load

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/pkg/model"
)

const plainProvider = "apiVersion: operator.cluster.x-k8s.io/v1alpha2\nkind: CoreProvider\nmetadata:\n  name: cluster-api\n  namespace: capi-system\nspec:\n  version: v1.10.1\n  fetchConfig:\n    selector:\n      matchLabels:\n        core-components: plain\n---\n" +
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v1.10.1\n  namespace: capi-system\n  labels:\n    core-components: plain\ndata:\n  metadata: |\n    releaseSeries: [{major: 1, minor: 10, contract: v1beta1}]\n"

// loadPlain loads a plain-manifest package whose ConfigMap's
// data.components is comp, written as a literal block scalar (block) or
// a double-quoted string.
func loadPlain(t *testing.T, comp string, block bool) *model.Package {
	t.Helper()
	var v string
	if block {
		v = "|\n    " + strings.ReplaceAll(strings.TrimSuffix(comp, "\n"), "\n", "\n    ") + "\n"
	} else {
		q, _ := json.Marshal(comp)
		v = string(q) + "\n"
	}
	root := t.TempDir()
	dir := filepath.Join(root, "pkg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), []byte(plainProvider+"  components: "+v), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := Tree(context.Background(), root, Options{Workers: 1, Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Packages) != 1 {
		t.Fatalf("%d packages", len(tr.Packages))
	}
	return tr.Packages[0]
}

const plainDeploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: capi-controller-manager\nspec:\n  template:\n    spec:\n      containers:\n      - name: manager\n        image: evil.example/x:latest\n"

// Uncompressed data.components of a plain manifest are read for images,
// on the line of the file they are written on.
func TestPlainComponentsImages(t *testing.T) {
	p := loadPlain(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: capi-system}\n---\n"+plainDeploy, true)
	if len(p.Images) != 1 || p.Images[0].Ref != "evil.example/x:latest" || p.Images[0].File != "manifest.yaml" || p.Images[0].InBlob {
		t.Fatalf("images %+v", p.Images)
	}
	data, _ := os.ReadFile(filepath.Join(p.Dir, "manifest.yaml"))
	if l := strings.Split(string(data), "\n")[p.Images[0].Line-1]; strings.TrimSpace(l) != "image: evil.example/x:latest" {
		t.Errorf("line %d is %q", p.Images[0].Line, l)
	}
	if p.Images[0].Release != "v1.10.1" || !slices.Equal(p.Images[0].Providers, []string{"CoreProvider/cluster-api"}) {
		t.Errorf("image %+v", p.Images[0])
	}
	// The clean twin: no image, nothing listed.
	if p := loadPlain(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: capi-system}\n", true); len(p.Images) != 0 {
		t.Errorf("images %+v", p.Images)
	}
	// A value that is no reference is no image, and an error.
	p = loadPlain(t, strings.Replace(plainDeploy, "evil.example/x:latest", "\"evil.example/x:v1\\nmirror.example/y:latest\"", 1), false)
	if len(p.Images) != 0 || len(p.UnreadWorkloads) != 1 || !p.UnreadWorkloads[0].Error {
		t.Errorf("images %+v, unread %+v", p.Images, p.UnreadWorkloads)
	}
}

// FuzzPlainComponents: every image the scan finds in a ConfigMap's plain
// data.components is on the package's inventory, or the package records
// why it is not (an unread or ambiguous document).
func FuzzPlainComponents(f *testing.F) {
	f.Add(plainDeploy)
	f.Add("apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(plainDeploy, "\n"), "\n", "\n  ") + "\n")
	f.Add(strings.Replace(plainDeploy, "image: evil.example/x:latest", "<<: {image: evil.example/x:latest}", 1))
	f.Fuzz(func(t *testing.T, comp string) {
		if len(comp) > 32<<10 || !utf8.ValidString(comp) {
			return
		}
		p := loadPlain(t, comp, false)
		cm := p.ConfigMaps
		if len(cm) != 1 || cm[0].Components == nil {
			return // the ConfigMap did not load: not this target's concern
		}
		found, err := images.ScanBytes([]byte(comp))
		if len(images.Problems(err)) > 0 && len(p.UnreadWorkloads) == 0 {
			t.Fatalf("the scan reports %v, the package nothing", err)
		}
		var listed []string
		for _, img := range p.Images {
			listed = append(listed, img.Ref)
		}
		for _, f := range found {
			if !slices.Contains(listed, f.Ref) {
				t.Fatalf("image %q of data.components is not listed (%q)", f.Ref, listed)
			}
		}
	})
}
