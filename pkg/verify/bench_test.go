package verify_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/verify"
)

// BenchmarkCheckTree verifies synthetic trees (internal/testkit/gentree) end to end,
// as `verifier check` does: load (walk, Helm render, base64, inflate, hash)
// plus every tree check and the policy. Trees are generated once per size,
// outside the timer. Sizes come from the environment:
//
//	PINSEAL_BENCH_PACKAGES  comma-separated package counts (default "10,100")
//	PINSEAL_BENCH_SIZE      manifest size per package (default "1MB")
//	PINSEAL_BENCH_SHAPE     gentree shape: real (default), monorepo, synthetic
//	PINSEAL_BENCH_TREE      verify this existing tree instead (no generation),
//	                        e.g. one written by `go run ./internal/testkit/gentree/cmd/gentree`
//
// e.g. go test -run '^$' -bench CheckTree -benchtime 3x -cpuprofile cpu.out ./pkg/verify/
// It fails only if the clean tree gets error findings, never on timing.
func BenchmarkCheckTree(b *testing.B) {
	if root := os.Getenv("PINSEAL_BENCH_TREE"); root != "" {
		b.Run("tree", func(b *testing.B) { benchVerify(b, root, -1) })
		return
	}
	counts, size := benchTreeSizes(b)
	for _, n := range counts {
		root := filepath.Join(b.TempDir(), "tree")
		res, err := gentree.Generate(root, gentree.Options{Packages: n, Size: size, Seed: 1, Shape: benchShape()})
		if err != nil {
			b.Fatalf("generate %d packages: %v", n, err)
		}
		b.Run(fmt.Sprintf("packages=%d", n), func(b *testing.B) {
			b.SetBytes(res.YAMLBytes + res.BlobBytes)
			benchVerify(b, root, n)
		})
	}
}

// benchVerify verifies root b.N times; the tree must pass, and hold want
// packages unless want < 0.
func benchVerify(b *testing.B, root string, want int) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.ReportAllocs()
	packages := 0
	for b.Loop() {
		_, r, err := verify.Run(context.Background(), root, verify.Options{Options: load.Options{Logger: logger}})
		if err != nil {
			b.Fatal(err)
		}
		packages = r.Summary.Packages
		if !r.Summary.Passed || packages == 0 || (want >= 0 && packages != want) {
			b.Fatalf("clean tree %s: %d packages (want %d), %d errors, first findings: %v",
				root, packages, want, r.Summary.Errors, r.Findings[:min(3, len(r.Findings))])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(packages)/1e6, "ms/package")
}

func benchTreeSizes(b *testing.B) ([]int, int64) {
	b.Helper()
	spec := os.Getenv("PINSEAL_BENCH_PACKAGES")
	if spec == "" {
		spec = "10,100"
	}
	var counts []int
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("PINSEAL_BENCH_PACKAGES=%q: want comma-separated positive counts", spec)
		}
		counts = append(counts, n)
	}
	sizeSpec := os.Getenv("PINSEAL_BENCH_SIZE")
	if sizeSpec == "" {
		sizeSpec = "1MB"
	}
	size, err := gentree.ParseSize(sizeSpec)
	if err != nil {
		b.Fatalf("PINSEAL_BENCH_SIZE: %v", err)
	}
	return counts, size
}

// benchShape is the gentree shape of the benchmark trees: real-shaped
// packages unless PINSEAL_BENCH_SHAPE says otherwise.
func benchShape() gentree.Shape {
	if s := os.Getenv("PINSEAL_BENCH_SHAPE"); s != "" {
		return gentree.Shape(s)
	}
	return gentree.Real
}
