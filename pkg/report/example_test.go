package report_test

import (
	"log"
	"os"

	"github.com/pinseal/pinseal/pkg/report"
)

// Write renders a report in one of the formats every interface shares;
// Tally first makes the summary agree with the findings.
func ExampleWrite() {
	r := &report.Report{
		SchemaVersion: "1",
		Tool:          report.Tool{Name: "verifier", Version: "v0.1.0"},
		Root:          "packages",
		Findings: []report.Finding{{
			Check:    "blob-yaml",
			Severity: report.Error,
			Package:  "capi-providers-core",
			Provider: "CoreProvider/cluster-api",
			File:     "capi-providers-core/files/core-components.yaml",
			Line:     12,
			Message:  "the blob inflates to something other than the YAML",
			Hint:     "run builder build",
		}},
		Packages: []report.PackageSummary{{Path: "capi-providers-core"}},
	}
	r.Tally()
	if err := report.Write(os.Stdout, r, report.FormatHuman, report.Options{}); err != nil {
		log.Fatal(err)
	}
	// Output:
	// FAIL capi-providers-core
	//   error   blob-yaml CoreProvider/cluster-api  capi-providers-core/files/core-components.yaml:12
	//           the blob inflates to something other than the YAML
	//           fix: run builder build
	//
	// FAILED: checked 1 package, 0 providers under packages: 1 error, 0 warnings, 0 waived
}
