package bump

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
)

// TestBumpKeepsRelocation: a package whose pin.yaml records a relocation
// (as `builder relocate` writes it) keeps it across a bump: the new
// release's YAML and blob run the mirror's images, pin.yaml still records
// it, and the tree is green.
func TestBumpKeepsRelocation(t *testing.T) {
	u := newUpstream(t)
	root := fixtureTree(t, u)
	dir := pkgDir(root, "capi-providers-core")
	pf := filepath.Join(dir, "pin.yaml")
	data, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	const reloc = "  relocate:\n  - from: ghcr.io/example\n    to: mirror.example:5000/example\n"
	if err := os.WriteFile(pf, append(data, reloc...), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fetch.Fetcher{Mirrors: []fetch.Mirror{u.mirror()}, CacheDir: t.TempDir()}
	if _, err := buildPackage(dir, f); err != nil {
		t.Fatal(err)
	}
	requireClean(t, root)
	holds := func(version string) {
		t.Helper()
		yml, err := os.ReadFile(filepath.Join(dir, "files/core-components.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "image: mirror.example:5000/example/cluster-api:" + version + "\n"; !strings.Contains(string(yml), want) || strings.Contains(string(yml), "ghcr.io/example") {
			t.Errorf("the YAML lacks %q or still names ghcr.io/example", want)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "files/components.gz"))
		if err != nil {
			t.Fatal(err)
		}
		inflated, err := io.ReadAll(blob.Inflated(raw, 1<<26))
		if err != nil || string(inflated) != string(yml) {
			t.Errorf("the blob does not inflate to the relocated YAML (%v)", err)
		}
		if pin, _ := os.ReadFile(pf); !strings.Contains(string(pin), reloc) {
			t.Errorf("pin.yaml lost the relocation:\n%s", pin)
		}
	}
	holds("v1.10.1")

	o := opts(u, "v1.11.0")
	o.TrustOnFirstUse = true
	if _, err := Bump(context.Background(), dir, o); err != nil {
		t.Fatal(err)
	}
	requireClean(t, root)
	holds("v1.11.0")
}
