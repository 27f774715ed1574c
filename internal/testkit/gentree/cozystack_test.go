package gentree

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// TestCozystackShapeIsMeasured holds the Cozystack shape to the packages
// it was measured from: each package's YAML is its measured package's
// size (scaled, within 0.95–1.10: manifestgen
// overshoots a size by up to a CRD), its blob compresses it about as much
// (manifestgen's YAML compresses to 12 %, the measured to 9.8–12.9 %),
// the raw YAML ships in the chart under the measured .helmignore, a
// second provider, patches/ and images/ where the measured package has
// them, and no two packages share a byte of content.
func TestCozystackShapeIsMeasured(t *testing.T) {
	const size = 1 << 20 // the bench's scale: manifestgen overshoots smaller sizes more
	root := filepath.Join(t.TempDir(), "tree")
	res, err := Generate(root, Options{Packages: 8, Size: size, Seed: 5, Shape: Cozystack})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != 8 {
		t.Fatalf("%d packages, want 8", len(res.Packages))
	}
	seen := map[[32]byte]string{}
	for i, p := range res.Packages {
		m := measured[i%len(measured)]
		dir := filepath.Join(root, filepath.FromSlash(p.Dir))
		yml := readFile(t, filepath.Join(dir, p.YAML))
		want := float64(m.yaml) * size / (1 << 20)
		if r := float64(len(yml)) / want; r < 0.95 || r > 1.10 {
			t.Errorf("%s: YAML of %d bytes, %.3f × the measured %s's (scaled: %.0f); want within 0.95–1.10", p.Dir, len(yml), r, m.name, want)
		}
		gz := readFile(t, filepath.Join(dir, "files", "components.gz"))
		if r := (float64(len(gz)) / float64(len(yml))) / (float64(m.blob) / float64(m.yaml)); r < 0.75 || r > 1.35 {
			t.Errorf("%s: blob/YAML %.3f, %.2f × the measured %s's %.3f", p.Dir, float64(len(gz))/float64(len(yml)), r, m.name, float64(m.blob)/float64(m.yaml))
		}
		if got := string(readFile(t, filepath.Join(dir, ".helmignore"))); got != measuredHelmignore {
			t.Errorf("%s: .helmignore %q, want the measured %q", p.Dir, got, measuredHelmignore)
		}
		ch, err := loader.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		shipped := false
		for _, f := range ch.Files {
			shipped = shipped || f.Name == p.YAML
		}
		if !shipped {
			t.Errorf("%s: the raw YAML is not in the chart (the measured packages ship it)", p.Dir)
		}
		if (p.Second != "") != (m.secondYAML > 0) {
			t.Errorf("%s: second provider %q; the measured %s has one: %v", p.Dir, p.Second, m.name, m.secondYAML > 0)
		}
		_, perr := os.Stat(filepath.Join(dir, "patches"))
		if (perr == nil) != (m.patches || m.images) {
			t.Errorf("%s: patches/ present %v; the measured %s has patches/ or images/: %v", p.Dir, perr == nil, m.name, m.patches || m.images)
		}
		sum := sha256.Sum256(yml)
		if other, ok := seen[sum]; ok {
			t.Errorf("%s and %s have the same YAML", p.Dir, other)
		}
		seen[sum] = p.Dir
	}
}
