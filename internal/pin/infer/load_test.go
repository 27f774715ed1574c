package infer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/pin"

	"github.com/pinseal/pinseal/internal/testkit/timebound"
)

const (
	shaA = "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
	shaB = "3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d"
	shaC = "2e7d2c03a9507ae265ecf5b5356885a53393a2029d241394997265a1a25aefc6"
	shaD = "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4"
)

func pkgDir(name string) string {
	return filepath.Join("testdata", "tree", "packages", "system", name)
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func TestLoadDir(t *testing.T) {
	capiURL := "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/"
	cabptURL := "https://github.com/siderolabs/cluster-api-bootstrap-provider-talos/releases/download/v0.6.12/"
	capmoxURL := "https://github.com/ionos-cloud/cluster-api-provider-proxmox/releases/download/v0.7.7/"
	for _, tc := range []struct {
		pkg  string
		want *pin.Set
	}{
		{
			// Two providers (kubeadm + talos), URL/SHA-256 pairs, export,
			// ?=, :=, ${…}, a comment after a value, an include outside the
			// package (whose variables must not count).
			pkg: "capi-providers-bootstrap",
			want: &pin.Set{
				Source: "Makefile", Namespace: "cozy-cluster-api", Name: "capi-providers-bootstrap",
				File: &pin.File{Providers: []pin.Provider{
					{Version: "v1.10.1", Sources: []pin.Source{{URL: capiURL + "bootstrap-components.yaml", SHA256: shaA, To: "files/bootstrap-components.yaml"}}},
					{Version: "v0.6.12", Sources: []pin.Source{{URL: cabptURL + "bootstrap-components.yaml", SHA256: shaB, To: "files/bootstrap-components-talos.yaml"}}},
				}},
				Versions: []pin.Var{
					{Name: "CAPI_VERSION", Value: "v1.10.1", Known: true, File: "Makefile", Line: 5},
					{Name: "CABPT_UPSTREAM_VERSION", Value: "v0.6.12", Known: true, File: "Makefile", Line: 6},
				},
				Unpinned: []pin.Var{
					{Name: "CABPT_METADATA_URL", Value: cabptURL + "metadata.yaml", Known: true, File: "Makefile", Line: 12},
				},
			},
		},
		{
			// NAME=x without spaces, $(shell …), !=, an undefined reference,
			// a literal URL in a recipe with no digest, a shell substitution.
			pkg: "capi-providers-proxmox",
			want: &pin.Set{
				Source: "Makefile", Namespace: "cozy-cluster-api", Name: "capi-providers-proxmox",
				File: &pin.File{Providers: []pin.Provider{
					{Version: "v0.7.7", Sources: []pin.Source{{URL: capmoxURL + "infrastructure-components.yaml", SHA256: shaC, To: "files/infrastructure-components.yaml"}}},
				}},
				Versions: []pin.Var{
					{Name: "CAPMOX_VERSION", Value: "v0.7.7", Known: true, File: "Makefile", Line: 3},
					{Name: "KUBEVIRT_VERSION", Value: "$(shell curl -s https://api.github.com/repos/kubevirt/kubevirt/releases/latest | jq -r .tag_name)", File: "Makefile", Line: 6},
					{Name: "IPAM_VERSION", Value: "git describe --tags", File: "Makefile", Line: 7},
					{Name: "TALOS_VERSION", Value: "$(UNDEFINED_BASE).1", File: "Makefile", Line: 8},
				},
				Unpinned: []pin.Var{
					{Value: capmoxURL + "metadata.yaml", Known: true, File: "Makefile", Line: 14},
					{Value: "https://raw.githubusercontent.com/ionos-cloud/cluster-api-provider-proxmox/$(git rev-parse HEAD)/README.md", File: "Makefile", Line: 15},
				},
			},
		},
		{
			// An in-package include holds the version; literal URLs pinned by
			// a digest in the same rule; includes that are missing, computed
			// or absolute are ignored.
			pkg: "capi-providers-core",
			want: &pin.Set{
				Source: "Makefile", Namespace: "cozy-cluster-api", Name: "capi-providers-core",
				File: &pin.File{Providers: []pin.Provider{
					{Version: "v1.10.1", Sources: []pin.Source{
						{URL: capiURL + "core-components.yaml", SHA256: shaD}, // -o $@.tmp: not a known path
						{URL: capiURL + "metadata.yaml", SHA256: "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea", To: "files/metadata.yaml"},
					}},
				}},
				Versions: []pin.Var{
					{Name: "CAPI_VERSION", Value: "v1.10.1", Known: true, File: "versions.mk", Line: 2},
				},
			},
		},
		{
			// Values set under ifeq are unknown; += appends; define blocks;
			// a self-reference; $$ (a shell variable).
			pkg: "capi-providers-conditional",
			want: &pin.Set{
				Source: "Makefile", Name: "capi-providers-conditional",
				Versions: []pin.Var{
					{Name: "CAPK_VERSION", Value: "v0.1.10", File: "Makefile", Line: 5},
					{Name: "BASE_VERSION", Value: "v1 .2", Known: true, File: "Makefile", Line: 8},
					{Name: "SELF_VERSION", Value: "$(SELF_VERSION)", File: "Makefile", Line: 12},
					{Name: "DOLLAR_VERSION", Value: "$$HOME", File: "Makefile", Line: 13},
				},
				Unpinned: []pin.Var{
					{Name: "EXTRA_URL", Value: "https://example.com/extra.yaml", Known: true, File: "Makefile", Line: 9},
				},
			},
		},
		{
			// The cozystack infraprovider: the Makefile pins nothing, the
			// image's Dockerfile has ARG VERSION= and an unpinned tarball.
			pkg: "capi-providers-infraprovider",
			want: &pin.Set{
				Source: "Dockerfile", Namespace: "cozy-cluster-api", Name: "capi-providers-infraprovider",
				Versions: []pin.Var{
					{Name: "VERSION", Value: "v0.1.10", Known: true, File: "images/cluster-api-provider-kubevirt/Dockerfile", Line: 4},
				},
				Unpinned: []pin.Var{
					{Value: "https://github.com/kubernetes-sigs/cluster-api-provider-kubevirt/archive/6dbc11c4d0cbfbdcd618566538c10b0d4a07516b.tar.gz",
						Known: true, File: "images/cluster-api-provider-kubevirt/Dockerfile", Line: 10},
				},
			},
		},
		{
			// ADD --checksum and RUN … sha256sum -c are pinned; the rest not.
			pkg: "docker-root",
			want: &pin.Set{
				Source: "Dockerfile",
				Versions: []pin.Var{
					{Name: "CAPK_VERSION", Value: "v0.1.9", Known: true, File: "Dockerfile", Line: 2},
					{Name: "TOOL_VERSION", Value: "${UNSET_BASE}-1", File: "Dockerfile", Line: 4},
				},
				Unpinned: []pin.Var{
					{Value: "https://example.com/unpinned.tar.gz", Known: true, File: "Dockerfile", Line: 7},
					{Value: "https://example.com/d.tar.gz", Known: true, File: "Dockerfile", Line: 10},
				},
			},
		},
		{
			// pin.yaml wins; NAME/NAMESPACE still come from the Makefile.
			pkg: "capi-providers-pinfile",
			want: &pin.Set{
				Source: "pin.yaml", Namespace: "cozy-cluster-api", Name: "capi-providers-pinfile",
				File: &pin.File{Providers: []pin.Provider{{
					Kind: "InfrastructureProvider", Name: "proxmox", Version: "v0.7.7", Release: "v0.7.7-infraprovider-proxmox",
					Sources: []pin.Source{
						{URL: capmoxURL + "infrastructure-components.yaml", SHA256: shaA, To: "files/infrastructure-components.yaml"},
						{URL: capmoxURL + "metadata.yaml", SHA256: shaB, To: "files/metadata.yaml"},
					},
					Patches: []string{},
					Blob:    "files/components.gz",
				}}},
			},
		},
		{pkg: "plain-chart", want: &pin.Set{}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			got, err := LoadDir(pkgDir(tc.pkg))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", dump(got), dump(tc.want))
			}
		})
	}
}

func TestLoadDirBadPinFile(t *testing.T) {
	dir := pkgDir("capi-providers-badpin")
	set, err := LoadDir(dir)
	if err == nil {
		t.Fatal("accepted a bad pin.yaml")
	}
	if set == nil || set.Source != pin.SourcePinFile || set.File != nil {
		t.Errorf("set = %+v, want Source pin.yaml and no File", set)
	}
	want := filepath.Join(dir, "pin.yaml") + ":9: providers[0].sources[0].sha256:"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

func TestLoadDirMissing(t *testing.T) {
	dir := t.TempDir()
	set, err := LoadDir(dir)
	if err != nil || !reflect.DeepEqual(set, &pin.Set{}) {
		t.Errorf("empty dir: %+v, %v", set, err)
	}
	if _, err := LoadDir(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing directory is not an error")
	}
}

// A pin.yaml or include that is a symlink out of the package is not read.
func TestLoadDirSymlinkEscape(t *testing.T) {
	outside := t.TempDir()
	// A valid pin file, so that only the symlink can keep it from being read.
	good := []byte(`providers:
- kind: CoreProvider
  name: cluster-api
  version: v1.10.1
  release: v1.10.1-core
  sources:
  - {url: "https://github.com/kubernetes-sigs/cluster-api/releases/download/v1.10.1/core-components.yaml", sha256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", to: files/core-components.yaml}
`)
	if err := os.WriteFile(filepath.Join(outside, "pin.yaml"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "v.mk"), []byte("X_VERSION = v9.9.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	pkg := t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "v.mk"), filepath.Join(pkg, "v.mk")); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "Makefile"), []byte("include v.mk\nY_VERSION = v1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := LoadDir(pkg)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Versions) != 1 || set.Versions[0].Name != "Y_VERSION" {
		t.Errorf("read through a symlink out of the package: %+v", set.Versions)
	}

	if err := os.Symlink(filepath.Join(outside, "pin.yaml"), filepath.Join(pkg, "pin.yaml")); err != nil {
		t.Fatal(err)
	}
	if set, err := LoadDir(pkg); err == nil {
		t.Errorf("pin.yaml symlinked out of the package was read: %+v", set)
	}
}

// TestLoadDirComputedVersionFromDockerfile: the real cpprovider computes
// its version from a Dockerfile under images/; the Dockerfile's ARG is read
// as the literal pin beside the unknown Makefile variable.
func TestLoadDirComputedVersionFromDockerfile(t *testing.T) {
	dir := t.TempDir()
	mk := "NAME=capi-providers-cpprovider\nUPSTREAM_VERSION = $(shell awk -F= '/^ARG VERSION=/{print $$2}' images/cluster-api-control-plane-provider-kamaji/Dockerfile)\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"images/cluster-api-control-plane-provider-kamaji/Dockerfile": "FROM golang AS build\nARG VERSION=v0.19.0\nRUN echo $VERSION\n",
		"images/other/Dockerfile":                                     "FROM scratch\nARG VERSION=v9.9.9\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Versions) != 2 || set.Versions[0].Known || !set.Versions[1].Known ||
		set.Versions[1].Value != "v0.19.0" || set.Versions[1].File != "images/cluster-api-control-plane-provider-kamaji/Dockerfile" || set.Versions[1].Line != 2 {
		t.Fatalf("versions = %s", dump(set.Versions))
	}
	// A computed value that names no Dockerfile reads every Dockerfile.
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("UPSTREAM_VERSION = $(shell cat VERSION)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err = LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Versions) != 3 {
		t.Fatalf("versions = %s", dump(set.Versions))
	}
}

// TestLoadDirFIFOs: a FIFO where a Makefile, an included file or pin.yaml
// would be is refused without being opened (opening it would wait for a
// writer for ever).
func TestLoadDirFIFOs(t *testing.T) {
	for _, name := range []string{"Makefile", "v.mk", "pin.yaml"} {
		t.Run(name, func(t *testing.T) {
			pkg := t.TempDir()
			if name == "v.mk" {
				if err := os.WriteFile(filepath.Join(pkg, "Makefile"), []byte("include v.mk\nY_VERSION = v1.0.0\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mkfifo(filepath.Join(pkg, name), 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() { _, err := LoadDir(pkg); done <- err }()
			select {
			case err := <-done:
				if name != "v.mk" && (err == nil || !strings.Contains(err.Error(), "not a regular file")) {
					t.Errorf("err = %v, want not a regular file", err)
				}
			case <-time.After(timebound.Hang):
				t.Fatal("LoadDir blocked on a FIFO")
			}
		})
	}
}

// TestLoadDirRead: LoadDirRead gives what LoadDir gives for every package
// of the test tree when it is handed the files' own bytes; a file it is
// handed is not read again (the bytes handed are the ones parsed), and one
// it is not handed, or one over the reader's bound, is read from the
// directory.
func TestLoadDirRead(t *testing.T) {
	ents, err := os.ReadDir(pkgDir(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		dir := pkgDir(e.Name())
		want, werr := LoadDir(dir)
		got, gerr := LoadDirRead(dir, func(name string) ([]byte, bool) {
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			return b, err == nil
		})
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("%s: LoadDirRead = %+v, %v; LoadDir = %+v, %v", e.Name(), got, gerr, want, werr)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("NAMESPACE = on-disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		handed string
		want   string
	}{
		{"NAMESPACE = handed\n", "handed"},
		{"NAMESPACE = handed\n" + strings.Repeat("#", maxMakefileSize), "on-disk"}, // over the bound: read
		{"", "on-disk"}, // not handed
	} {
		set, err := LoadDirRead(dir, func(name string) ([]byte, bool) {
			return []byte(tc.handed), name == "Makefile" && tc.handed != ""
		})
		if err != nil || set.Namespace != tc.want {
			t.Errorf("handed %.20q: namespace %q, %v; want %q", tc.handed, set.Namespace, err, tc.want)
		}
	}
}
