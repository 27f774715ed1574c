package operator

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/pkg/model"
)

func TestTypes(t *testing.T) {
	want := map[string][]string{
		"CoreProvider":             {"core"},
		"BootstrapProvider":        {"bootstrap"},
		"ControlPlaneProvider":     {"control-plane", "controlplane"},
		"InfrastructureProvider":   {"infrastructure"},
		"IPAMProvider":             {"ipam"},
		"AddonProvider":            {"addon"},
		"RuntimeExtensionProvider": {"runtimeextension"},
	}
	if len(Kinds()) != len(want) {
		t.Fatalf("kinds %v", Kinds())
	}
	for kind, types := range want {
		got := Types(kind)
		if len(got) != len(types) {
			t.Fatalf("%s: %v", kind, got)
		}
		for i, tn := range got {
			if tn.Type != types[i] || tn.Releases == "" {
				t.Errorf("%s[%d] = %+v, want type %q", kind, i, tn, types[i])
			}
		}
	}
	if Types("Deployment") != nil {
		t.Error("a kind the operator does not know has types")
	}
}

func TestFind(t *testing.T) {
	p := Provider{Type: "control-plane", Name: "kamaji", Version: "v0.19.0-cozystack.0"}
	full := "control-plane-kamaji-v0.19.0-cozystack.0"
	tests := []struct {
		titles               []string
		components, metadata string
		err                  string
	}{
		{[]string{"components.yaml", "metadata.yaml", "components.gz"}, "components.yaml", "metadata.yaml", ""},
		{[]string{"components.yaml", "control-plane-components.yaml", "metadata.yaml"}, "control-plane-components.yaml", "metadata.yaml", ""},
		{[]string{full + "-components.yaml", "control-plane-components.yaml", full + "-metadata.yaml", "metadata.yaml"}, full + "-components.yaml", full + "-metadata.yaml", ""},
		{[]string{"controlplane-components.yaml", "metadata.yaml"}, "", "metadata.yaml", "finds no components as " + full + "-components.yaml or control-plane-components.yaml or components.yaml"},
		{[]string{"components.yaml"}, "components.yaml", "", "finds no metadata as " + full + "-metadata.yaml or metadata.yaml"},
	}
	for _, tc := range tests {
		titles := map[string]bool{}
		for _, x := range tc.titles {
			titles[x] = true
		}
		f, err := Find(titles, p)
		if f.Components != tc.components || f.Metadata != tc.metadata || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Find(%v) = %+v, %v; want %q, %q, %q", tc.titles, f, err, tc.components, tc.metadata, tc.err)
		}
	}
}

// FuzzParseSource: any fetchConfig.oci value parses or is refused with a
// *Problem, never a panic; what parses names a host, a repository below it
// and a reference, and a tag reads back the same way when written out.
func FuzzParseSource(f *testing.F) {
	for _, s := range []string{
		"ghcr.io/acme/capi/core:v1.10.1-core", "127.0.0.1:5000/capi/core", "http://127.0.0.1:5000/capi/core:v2",
		"host:1:2:3", "http://", "://x", "a/b@sha256:00", "x:", ":", "h/r:", "h/r:a:b", "h:1/r:t@" + digest,
	} {
		f.Add(s, "v1.0.0")
	}
	f.Fuzz(func(t *testing.T, oci, version string) {
		s, err := ParseSource(oci, version)
		if err != nil {
			if _, ok := err.(*Problem); !ok {
				t.Fatalf("ParseSource(%q, %q) error %T %v, want a *Problem", oci, version, err, err)
			}
			return
		}
		if s.Host == "" || s.Reference == "" || !strings.HasPrefix(s.Repository, s.Host+"/") || len(s.Repository) == len(s.Host)+1 {
			t.Fatalf("ParseSource(%q, %q) = %+v", oci, version, s)
		}
		if s.Digest {
			return // written back, a digest without a port is not read (RuleDigest)
		}
		again := s.Ref()
		if s.PlainHTTP {
			again = "http://" + again
		}
		s2, err := ParseSource(again, "other")
		if err != nil || s2.Repository != s.Repository || s2.Reference != s.Reference || s2.PlainHTTP != s.PlainHTTP || s2.Ignored != "" {
			t.Fatalf("%q reads back as %+v, %v; first %+v", again, s2, err, s)
		}
	})
}

// The operator's kinds and the model's kinds are one set: pkg/model maps
// each kind to clusterctl's type, this package to the operator's type
// names across releases, and neither may know a kind the other does not.
func TestKindsAreTheModels(t *testing.T) {
	want := slices.Sorted(maps.Keys(model.ProviderKinds))
	if got := Kinds(); !slices.Equal(got, want) {
		t.Errorf("operator kinds %v, model kinds %v", got, want)
	}
}
