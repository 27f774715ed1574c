package pin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/pin"
)

// BenchmarkParse parses and validates the pin file of a real-shaped
// package (gentree's): the verifier does it once per package.
func BenchmarkParse(b *testing.B) {
	res, err := gentree.Generate(filepath.Join(b.TempDir(), "tree"), gentree.Options{Packages: 2, Size: 16 << 10, Seed: 1, Shape: gentree.Real})
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(res.Root, filepath.FromSlash(res.Packages[1].Dir), pin.FileName))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := pin.Parse(data, pin.FileName)
		if err != nil || len(f.Providers) == 0 {
			b.Fatal(f, err)
		}
	}
}
