package load

import (
	"math/rand/v2"
	"testing"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/pinseal/pinseal/internal/testkit/manifestgen"
	"github.com/pinseal/pinseal/pkg/blob"
)

// TestReleaseEstimateIsAnUpperBound: the quick estimate that lets the exact
// encoding be skipped is never below the exact size, on charts holding a
// generated manifest, its blob, random bytes, and small templates.
func TestReleaseEstimateIsAnUpperBound(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Size: 300 << 10})
	gz, err := blob.CompressBytes(yml)
	if err != nil {
		t.Fatal(err)
	}
	rnd := make([]byte, 100<<10)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	tmpl := &chart.File{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")}
	for name, files := range map[string][]*chart.File{
		"yaml and blob": {{Name: "files/c.yaml", Data: yml}, {Name: "files/c.gz", Data: gz}},
		"random":        {{Name: "files/r.bin", Data: rnd}},
		"small":         {{Name: "files/m.yaml", Data: []byte("a: 1\n")}},
		"all":           {{Name: "files/c.yaml", Data: yml}, {Name: "files/c.gz", Data: gz}, {Name: "files/r.bin", Data: rnd}},
	} {
		in := &releaseInput{chart: &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2"}, Templates: []*chart.File{tmpl}, Files: files},
			name: "x", namespace: "ns"}
		in.addManifest("x/templates/cm.yaml", string(tmpl.Data)+"binaryData:\n  components: "+string(gz))
		exact, ok := in.exact()
		if !ok {
			t.Fatal("exact failed")
		}
		est := in.estimate()
		if est < exact {
			t.Errorf("%s: estimate %d < exact %d", name, est, exact)
		}
		t.Logf("%s: exact %d, estimate %d (%.2f)", name, exact, est, float64(est)/float64(exact))
	}
}
