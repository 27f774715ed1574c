//go:build integration

package add

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/fetch"
	"github.com/pinseal/pinseal/pkg/pin"
)

// TestAddCozystackTree: added into a tree shaped like Cozystack's
// packages/system (Makefile pins, no pin.yaml), a package has Makefile
// pins and a components target; `make components`, with a built builder
// on PATH, rebuilds it byte-identical, the blob included.
func TestAddCozystackTree(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	s := standIn(t)
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	sys := filepath.Join(root, "packages", "system")
	ctx := context.Background()
	var added []string
	for _, tc := range []struct{ dir, provider, repo, release string }{
		{"capi-providers-ipam-in-cluster", "IPAMProvider/in-cluster", ipamRepo, "v1.0.3-ipam-in-cluster"},
		{"capi-providers-infraprovider-proxmox", "InfrastructureProvider/proxmox", capmoxRepo, "v0.7.8-infraprovider-proxmox"},
	} {
		dir := filepath.Join(sys, tc.dir)
		res, err := Add(ctx, dir, opts(s, tc.provider, tc.repo))
		if err != nil {
			t.Fatal(err)
		}
		if res.Pins != pin.SourceMakefile || res.Release != tc.release || res.Namespace != "cozy-cluster-api" {
			t.Errorf("%s: pins %q release %q namespace %q", tc.dir, res.Pins, res.Release, res.Namespace)
		}
		if _, err := os.Stat(filepath.Join(dir, pin.FileName)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a pin.yaml beside Makefile-pinned siblings: %v", tc.dir, err)
		}
		mk, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
		for _, want := range []string{"_COMPONENTS_SHA256 = " + res.Digests[0].SHA256, "_METADATA_SHA256 = " + res.Digests[1].SHA256, "\ncomponents:\n\t$(BUILDER) build .\n", "include ../../../scripts/package.mk"} {
			if !strings.Contains(string(mk), want) {
				t.Errorf("%s: Makefile lacks %q:\n%s", tc.dir, want, mk)
			}
		}
		added = append(added, dir)
	}
	for _, f := range errorFindings(t, root) {
		for _, d := range added {
			if strings.Contains(f, filepath.Base(d)+" ") {
				t.Errorf("verifier check: %s", f)
			}
		}
	}

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "builder"), "./cmd/builder")
	build.Dir, build.Env = repoRoot(), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	before := hashTree(t, root)
	for _, d := range added {
		// The blob is made stale: make components writes it again, byte for byte.
		stale, err := blob.CompressBytes([]byte("# stale\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "files", "components.gz"), stale, 0o644); err != nil {
			t.Fatal(err)
		}
		mk := exec.Command("make", "components")
		mk.Dir = d
		mk.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), fetch.MirrorsEnv+"="+s.Mirror())
		if out, err := mk.CombinedOutput(); err != nil {
			t.Fatalf("make components in %s: %v\n%s", d, err, out)
		}
	}
	if after := hashTree(t, root); !mapsEqual(before, after) {
		for k := range mergeKeys(before, after) {
			if before[k] != after[k] {
				t.Errorf("make components changed %s", k)
			}
		}
		t.Error("make components did not rebuild the packages byte-identical")
	}
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
