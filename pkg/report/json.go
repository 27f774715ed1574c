package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// normalized returns a shallow copy of r whose slices are never nil, so the
// JSON form always has arrays where the schema says so.
func (r *Report) normalized() *Report {
	c := *r
	if c.SchemaVersion == "" {
		c.SchemaVersion = SchemaVersion
	}
	if c.Findings == nil {
		c.Findings = []Finding{}
	}
	if c.Packages == nil {
		c.Packages = []PackageSummary{}
	}
	pkgs := make([]PackageSummary, len(c.Packages))
	for i, p := range c.Packages {
		if p.Providers == nil {
			p.Providers = []ProviderSummary{}
		}
		pkgs[i] = p
	}
	c.Packages = pkgs
	return &c
}

// WriteJSON writes the report as indented JSON: the stable contract
// described by api/report.schema.json.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.normalized()); err != nil {
		return fmt.Errorf("write JSON report: %w", err)
	}
	return nil
}
