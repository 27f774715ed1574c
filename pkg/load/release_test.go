package load

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
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
		for _, level := range estimateLevels {
			est := in.estimate(level)
			if est < exact {
				t.Errorf("%s: estimate at level %d %d < exact %d", name, level, est, exact)
			}
			t.Logf("%s: exact %d, estimate at level %d %d (%.2f)", name, exact, level, est, float64(est)/float64(exact))
		}
	}
}

// TestReleaseEstimateBase64Manifest: the long base64 values a manifest
// holds (a ConfigMap's blob) are counted without sampling, and the
// estimate stays an upper bound whatever they encode: a blob, random
// bytes, or bytes that compress well.
func TestReleaseEstimateBase64Manifest(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Size: 300 << 10})
	gz, err := blob.CompressBytes(yml)
	if err != nil {
		t.Fatal(err)
	}
	rnd := make([]byte, 200<<10)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range rnd {
		rnd[i] = byte(r.Uint32())
	}
	tmpl := &chart.File{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")}
	for name, data := range map[string][]byte{
		"blob":               gz,
		"random":             rnd,
		"random, gzip magic": append([]byte{0x1f, 0x8b, 8}, rnd...),
		"compresses":         append([]byte{0x1f, 0x8b}, make([]byte, 200<<10)...),
		"yaml itself":        yml,
	} {
		b64 := base64.StdEncoding.EncodeToString(data)
		in := &releaseInput{chart: &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2"}, Templates: []*chart.File{tmpl}},
			name: "x", namespace: "ns"}
		in.addManifest("x/templates/cm.yaml", string(tmpl.Data)+"binaryData:\n  components: "+b64+"\n  other: "+b64+"\ndata:\n  x: y\n")
		want := 2 * len(b64)
		if !strings.HasPrefix(b64, "H4sI") {
			want = 0 // not gzip: sampled
		}
		if _, n := splitLongBase64([]byte(in.manifest.String())); n != want {
			t.Fatalf("%s: %d bytes of base64 taken out, want %d", name, n, want)
		}
		exact, ok := in.exact()
		if !ok {
			t.Fatal("exact failed")
		}
		for _, level := range estimateLevels {
			if est := in.estimate(level); est < exact {
				t.Errorf("%s: estimate at level %d %d < exact %d", name, level, est, exact)
			} else {
				t.Logf("%s: exact %d, estimate at level %d %d (%.2f)", name, exact, level, est, float64(est)/float64(exact))
			}
		}
	}
	// What is left is the manifest without the values, in order.
	rest, n := splitLongBase64([]byte("a: 1\nb: H4sI" + strings.Repeat("A", 5000) + "\nc: 2\nd: H4sI" + strings.Repeat("B", 5000) + "\ne: 3\n"))
	if string(rest) != "a: 1\nb: \nc: 2\nd: \ne: 3\n" || n != 2*5004 {
		t.Fatalf("rest %q, %d taken", rest, n)
	}
}

// TestReleaseSizeStages: a release the fast estimate puts at the warning
// line but level 7 puts under it is not encoded exactly (the level-7
// estimate stands); one both put at or over it is.
func TestReleaseSizeStages(t *testing.T) {
	yml := manifestgen.Generate(manifestgen.Spec{Size: 4 << 20})
	screen := int64(releaseScreen * ReleaseLimit)
	in := func(n int) *releaseInput {
		return &releaseInput{chart: &chart.Chart{Metadata: &chart.Metadata{Name: "x", Version: "0.1.0", APIVersion: "v2"},
			Files: []*chart.File{{Name: "files/c.yaml", Data: yml[:n]}}}, name: "x", namespace: "ns"}
	}
	// The smallest manifest each estimate puts at the line.
	at := func(level int) int {
		lo, hi := 64<<10, len(yml)
		for lo < hi {
			mid := (lo + hi) / 2
			if in(mid).estimate(level) >= screen {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo
	}
	fast, slow := at(estimateLevels[0]), at(estimateLevels[1])
	if fast >= slow || slow >= len(yml) {
		t.Fatalf("level %d reaches the line at %d bytes, level %d at %d: want the fast one first", estimateLevels[0], fast, estimateLevels[1], slow)
	}
	between := in((fast + slow) / 2)
	if got := between.size(); got.Exact || got.Bytes != between.estimate(estimateLevels[1]) {
		t.Errorf("between the estimates: size %+v, want the level-%d estimate %d, not exact", got, estimateLevels[1], between.estimate(estimateLevels[1]))
	}
	over := in(slow)
	exact, _ := over.exact()
	if got := over.size(); !got.Exact || got.Bytes != exact {
		t.Errorf("at the line for both estimates: size %+v, want exact %d", got, exact)
	}
}
