package verify_test

import (
	"context"
	"fmt"
	"log"

	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/verify"
)

// Run loads a tree, checks it under the built-in policy and returns the
// tree beside the report; the report's findings and summary are what
// `verifier check` prints.
func ExampleRun() {
	tree, r, err := verify.Run(context.Background(), "../../testdata/tree", verify.Options{Options: load.Options{Workers: 2}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("packages loaded:", len(tree.Packages))
	fmt.Println("providers:", r.Summary.Providers, "errors:", r.Summary.Errors, "warnings:", r.Summary.Warnings, "passed:", r.Summary.Passed)
	// Output:
	// packages loaded: 5
	// providers: 7 errors: 0 warnings: 2 passed: true
}

// The steps of Run, one by one: a caller that needs the tree before the
// checks (or adds its own inputs to it) loads, then evaluates.
func ExampleEvaluate() {
	opts := verify.Options{Options: load.Options{Workers: 2}}
	tree, err := verify.Load(context.Background(), "../../testdata/tree-dirty", opts)
	if err != nil {
		log.Fatal(err)
	}
	r, err := verify.Evaluate(context.Background(), tree, opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("passed:", r.Summary.Passed, "exit code:", r.ExitCode())
	// Output:
	// passed: false exit code: 1
}
