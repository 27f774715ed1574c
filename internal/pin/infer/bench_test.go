package infer

import (
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

// BenchmarkLoadDir reads the pins of a real-shaped package (gentree's: a
// pin.yaml and the Makefile the package is built with). The verifier does
// it once per package.
func BenchmarkLoadDir(b *testing.B) {
	res, err := gentree.Generate(filepath.Join(b.TempDir(), "tree"), gentree.Options{Packages: 2, Size: 16 << 10, Seed: 1, Shape: gentree.Real})
	if err != nil {
		b.Fatal(err)
	}
	p := res.Packages[1]
	dir := filepath.Join(res.Root, filepath.FromSlash(p.Dir))
	b.ReportAllocs()
	for b.Loop() {
		set, err := LoadDir(dir)
		if err != nil || set.File == nil || set.Namespace != p.Namespace {
			b.Fatal(set, err)
		}
	}
}
