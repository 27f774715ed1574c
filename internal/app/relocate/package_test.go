package relocate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/images"
	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/pin"
	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/pkg/verify"
)

const mirror = "mirror.example:5000"

var (
	capiMap    = pin.Relocation{From: "registry.k8s.io/cluster-api", To: mirror + "/capi"}
	infraMaps  = pin.Relocations{{From: "ghcr.io/ionos-cloud", To: mirror + "/ionos"}, {From: "quay.io/capk", To: mirror + "/capk"}}
	sysPackage = func(root, name string) string { return filepath.Join(root, "packages", "system", name) }
)

// relocatedTree is the fixture tree with images to relocate in a pinned
// package (core), a pinned package with patches and two providers
// (infraprovider), and an unpinned package whose blob alone holds its
// components (cpprovider: its YAML removed).
func relocatedTree(t *testing.T) string {
	t.Helper()
	root := fixture.CleanCopy(t)
	if err := os.Remove(filepath.Join(sysPackage(root, "capi-providers-cpprovider"), "files/control-plane-components.yaml")); err != nil {
		t.Fatal(err)
	}
	return root
}

// errorsOf are the error findings of verifier check on root.
func errorsOf(t *testing.T, root string) []report.Finding {
	t.Helper()
	_, r, err := verify.Run(context.Background(), root, verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []report.Finding
	for _, f := range r.Findings {
		if f.Severity == report.Error {
			out = append(out, f)
		}
	}
	return out
}

// snapshot is every file under root with its content.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refsOf lists the workload images of a file, inflating a blob.
func refsOf(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(file, ".gz") {
		if data, err = io.ReadAll(blob.Inflated(data, 1<<26)); err != nil {
			t.Fatal(err)
		}
	}
	found, err := images.Scan(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range found {
		out = append(out, f.Ref)
	}
	if len(out) == 0 {
		t.Fatalf("%s runs no image", file)
	}
	return out
}

func TestPackage(t *testing.T) {
	root := relocatedTree(t)
	if errs := errorsOf(t, root); len(errs) != 0 {
		t.Fatalf("fixture not clean: %v", errs)
	}
	core, infra, cp := sysPackage(root, "capi-providers-core"), sysPackage(root, "capi-providers-infraprovider"), sysPackage(root, "capi-providers-cpprovider")
	ctx := context.Background()
	for _, c := range []struct {
		dir   string
		maps  pin.Relocations
		files []string
	}{
		{core, pin.Relocations{capiMap}, []string{"pin.yaml", "files/core-components.yaml", "files/components.gz"}},
		{infra, infraMaps, []string{"pin.yaml", "files/proxmox-infrastructure-components.yaml", "files/components-proxmox.gz", "files/kubevirt-infrastructure-components.yaml", "files/components-kubevirt.gz"}},
		{cp, pin.Relocations{capiMap}, []string{"files/components.gz"}},
	} {
		res, err := Package(ctx, c.dir, Options{Maps: c.maps})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(res.Files)
		slices.Sort(c.files)
		if !slices.Equal(res.Files, c.files) || len(res.Images) == 0 {
			t.Errorf("%s: wrote %v, want %v; images %+v", c.dir, res.Files, c.files, res.Images)
		}
	}
	// The tree is green, and the YAML and the inflated blobs hold only
	// mirror references.
	if errs := errorsOf(t, root); len(errs) != 0 {
		t.Errorf("after relocation: %v", errs)
	}
	for _, f := range []string{
		filepath.Join(core, "files/core-components.yaml"), filepath.Join(core, "files/components.gz"),
		filepath.Join(infra, "files/proxmox-infrastructure-components.yaml"), filepath.Join(infra, "files/components-proxmox.gz"),
		filepath.Join(infra, "files/kubevirt-infrastructure-components.yaml"), filepath.Join(infra, "files/components-kubevirt.gz"),
		filepath.Join(cp, "files/components.gz"),
	} {
		for _, ref := range refsOf(t, f) {
			if !strings.HasPrefix(ref, mirror+"/") {
				t.Errorf("%s still runs %s", f, ref)
			}
		}
	}
	pf, _ := os.ReadFile(filepath.Join(infra, "pin.yaml"))
	if !strings.Contains(string(pf), "  blob: files/components-proxmox.gz\n  relocate:\n  - from: ghcr.io/ionos-cloud\n    to: mirror.example:5000/ionos\n  - from: quay.io/capk\n    to: mirror.example:5000/capk\n- kind: InfrastructureProvider\n") {
		t.Errorf("infraprovider pin.yaml:\n%s", pf)
	}

	// A second run changes nothing.
	before := snapshot(t, root)
	for _, dir := range []string{core, infra, cp} {
		maps := pin.Relocations{capiMap}
		if dir == infra {
			maps = infraMaps
		}
		res, err := Package(ctx, dir, Options{Maps: maps})
		if err != nil {
			t.Errorf("second run of %s: %v", dir, err)
		} else if len(res.Files) != 0 {
			t.Errorf("second run of %s: wrote %v", dir, res.Files)
		}
	}
	if after := snapshot(t, root); !maps2Equal(before, after) {
		t.Error("a second run changed the tree")
	}

}

func maps2Equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A failure between staging and the commit, or in the commit, leaves every
// file of the package as it was.
func TestPackageFailureLeavesPackageWhole(t *testing.T) {
	root := relocatedTree(t)
	core := sysPackage(root, "capi-providers-core")
	before := snapshot(t, root)
	beforeCommit = func() error { return errors.New("injected failure") }
	_, err := Package(context.Background(), core, Options{Maps: pin.Relocations{capiMap}})
	beforeCommit = nil
	if err == nil || !strings.Contains(err.Error(), "injected failure") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("err = %v", err)
	}
	var staged []File
	_, err = Package(context.Background(), core, Options{Maps: pin.Relocations{capiMap}, Commit: func(dir string, files []File) error {
		staged = files
		return errors.New("disk full")
	}})
	if err == nil || len(staged) != 3 {
		t.Errorf("failing commit: err %v, staged %d files", err, len(staged))
	}
	if after := snapshot(t, root); !maps2Equal(before, after) {
		t.Error("a failed relocation changed the tree")
	}
}

// A relocation pin.yaml records that the files do not reflect is exactly
// image-relocation's finding, once in the YAML and once in the blob.
func TestRecordedRelocationMismatch(t *testing.T) {
	root := fixture.CleanCopy(t)
	core := sysPackage(root, "capi-providers-core")
	pf := filepath.Join(core, "pin.yaml")
	data, _ := os.ReadFile(pf)
	text, err := setRelocate(data, map[int]pin.Relocations{0: {capiMap}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, text, 0o644); err != nil {
		t.Fatal(err)
	}
	errs := errorsOf(t, root)
	var where []string
	for _, f := range errs {
		where = append(where, f.Check+" "+f.File)
	}
	want := []string{"image-relocation packages/system/capi-providers-core/files/components.gz", "image-relocation packages/system/capi-providers-core/files/core-components.yaml"}
	slices.Sort(where)
	if !slices.Equal(where, want) {
		t.Errorf("findings %v, want %v", where, want)
	}

	// Relocated, then the recorded target changed by hand: the vendored
	// file no longer reverses to its pin.
	root = fixture.CleanCopy(t)
	core = sysPackage(root, "capi-providers-core")
	if _, err := Package(context.Background(), core, Options{Maps: pin.Relocations{capiMap}}); err != nil {
		t.Fatal(err)
	}
	pf = filepath.Join(core, "pin.yaml")
	data, _ = os.ReadFile(pf)
	if err := os.WriteFile(pf, bytes.Replace(data, []byte(mirror+"/capi"), []byte("other.example/capi"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	errs = errorsOf(t, root)
	if len(errs) != 1 || errs[0].Check != "pin-digest" || !strings.Contains(errs[0].Message, "with its relocation (registry.k8s.io/cluster-api=other.example/capi) reversed") {
		t.Errorf("findings %+v, want one pin-digest naming the relocation", errs)
	}
}

func TestPackageRefusals(t *testing.T) {
	root := fixture.CleanCopy(t)
	core := sysPackage(root, "capi-providers-core")
	before := snapshot(t, root)
	for name, c := range map[string]struct {
		maps pin.Relocations
		want string
	}{
		"to under from":             {pin.Relocations{{From: "registry.k8s.io", To: "registry.k8s.io/mirror"}}, "a second relocation would move the images again"},
		"upstream already under to": {pin.Relocations{{From: "quay.io/x", To: "registry.k8s.io/cluster-api"}}, "under a prefix the relocation moves images to"},
	} {
		_, err := Package(context.Background(), core, Options{Maps: c.maps})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
	// A package whose Makefile pins its downloads cannot record the
	// relocation: refused.
	cp := sysPackage(root, "capi-providers-cpprovider")
	mk := filepath.Join(cp, "Makefile")
	data, _ := os.ReadFile(mk)
	data = append(data, "\nCP_URL = https://example.com/v1.10.1/control-plane-components.yaml\nCP_SHA256 = "+strings.Repeat("a", 64)+"\n"...)
	if err := os.WriteFile(mk, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, root)
	if _, err := Package(context.Background(), cp, Options{Maps: pin.Relocations{capiMap}}); err == nil || !strings.Contains(err.Error(), "move the pins to a pin.yaml") {
		t.Errorf("Makefile-pinned package: err = %v", err)
	}
	if after := snapshot(t, root); !maps2Equal(before, after) {
		t.Error("a refused relocation changed the tree")
	}
}
