package policy

import (
	"testing"
	"time"

	"github.com/pinseal/pinseal/pkg/report"
	"github.com/pinseal/pinseal/policies"
)

// FuzzParse feeds arbitrary documents to the strict policy reader: it must
// never panic, and whatever it accepts must validate again and apply
// without panicking.
func FuzzParse(f *testing.F) {
	f.Add(policies.Default)
	f.Add([]byte(good))
	f.Add([]byte("apiVersion: pinseal/v1\nkind: Policy\nchecks: {blob-yaml: off}\n"))
	f.Add([]byte("apiVersion: pinseal/v1\nkind: Policy\nwaivers:\n- {package: '[', check: blob-yaml, reason: r, expires: 2026-02-30}\n"))
	f.Add([]byte("&a [*a, *a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted policy does not validate: %v", err)
		}
		fs := p.Apply([]report.Finding{{Check: "blob-yaml", Package: "a/b", Message: "m"}}, time.Unix(0, 0))
		for _, f := range fs {
			if f.Severity != report.Error && f.Severity != report.Warning {
				t.Fatalf("applied severity %q", f.Severity)
			}
		}
	})
}
