package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/blob"
	"github.com/pinseal/pinseal/pkg/sign"
)

func byID(t *testing.T, provs []Provider) map[string]Provider {
	t.Helper()
	m := map[string]Provider{}
	for _, p := range provs {
		m[p.ID] = p
	}
	return m
}

// TestLoadWithoutPinFile: the bootstrap package of the real tree's shape
// (no pin.yaml, two providers, talos's own file names, a Makefile version
// variable) gives two releases from its ConfigMaps, byte for byte the
// vendored files, with the version variable recorded and no materials;
// kubeadm's blob, made by gzip without -n, in its reproducible encoding.
func TestLoadWithoutPinFile(t *testing.T) {
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, fixture.AsItStandsBootstrap)
	provs, err := Load(context.Background(), dir, Options{BuilderVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	m := byID(t, provs)
	if len(m) != 2 {
		t.Fatalf("providers %v", provs)
	}
	for id, want := range map[string]struct{ release, version, yaml, md, blob string }{
		"BootstrapProvider/kubeadm": {"v1.10.1-bootstrap", "v1.10.1", "files/bootstrap-components.yaml", "files/metadata.yaml", "files/components.gz"},
		"BootstrapProvider/talos":   {"v0.6.12-bootstrap-talos", "v0.6.12", "files/bootstrap-components-talos.yaml", "files/metadata-talos.yaml", "files/components-talos.gz"},
	} {
		p := m[id]
		r := p.Release
		if r == nil || len(p.Refused) > 0 {
			t.Fatalf("%s: %+v", id, p)
		}
		read := func(rel string) []byte { b, _ := os.ReadFile(filepath.Join(dir, rel)); return b }
		wantBlob := read(want.blob)
		if slices.Contains(fixture.AsItStandsDirtyHeader, id) {
			wantBlob, _ = blob.CompressBytes(read(want.yaml))
		}
		if r.Release != want.release || r.Version != want.version || r.Type != "bootstrap" || r.Contract != "v1beta1" ||
			!bytes.Equal(r.YAML, read(want.yaml)) || !bytes.Equal(r.Metadata, read(want.md)) || !bytes.Equal(r.Blob, wantBlob) {
			t.Errorf("%s: release %s version %s type %s contract %s, or files differ from %s", id, r.Release, r.Version, r.Type, r.Contract, want.yaml)
		}
		if len(r.Pins) != 0 || len(r.VersionPins) != 1 || r.VersionPins[0].Name != "CABPT_UPSTREAM_VERSION" || r.VersionPins[0].Value != "v0.6.12" {
			t.Errorf("%s: pins %v, version pins %v", id, r.Pins, r.VersionPins)
		}
		// The attestation says there are no materials, and why.
		stmt, err := sign.ProvenanceStatement("r/x", digest.FromString("m"), *r)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Predicate struct {
				BuildDefinition struct {
					ExternalParameters map[string]any `json:"externalParameters"`
				} `json:"buildDefinition"`
			} `json:"predicate"`
		}
		if err := json.Unmarshal(stmt, &st); err != nil {
			t.Fatal(err)
		}
		ep := st.Predicate.BuildDefinition.ExternalParameters
		if ep["pins"] != sign.NoPins || ep["versionPins"] == nil {
			t.Errorf("%s: externalParameters %v", id, ep)
		}
	}
}

// TestLoadRefusesRedProviders: a provider whose offline checks are red
// is refused with the findings, its paths and commands relative to where
// push runs; the other provider of the package is not.
func TestLoadRefusesRedProviders(t *testing.T) {
	root := editedTalos(t)

	dir := filepath.Join(root, fixture.AsItStandsBootstrap)
	provs, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := byID(t, provs)
	tal, kub := m["BootstrapProvider/talos"], m["BootstrapProvider/kubeadm"]
	if tal.Release != nil || len(tal.Refused) != 1 || tal.Refused[0].Check != "blob-yaml" {
		t.Fatalf("talos: %+v", tal)
	}
	f := tal.Refused[0]
	slash := filepath.ToSlash(dir)
	if f.Package != slash || !strings.HasPrefix(f.File, slash+"/files/") || !strings.Contains(f.Hint, "`builder build "+slash+"`") {
		t.Errorf("finding not relative to where push runs: %+v", f)
	}
	if kub.Release == nil || len(kub.Refused) != 0 {
		t.Fatalf("kubeadm: %+v", kub)
	}
}

func TestLoadSkipsAndRefusesDirs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "provider.yaml"), []byte(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: ControlPlaneProvider
metadata:
  name: kamaji
  namespace: capi
spec:
  version: v0.19.0-cozystack.0
  fetchConfig:
    oci: ghcr.io/acme/control-plane-kamaji
`), 0o644)
	provs, err := Load(context.Background(), dir, Options{})
	if err != nil || len(provs) != 1 || provs[0].Release != nil || !strings.Contains(provs[0].Skipped, "spec.fetchConfig.oci") {
		t.Fatalf("OCI provider: %+v, %v", provs, err)
	}
	if _, err := Load(context.Background(), t.TempDir(), Options{}); !errors.Is(err, ErrNoPackage) {
		t.Fatalf("empty dir: %v", err)
	}
}

// TestReleasesWithPinFile: a package with a pin.yaml is pushed as its pins
// say (materials = the pins), and still refused when its checks are red.
func TestReleasesWithPinFile(t *testing.T) {
	root := fixture.CleanCopy(t)
	dir := filepath.Join(root, "packages/system/capi-providers-core")
	provs, err := Releases(context.Background(), dir, Options{})
	if err != nil || len(provs) != 1 || provs[0].Release == nil || len(provs[0].Release.Pins) != 2 || provs[0].Release.Release != "v1.10.1-core" {
		t.Fatalf("pinned core: %+v, %v", provs, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "files/core-components.yaml"))
	os.WriteFile(filepath.Join(dir, "files/core-components.yaml"), append(b, "# edited\n"...), 0o644)
	provs, err = Releases(context.Background(), dir, Options{})
	if err != nil || len(provs) != 1 || provs[0].Release != nil || len(provs[0].Refused) == 0 {
		t.Fatalf("edited pinned core: %+v, %v", provs, err)
	}
}

// TestLoadMakefilePins: a Makefile that pins talos's upstream YAML by
// URL and SHA-256 gives talos's release those materials (the pin the
// registry checks compare with), and kubeadm's none.
func TestLoadMakefilePins(t *testing.T) {
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, fixture.AsItStandsBootstrap)
	yml, err := os.ReadFile(filepath.Join(dir, "files/bootstrap-components-talos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(yml)
	mk := "export NAME=capi-providers-bootstrap\nexport NAMESPACE=cozy-cluster-api\n\n" +
		"CABPT_VERSION = v0.6.12\nCABPT_URL = https://github.com/siderolabs/cluster-api-bootstrap-provider-talos/releases/download/$(CABPT_VERSION)/bootstrap-components.yaml\n" +
		"CABPT_SHA256 = " + hex.EncodeToString(sum[:]) + "\n\nupdate:\n\tcurl -fsSL $(CABPT_URL) -o files/bootstrap-components-talos.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	provs, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := byID(t, provs)
	tal, kub := m["BootstrapProvider/talos"].Release, m["BootstrapProvider/kubeadm"].Release
	if tal == nil || kub == nil {
		t.Fatalf("%+v", provs)
	}
	if len(tal.Pins) != 1 || tal.Pins[0].SHA256 != hex.EncodeToString(sum[:]) || tal.Version != "v0.6.12" {
		t.Errorf("talos: pins %+v, version %s", tal.Pins, tal.Version)
	}
	if len(kub.Pins) != 0 {
		t.Errorf("kubeadm: pins %+v", kub.Pins)
	}
}

// Pushing a directory that holds several packages: a refused provider's
// finding names its package, file and commands below that directory once,
// not with the package path repeated.
func TestLoadRefusesNestedPackage(t *testing.T) {
	root := editedTalos(t)

	provs, err := Load(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tal := byID(t, provs)["BootstrapProvider/talos"]
	if tal.Release != nil || len(tal.Refused) != 1 {
		t.Fatalf("talos: %+v", tal)
	}
	f := tal.Refused[0]
	want := path.Join(filepath.ToSlash(root), fixture.AsItStandsBootstrap)
	if f.Package != want || !strings.HasPrefix(f.File, want+"/files/") || !strings.Contains(f.Hint, "`builder build "+want+"`") {
		t.Errorf("finding not relative to where push runs (package %s): %+v", want, f)
	}
}

// editedTalos writes the as-it-stands tree with talos's vendored YAML
// edited (blob-yaml fails for it) and returns its root.
func editedTalos(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := fixture.AsItStands(root); err != nil {
		t.Fatal(err)
	}
	talos := filepath.Join(root, fixture.AsItStandsBootstrap, "files/bootstrap-components-talos.yaml")
	b, err := os.ReadFile(talos)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(talos, append(b, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}
