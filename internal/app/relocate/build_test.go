package relocate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/app/relocate"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/build"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
)

// The relocated YAML and blob are what `builder build` writes from the
// upstream bytes and the recorded relocation, byte for byte: a build (from
// an offline cache holding the upstream bytes) changes no file.
func TestRelocatedIsBuilt(t *testing.T) {
	root := fixture.CleanCopy(t)
	core := filepath.Join(root, "packages/system/capi-providers-core")
	cache := t.TempDir()
	for _, f := range []string{"files/core-components.yaml", "files/metadata.yaml"} {
		b, err := os.ReadFile(filepath.Join(core, f))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if err := os.MkdirAll(filepath.Join(cache, "sha256"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cache, "sha256", hex.EncodeToString(sum[:])), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	res, err := relocate.Package(ctx, core, relocate.Options{Maps: pin.Relocations{{From: "registry.k8s.io/cluster-api", To: "mirror.example:5000/capi"}}})
	if err != nil || len(res.Files) != 3 {
		t.Fatalf("relocate: %v, files %v", err, res)
	}
	before := map[string][]byte{}
	for _, f := range res.Files {
		before[f], _ = os.ReadFile(filepath.Join(core, f))
	}
	br, err := build.Build(ctx, core, build.Options{Fetcher: &fetch.Fetcher{CacheDir: cache, Offline: true}})
	if err != nil {
		t.Fatal(err)
	}
	if br.Changed() {
		t.Errorf("builder build of the relocated package changed files: %+v", br.Files)
	}
	for f, b := range before {
		if after, _ := os.ReadFile(filepath.Join(core, f)); string(after) != string(b) {
			t.Errorf("%s changed", f)
		}
	}
}
