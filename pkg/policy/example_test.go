package policy_test

import (
	"fmt"

	"github.com/pinseal/pinseal/pkg/policy"
)

// A policy sets the severity of checks; a check it leaves out keeps the
// catalog's default.
func ExampleParse() {
	p, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  blob-header: warning\n"), "policy.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("blob-header:", p.Severity("blob-header"))
	fmt.Println("blob-yaml:", p.Severity("blob-yaml"))
	fmt.Println("pin-missing:", p.Severity("pin-missing"))
	// Output:
	// blob-header: warning
	// blob-yaml: error
	// pin-missing: warning
}
