package verify

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/load"
	"github.com/pinseal/pinseal/pkg/policy"
	"github.com/pinseal/pinseal/pkg/report"
)

// TestMonorepo runs the gate at the root of a synthetic monorepo modelled
// on Cozystack's packages/: provider packages with the real quirks
// (computed Makefile version + Dockerfile ARG, talos-style names, two
// providers in one package, no pin.yaml), dozens of charts that are not
// provider packages (most do not render with default values, some hold
// plain ConfigMaps, all have unpinned Dockerfiles and Makefile downloads),
// air-gap charts with inline ConfigMaps in several namespaces, an excluded
// broken chart and one given values by the policy. It must report exactly
// the provider packages, exactly the planted drift on top of the clean
// tree's own findings, and list every other chart as skipped.
func TestMonorepo(t *testing.T) {
	type fk struct{ check, pkg, sev string }
	baseline := map[fk]bool{}
	for _, f := range verifyTree(t, fixture.CleanCopy(t)).Findings {
		baseline[fk{f.Check, f.Package, string(f.Severity)}] = true
	}

	root, skipped := fixture.Monorepo(t)
	pol, err := policy.Parse([]byte("apiVersion: pinseal/v1\nkind: Policy\nvalues:\n- package: "+fixture.MonorepoNeedsValues+"\n  files: ["+fixture.MonorepoValuesFile+"]\n"),
		filepath.Join(root, "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := Run(context.Background(), root, Options{Options: load.Options{Workers: 2, Exclude: []string{fixture.MonorepoExcluded}}, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}

	var pkgs []string
	for _, p := range r.Packages {
		pkgs = append(pkgs, p.Path)
	}
	want := slices.Sorted(slices.Values(fixture.MonorepoPackages))
	if !slices.Equal(pkgs, want) {
		t.Errorf("packages checked:\n  %v\nwant\n  %v", pkgs, want)
	}

	got := map[fk]bool{}
	for _, f := range r.Findings {
		got[fk{f.Check, f.Package, string(f.Severity)}] = true
		if !slices.Contains(want, f.Package) {
			t.Errorf("finding outside the provider packages: %s %s: %s", f.Check, f.Package, f.Message)
		}
		t.Logf("%s %s %s: %s", f.Severity, f.Check, f.Package, f.Message)
	}
	expect := map[fk]bool{}
	for k := range baseline {
		expect[k] = true
	}
	for _, p := range fixture.MonorepoPlanted {
		expect[fk{p.Check, p.Package, p.Severity}] = true
		if !got[fk{p.Check, p.Package, p.Severity}] {
			t.Errorf("planted %s (%s) in %s not reported", p.Check, p.Severity, p.Package)
		}
	}
	for k := range got {
		if !expect[k] {
			t.Errorf("unexpected finding %s (%s) in %s", k.check, k.sev, k.pkg)
		}
	}

	var skippedGot []string
	for _, s := range r.Skipped {
		skippedGot = append(skippedGot, s.Path)
		if s.Reason == "" {
			t.Errorf("skipped %s without a reason", s.Path)
		}
		switch {
		case s.Path == fixture.MonorepoExcluded && !strings.Contains(s.Reason, "excluded"):
			t.Errorf("excluded chart: %s", s.Reason)
		case s.Path == fixture.MonorepoNeedsValues && !strings.Contains(s.Reason, "renders no cluster-api-operator provider"):
			t.Errorf("chart given values: %s", s.Reason)
		case s.Path == "packages/apps/tenant" && !strings.Contains(s.Reason, "does not render with its default values"):
			t.Errorf("chart that needs values: %s", s.Reason)
		}
	}
	sort.Strings(skipped)
	if !slices.Equal(skippedGot, skipped) {
		t.Errorf("skipped:\n  %v\nwant\n  %v", skippedGot, skipped)
	}
	if r.Summary.Skipped != len(skipped) {
		t.Errorf("summary.skipped = %d, want %d", r.Summary.Skipped, len(skipped))
	}

	// The air-gap chart's ConfigMaps, each in its own namespace.
	for _, p := range r.Packages {
		if p.Path != fixture.AirgapCAPI {
			continue
		}
		var ns []string
		for _, cm := range p.ConfigMaps {
			ns = append(ns, cm.Namespace)
			if cm.File != fixture.AirgapCAPI+"/templates/configmaps.yaml" {
				t.Errorf("ConfigMap %s file %q", cm.Name, cm.File)
			}
		}
		if !slices.Equal(ns, []string{"capi-proxmox", "capi-kubevirt", "capi-hetzner"}) {
			t.Errorf("air-gap ConfigMaps: %+v", p.ConfigMaps)
		}
	}
	if r.ExitCode() != 1 {
		t.Errorf("exit code %d", r.ExitCode())
	}

	// Without --exclude the broken chart that names the operator's group
	// is a package-load error, not skipped.
	_, r, err = Run(context.Background(), root, Options{Options: load.Options{Workers: 2}, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range r.Findings {
		found = found || (f.Package == fixture.MonorepoExcluded && f.Check == "package-load")
	}
	if !found {
		t.Errorf("the chart naming the operator's group that does not render is not a package-load finding without --exclude")
	}
	_ = report.Error
}
