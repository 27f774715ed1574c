package check_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/pinseal/pinseal/pkg/check"
	"github.com/pinseal/pinseal/pkg/load"
)

// The catalog names every check: its stable ID, default severity, what it
// reads besides the tree and what an error finding does to a push.
func ExampleLookup() {
	for _, id := range []string{check.BlobYAML, check.BlobHeader, check.Signature} {
		c, _ := check.Lookup(id)
		fmt.Printf("%s: %s, needs %s, refuses a push: %v\n", c.ID, c.Severity, c.Needs(), c.Push == check.PushRefuses)
	}
	// Output:
	// blob-yaml: error, needs tree, refuses a push: true
	// blob-header: error, needs tree, refuses a push: false
	// signature: error, needs registry, refuses a push: false
}

// Builtin are the checks that read the tree alone; each is a pure
// function of the loaded model, run over one Input. Here a copy of the
// example core package whose components YAML was edited after its blob
// was built, loaded with components-apply's CRD judge (verify.Run sets
// it): the loader judges each CRD as its package loads.
func ExampleBuiltin() {
	dir, err := os.MkdirTemp("", "pinseal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS("../../examples/packages/capi-providers-core")); err != nil {
		log.Fatal(err)
	}
	yaml := filepath.Join(dir, "files", "core-components.yaml")
	b, err := os.ReadFile(yaml)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(yaml, append(b, "# edited by hand\n"...), 0o644); err != nil {
		log.Fatal(err)
	}

	tree, err := load.Tree(context.Background(), dir, load.Options{Workers: 2, Logger: slog.New(slog.DiscardHandler), CRDs: check.NewCRDJudge(nil)})
	if err != nil {
		log.Fatal(err)
	}
	in := check.NewInput(tree)
	for _, c := range check.Builtin(nil, nil) {
		for _, f := range c.Run(in) {
			fmt.Println(f.Check, f.Provider, f.File)
		}
	}
	// Output:
	// blob-yaml CoreProvider/cluster-api files/core-components.yaml
	// pin-digest CoreProvider/cluster-api files/core-components.yaml
}
