// Package gentree writes trees of cluster-api-operator provider packages for
// benchmarks.
//
// It writes trees of cluster-api-operator provider packages
// for benchmarks: N Helm charts modeled on Cozystack's
// packages/system/capi-providers-*, each vendoring an upstream-like
// <type>-components.yaml, its reproducible gzip blob, clusterctl metadata,
// a ConfigMap named after the release, the operator provider that selects
// it, and a pin.yaml with the SHA-256 of every vendored file. The
// manifests come from internal/testkit/manifestgen. Options.Shape says how
// much of a real package's shape they take (Synthetic, Real, Monorepo: see
// Shape).
//
// A generated tree is clean: every check of `verifier check` passes on it
// (in the Real shapes, releases over 75 % of the Secret limit warn, as
// they do on real trees). Exactly one package holds the CoreProvider
// (contract v1beta1); every other provider declares v1beta1 for its
// release series. Content is seeded per package, so no two blobs are
// alike, and the same Options give the same bytes on every run.
package gentree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Defaults of Options.
const (
	DefaultNamespace = "cozy-cluster-api"
	DefaultSize      = 1 << 20
	// PackagesDir is where packages go, relative to the tree root, as in
	// the Cozystack repository.
	PackagesDir = "packages/system"
)

// Options say what tree to generate.
type Options struct {
	// Packages is the number of provider packages, the core package
	// included (at least 1).
	Packages int
	// Size is the target size in bytes of each <type>-components.yaml
	// (DefaultSize when 0); the files come out within a few percent of it.
	// In the Real shape each package's YAML is 0.46 to 0.98 times it (one
	// in fifty 1.15 to 1.38 times); in the Cozystack and Monorepo shapes,
	// the provider packages' YAML is Cozystack's four's sizes (0.48–1.10
	// MB) times Size/1 MiB.
	Size int64
	// Shape is what the packages look like (Synthetic when "").
	Shape Shape
	// Others is the number of charts that are not provider packages in
	// the Monorepo shape (DefaultOthers when 0).
	Others int
	// Seed varies the content; the same seed gives the same tree.
	Seed uint64
	// Namespace is the Makefile NAMESPACE of every package
	// (DefaultNamespace when ""). All providers share it, so selector
	// labels must be, and are, unique across the whole tree.
	Namespace string
	// Workers is how many packages are written at once (GOMAXPROCS when 0).
	Workers int
}

// Package describes one generated package.
type Package struct {
	Dir       string // slash path relative to the tree root
	Kind      string // CoreProvider, InfrastructureProvider, ...
	Name      string // provider metadata.name
	Version   string // upstream version, e.g. v0.6.12
	Release   string // ConfigMap name and spec.version
	Label     string // selector label key (value "cozy")
	Second    string // release of a second provider (Real shape), or ""
	YAML      string // components file, relative to the package dir
	Blob      string // gzip blob, relative to the package dir
	YAMLSize  int64
	BlobSize  int64
	Namespace string
}

// Result lists what Generate wrote.
type Result struct {
	Root      string
	Packages  []Package // in index order; Packages[0] is the core provider
	Others    int       // charts that are not provider packages (Monorepo)
	YAMLBytes int64     // sum of the components files (second providers included)
	BlobBytes int64     // sum of the blobs
}

// Generate writes a tree for opts into dir. dir must not exist or be an
// empty directory. The tree is written into a temporary sibling directory
// and renamed into place at the end, so dir never holds half a tree.
func Generate(dir string, opts Options) (*Result, error) {
	if opts.Packages < 1 {
		return nil, fmt.Errorf("gentree: %d packages requested: need at least 1 (the core provider)", opts.Packages)
	}
	if opts.Size == 0 {
		opts.Size = DefaultSize
	}
	if opts.Size < 0 {
		return nil, fmt.Errorf("gentree: negative manifest size %d", opts.Size)
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	switch opts.Shape {
	case "":
		opts.Shape = Synthetic
	case Synthetic, Real, Monorepo, Cozystack:
	default:
		return nil, fmt.Errorf("gentree: shape %q: want %s, %s, %s or %s", opts.Shape, Synthetic, Real, Monorepo, Cozystack)
	}
	if opts.Others <= 0 {
		opts.Others = DefaultOthers
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("gentree: output directory: %w", err)
	}
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("gentree: create parent of %s: %w", dir, err)
	}
	stage, err := os.MkdirTemp(parent, ".gentree-"+filepath.Base(dir)+"-")
	if err != nil {
		return nil, fmt.Errorf("gentree: staging directory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = os.RemoveAll(stage)
		}
	}()

	res := &Result{Root: dir, Packages: make([]Package, opts.Packages)}
	errs := make([]error, opts.Packages)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				spec := newSpec(i, opts)
				p, err := spec.write(stage)
				res.Packages[i] = p
				errs[i] = err
			}
		}()
	}
	for i := 0; i < opts.Packages; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("gentree: %w", err)
	}
	if opts.Shape != Synthetic {
		if err := writeFile(filepath.Join(stage, "scripts", "package.mk"), []byte(packageMk)); err != nil {
			return nil, fmt.Errorf("gentree: %w", err)
		}
	}
	if opts.Shape == Monorepo {
		n, err := writeOthers(stage, opts)
		if err != nil {
			return nil, fmt.Errorf("gentree: %w", err)
		}
		res.Others = n
	}
	for _, p := range res.Packages {
		res.YAMLBytes += p.YAMLSize
		res.BlobBytes += p.BlobSize
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return nil, fmt.Errorf("gentree: %w", err)
	}
	// dir is absent or empty (checked above): remove the empty directory so
	// the rename can take its place.
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("gentree: replace empty %s: %w", dir, err)
	}
	if err := os.Rename(stage, dir); err != nil {
		return nil, fmt.Errorf("gentree: move tree into %s: %w", dir, err)
	}
	done = true
	return res, nil
}

// checkEmpty fails unless dir is absent or an empty directory.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("gentree: output %s: %w (give a new or empty directory)", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("gentree: output %s is not empty: give a new or empty directory", dir)
	}
	return nil
}

// ParseSize reads a byte size such as "1MB", "512KiB", "2M" or "1048576".
// K, M and G (with or without B, or as KiB, MiB, GiB) are powers of 1024:
// 1MB = 1048576 bytes.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	u := strings.ToUpper(t)
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
		{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
	} {
		if strings.HasSuffix(u, suf.s) {
			u = strings.TrimSpace(strings.TrimSuffix(u, suf.s))
			mult = suf.m
			break
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<40 {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (B, KB, MB, GB; 1MB = 1048576 bytes)", s)
	}
	return int64(f * float64(mult)), nil
}
