package sign

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

// The provenance lists the images the components run as image
// dependencies (a sha256-pinned one with its digest), counts them in
// externalParameters, and decoding keeps them apart from the pinned
// sources.
func TestProvenanceImages(t *testing.T) {
	rel := release(t, "v1.10.1-core")
	pinned := "registry.k8s.io/kube-rbac-proxy@sha256:" + strings.Repeat("a", 64)
	rel.YAML = []byte("kind: Deployment\nmetadata:\n  name: m\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: mirror.example/capi/cluster-api-controller:v1.10.1\n      - name: b\n        image: " + pinned + "\n      - name: c\n        image: mirror.example/capi/cluster-api-controller:v1.10.1\n")
	stmt, err := ProvenanceStatement("r", digest.FromString("x"), rel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := decodeProvenance(stmt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mirror.example/capi/cluster-api-controller:v1.10.1", pinned}; !slices.Equal(p.Images, want) {
		t.Errorf("images %v, want %v", p.Images, want)
	}
	if len(p.Dependencies) != len(rel.Pins) {
		t.Errorf("dependencies %v, want the %d pins only", p.Dependencies, len(rel.Pins))
	}
	if n, ok := p.ExternalParameters[ImagesParameter].(float64); !ok || n != 2 {
		t.Errorf("externalParameters.images = %v", p.ExternalParameters[ImagesParameter])
	}
	var m struct {
		Predicate struct {
			BuildDefinition struct {
				ResolvedDependencies []struct {
					URI, Name string
					Digest    map[string]string
				}
			}
		}
	}
	if err := json.Unmarshal(stmt, &m); err != nil {
		t.Fatal(err)
	}
	deps := m.Predicate.BuildDefinition.ResolvedDependencies
	last := deps[len(deps)-1]
	if last.URI != "oci://"+pinned || last.Name != "image" || last.Digest["sha256"] != strings.Repeat("a", 64) {
		t.Errorf("image dependency %+v", last)
	}
	// Components that run no image still record the count.
	rel.YAML = []byte("kind: Namespace\nmetadata:\n  name: x\n")
	stmt, _ = ProvenanceStatement("r", digest.FromString("x"), rel)
	if p, _ := decodeProvenance(stmt); len(p.Images) != 0 || p.ExternalParameters[ImagesParameter] != float64(0) {
		t.Errorf("no images: %v %v", p.Images, p.ExternalParameters)
	}
}
