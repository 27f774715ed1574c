// Command gentree writes a tree of provider packages for benchmarks:
//
//	go run ./internal/testkit/gentree/cmd/gentree -n 100 -size 1MB -out DIR
//	go run ./internal/testkit/gentree/cmd/gentree -shape monorepo -n 4 -out DIR
//
// DIR must not exist or be empty. The tree passes `verifier check` clean.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pinseal/pinseal/internal/testkit/gentree"
)

func main() {
	n := flag.Int("n", 100, "number of provider packages (the core package included)")
	size := flag.String("size", "1MB", "size of each <type>-components.yaml (B, KB, MB, GB; 1MB = 1048576 bytes)")
	out := flag.String("out", "", "output directory (new or empty)")
	seed := flag.Uint64("seed", 1, "content seed: the same seed gives the same tree")
	ns := flag.String("namespace", gentree.DefaultNamespace, "Makefile NAMESPACE of every package")
	workers := flag.Int("workers", 0, "packages written at once (0: GOMAXPROCS)")
	shape := flag.String("shape", string(gentree.Real), "what the packages look like: cozystack (Cozystack's four provider packages as measured, repeated, every package's bytes its own), real (as real provider packages, the raw YAML shipped beside its blob), monorepo (-n real packages among -others charts that are not provider packages) or synthetic (one provider, YAML and blob only)")
	others := flag.Int("others", gentree.DefaultOthers, "charts that are not provider packages (-shape monorepo)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gentree -n N -size SIZE -out DIR")
		flag.PrintDefaults()
		os.Exit(2)
	}
	bytes, err := gentree.ParseSize(*size)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentree: -size:", err)
		os.Exit(2)
	}
	if gentree.Shape(*shape) == gentree.Cozystack {
		slog.Info("shaped as measured", "from", gentree.Measured)
	}
	start := time.Now()
	res, err := gentree.Generate(*out, gentree.Options{
		Packages: *n, Size: bytes, Seed: *seed, Namespace: *ns, Workers: *workers,
		Shape: gentree.Shape(*shape), Others: *others,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	slog.Info("tree generated", "root", res.Root, "packages", len(res.Packages), "others", res.Others,
		"yaml_bytes", res.YAMLBytes, "blob_bytes", res.BlobBytes, "took", time.Since(start).Round(time.Millisecond))
}
