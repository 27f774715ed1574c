package artifact

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/pinseal/pinseal/internal/operator"
	"github.com/pinseal/pinseal/internal/testkit/opsim"
	"github.com/pinseal/pinseal/pkg/model"
)

// kindRelease is testRelease as a provider of kind.
func kindRelease(t testing.TB, kind string) Release {
	rel := testRelease(t)
	rel.Kind, rel.Type = kind, model.ProviderKinds[kind]
	rel.Name = strings.ToLower(strings.TrimSuffix(kind, "Provider")) + "-x"
	return rel
}

// installs checks, for every type name operator releases give rel's kind,
// that the simulated operator fetch of tag from src installs exactly rel's
// YAML and metadata.
func installs(t *testing.T, ctx context.Context, src oras.ReadOnlyTarget, tag string, rel Release) {
	t.Helper()
	types := operator.Types(rel.Kind)
	if len(types) == 0 {
		t.Fatalf("%s: no operator type", rel.Kind)
	}
	for _, tn := range types {
		comp, md, err := opsim.Fetch(ctx, src, tag, opsim.Provider{Type: tn.Type, Name: rel.Name, Version: rel.Release})
		if err != nil {
			t.Errorf("%s, operator %s (type %q): %v", rel.Kind, tn.Releases, tn.Type, err)
			continue
		}
		if !bytes.Equal(comp, rel.YAML) || !bytes.Equal(md, rel.Metadata) {
			t.Errorf("%s, operator %s (type %q): installs other bytes than the release's YAML and metadata", rel.Kind, tn.Releases, tn.Type)
		}
	}
}

// TestEveryOperatorInstallsEveryKind: what Pack writes is installed, byte
// for byte, by the simulated operator fetch for all seven kinds, with the
// current and the pre-July-2025 type names.
func TestEveryOperatorInstallsEveryKind(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	if len(operator.Kinds()) != 7 {
		t.Fatalf("operator kinds %v, want the seven", operator.Kinds())
	}
	for _, kind := range operator.Kinds() {
		rel := kindRelease(t, kind)
		mem := memory.New()
		desc, err := Pack(ctx, mem, rel)
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.Tag(ctx, desc, rel.Release); err != nil {
			t.Fatal(err)
		}
		installs(t, ctx, mem, rel.Release, rel)
	}
}

// TestOperatorLookupAgreesWithSimulation holds internal/operator's lookup (what
// the verifier judges with) to the simulated fetch, on artifacts with
// other titles than pinseal's: old pinseal layouts, typed and full
// titles, two candidates with different bytes, identical bytes under two
// titles.
func TestOperatorLookupAgreesWithSimulation(t *testing.T) {
	ctx := context.Background()
	const name, ver = "kamaji", "v0.19.0-cozystack.0"
	yaml, other, md := []byte("kind: A\n"), []byte("kind: B\n"), []byte("releaseSeries: []\n")
	layouts := map[string]map[string][]byte{
		"pinseal":                   {"components.gz": []byte("gz"), "metadata.yaml": md, "components.yaml": yaml},
		"old pinseal control plane": {"metadata.yaml": md, "controlplane-components.yaml": yaml},
		"current typed":             {"metadata.yaml": md, "control-plane-components.yaml": yaml},
		"full, current":             {"metadata.yaml": md, "control-plane-kamaji-" + ver + "-components.yaml": yaml},
		"full, other version":       {"metadata.yaml": md, "control-plane-kamaji-v0.18.0-components.yaml": yaml},
		"typed beside plain":        {"metadata.yaml": md, "control-plane-components.yaml": yaml, "components.yaml": other},
		"same bytes, two titles":    {"metadata.yaml": md, "controlplane-components.yaml": yaml, "control-plane-components.yaml": yaml},
		"full metadata":             {"metadata.yaml": other, "controlplane-kamaji-" + ver + "-metadata.yaml": md, "components.yaml": yaml},
		"no metadata":               {"components.yaml": yaml},
		"empty components":          {"metadata.yaml": md, "components.yaml": {}},
	}
	for lname, files := range layouts {
		mem := memory.New()
		var layers []ocispec.Descriptor
		for title, b := range files {
			d := content.NewDescriptorFromBytes("application/octet-stream", b)
			d.Annotations = map[string]string{ocispec.AnnotationTitle: title}
			if err := PushIfAbsent(ctx, mem, d, b); err != nil {
				t.Fatal(err)
			}
			layers = append(layers, d)
		}
		desc, err := oras.PackManifest(ctx, mem, oras.PackManifestVersion1_1, "application/x-test", oras.PackManifestOptions{Layers: layers})
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.Tag(ctx, desc, "t"); err != nil {
			t.Fatal(err)
		}
		titles := map[string]bool{}
		for title, b := range files {
			if len(b) > 0 {
				titles[title] = true
			}
		}
		for _, tn := range operator.Types("ControlPlaneProvider") {
			who := fmt.Sprintf("%s, type %q", lname, tn.Type)
			simComp, simMD, simErr := opsim.Fetch(ctx, mem, "t", opsim.Provider{Type: tn.Type, Name: name, Version: ver})
			f, err := operator.Find(titles, operator.Provider{Type: tn.Type, Name: name, Version: ver})
			if (err == nil) != (simErr == nil) {
				t.Errorf("%s: lookup error %v, simulation error %v", who, err, simErr)
				continue
			}
			if err != nil {
				continue
			}
			if !bytes.Equal(files[f.Components], simComp) || !bytes.Equal(files[f.Metadata], simMD) {
				t.Errorf("%s: lookup picks %s and %s, the simulation installs other bytes", who, f.Components, f.Metadata)
			}
		}
	}
}

// TestOCISourceRulesAgreeWithSimulation: for spec.fetchConfig.oci values
// read as internal/operator reads them, the simulated operator fetch of what
// they name installs exactly the release spec.version names whenever
// operator.Check finds no problem, and whenever it installs anything else
// Check finds one.
func TestOCISourceRulesAgreeWithSimulation(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	ctx := context.Background()
	mem := memory.New()
	rels := map[string]Release{}
	digests := map[string]string{}
	for _, r := range []string{"v0.19.0-cozystack.0", "v0.19.0-cozystack.1"} {
		rel := kindRelease(t, "ControlPlaneProvider")
		rel.Release = r
		rel.YAML = []byte("kind: Namespace\nmetadata:\n  name: " + r + "\n")
		desc, err := Pack(ctx, mem, rel)
		if err != nil {
			t.Fatal(err)
		}
		// A registry resolves a digest as well as a tag; the memory
		// store resolves what it was tagged with.
		for _, ref := range []string{r, desc.Digest.String()} {
			if err := mem.Tag(ctx, desc, ref); err != nil {
				t.Fatal(err)
			}
		}
		rels[r], digests[r] = rel, desc.Digest.String()
	}
	const version = "v0.19.0-cozystack.1"
	want := rels[version]
	for _, oci := range []string{
		"registry.example.com/capi/cp",
		"http://registry.example.com:5000/capi/cp",
		"registry.example.com/capi/cp:" + version,
		"registry.example.com/capi/cp:v0.19.0-cozystack.0",
		"registry.example.com:5000/capi/cp:v0.19.0-cozystack.0@" + digests[version],
		"registry.example.com:5000/capi/cp:" + version + "@" + digests["v0.19.0-cozystack.0"],
		"registry.example.com:5000/capi/cp:" + digests[version],
		"registry.example.com/capi/cp:v0.19.0-cozystack.0:" + version,
		"registry.example.com/capi/cp:" + version + ":v0.19.0-cozystack.0",
		"registry.example.com/capi/cp@" + digests[version],
	} {
		var errs []operator.Rule
		for _, p := range operator.Check(operator.Spec{Kind: want.Kind, Name: want.Name, Version: version, OCI: oci}) {
			if !p.Warning {
				errs = append(errs, p.Rule)
			}
		}
		src, err := operator.ParseSource(oci, version)
		if err != nil {
			if len(errs) == 0 {
				t.Errorf("%s: the operator cannot read it, Check finds nothing", oci)
			}
			continue
		}
		comp, _, err := opsim.Fetch(ctx, mem, src.Reference, opsim.Provider{Type: "control-plane", Name: want.Name, Version: version})
		if err != nil {
			t.Fatalf("%s: fetch %s: %v", oci, src.Reference, err)
		}
		same := bytes.Equal(comp, want.YAML)
		if !same && len(errs) == 0 {
			t.Errorf("%s: Check finds nothing, the operator installs other content than release %s", oci, version)
		}
		t.Logf("%s: fetches %s, installs release %s's content: %v; rules %v", oci, src.Ref(), version, same, errs)
	}
}
