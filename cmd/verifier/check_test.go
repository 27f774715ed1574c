package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/internal/testkit/fixture"
	"github.com/pinseal/pinseal/pkg/remote/remotetest"
	"github.com/pinseal/pinseal/pkg/report"
)

// runVerifier runs the verifier command line and returns its stdout and the
// exit code main would use.
func runVerifier(t *testing.T, args ...string) (string, int, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	code := 0
	if err != nil {
		code = 1
		var ue usageError
		if errors.As(err, &ue) {
			code = 2
		}
	}
	return out.String(), code, err
}

// cliCase is one verifier command line and what it must give.
type cliCase struct {
	name string
	args []string
	code int
	want string // in stdout, or in the error for code 2
}

// runCases runs each case as a subtest: the exit code must be code and
// want must be in stdout (in the error when the code is 2).
func runCases(t *testing.T, tests []cliCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, code, err := runVerifier(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d (err %v)\n%s", code, tc.code, err, out)
			}
			where := out
			if code == 2 {
				where = err.Error()
			}
			if !strings.Contains(where, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, where)
			}
		})
	}
}

func TestCheckExitCodes(t *testing.T) {
	badPolicy := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badPolicy, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  blob-yml: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	strict := filepath.Join(t.TempDir(), "strict.yaml")
	if err := os.WriteFile(strict, []byte("apiVersion: pinseal/v1\nkind: Policy\nchecks:\n  pin-missing: error\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := fixture.CleanCopy(t)
	dirty := fixture.DirtyCopy(t)
	tests := []cliCase{
		{"clean tree passes", []string{"check", clean}, 0, "PASSED"},
		{"dirty tree fails", []string{"check", dirty}, 1, "blob-header"},
		{"policy makes warnings errors", []string{"check", "--policy", strict, clean}, 1, "FAILED"},
		{"missing root", []string{"check", filepath.Join(clean, "nope")}, 2, "no such file"},
		{"root is a file", []string{"check", filepath.Join(clean, "scripts/package.mk")}, 2, "not a directory"},
		{"bad output", []string{"check", "-o", "xml", clean}, 2, "unknown output format"},
		{"bad policy", []string{"check", "--policy", badPolicy, clean}, 2, "checks.blob-yml: unknown check"},
		{"missing policy", []string{"check", "--policy", badPolicy + ".missing", clean}, 2, "read policy"},
		{"bad flag", []string{"check", "--bogus", clean}, 2, "unknown flag"},
		{"two roots", []string{"check", clean, dirty}, 2, "at most one ROOT"},
		{"bad limit", []string{"check", "--max-inflate", "0", clean}, 2, "--max-inflate"},
		// Hints name the setting; the CLI adds its flag.
		{"low inflate limit names the flag", []string{"check", "--max-inflate", "100", clean}, 1, "raise the inflate limit (--max-inflate)"},
		{"bad namespace", []string{"check", "--namespace", "Bad_NS", clean}, 2, `--namespace "Bad_NS" is not a Kubernetes namespace name`},
		{"no packages under root", []string{"check", filepath.Join(clean, "scripts")}, 2, "holds no provider packages: nothing was checked"},
		{"list checks", []string{"check", "--list-checks"}, 0, "| `blob-yaml` | error | tree |"},
	}
	runCases(t, tests)
}

func TestCheckOutputs(t *testing.T) {
	dirty := fixture.DirtyCopy(t)
	out, code, _ := runVerifier(t, "check", "-o", "json", dirty)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("json output: %v\n%s", err, out)
	}
	if r.SchemaVersion != report.SchemaVersion || r.Summary.Errors != 1 || r.Findings[0].Check != "blob-header" || r.Tool.Name != "verifier" {
		t.Errorf("json report = %+v", r)
	}

	out, _, _ = runVerifier(t, "check", "--output", "sarif", dirty)
	var sarif map[string]any
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || sarif["version"] != "2.1.0" {
		t.Fatalf("sarif output: %v\n%s", err, out)
	}
	// Rules come from the check catalog.
	if !strings.Contains(out, `"id": "selector-unique"`) || !strings.Contains(out, `"id": "provenance"`) {
		t.Errorf("sarif rules lack the catalog")
	}

	out, _, _ = runVerifier(t, "check", "-o", "github", dirty)
	if !strings.HasPrefix(out, "::error file=packages/system/capi-providers-core/files/components.gz,title=blob-header CoreProvider/cluster-api::") {
		t.Errorf("github output:\n%s", out)
	}

	// Not a terminal: no colour.
	out, _, _ = runVerifier(t, "check", dirty)
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour written to a non-terminal:\n%q", out)
	}
}

// TestCheckAllowRegistry: --allow-registry takes HOST[:PORT][/PATH] only,
// turns the registry checks on for fetchConfig.oci providers alone, and a
// provider fetching from a registry not allowed is a finding (exit 1)
// with nothing contacted.
func TestCheckAllowRegistry(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "provider.yaml"), []byte(`apiVersion: operator.cluster.x-k8s.io/v1alpha2
kind: ControlPlaneProvider
metadata:
  name: kamaji
  namespace: capi
spec:
  version: v0.19.0-cozystack.0
  fetchConfig:
    oci: registry.invalid/capi/control-plane-kamaji
`), 0o644)
	key := remotetest.WritePublicKey(t, remotetest.Key(t))
	runCases(t, []cliCase{
		{"scheme", []string{"check", dir, "--allow-registry", "https://ghcr.io", "--key", key}, 2, "--allow-registry"},
		{"key alone", []string{"check", dir, "--key", key}, 2, "need --registry PREFIX or --allow-registry HOST"},
		{"offline: not looked at", []string{"check", dir}, 0, "PASSED"},
		{"registry not allowed", []string{"check", dir, "--allow-registry", "127.0.0.1:1", "--key", key}, 1, "is not allowed"},
		{"prefix not allowed", []string{"check", dir, "--allow-registry", "registry.invalid/other", "--key", key}, 1, "is not allowed"},
		{"bad prefix", []string{"check", dir, "--allow-registry", "registry.invalid/UPPER", "--key", key}, 2, "not a repository path"},
	})
}

// TestCheckMonorepoExclude: at the root of the synthetic monorepo, with
// --exclude for the broken chart, the JSON report lists the skipped charts
// and human output says how many; a bad --exclude is a usage error.
func TestCheckMonorepoExclude(t *testing.T) {
	root, skipped := fixture.Monorepo(t)
	out, code, err := runVerifier(t, "check", root, "--exclude", fixture.MonorepoExcluded, "--exclude", fixture.MonorepoNeedsValues, "--output", "json")
	if code != 1 {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Skipped) != len(skipped) || r.Summary.Skipped != len(skipped) {
		t.Fatalf("skipped %d (summary %d), want %d: %+v", len(r.Skipped), r.Summary.Skipped, len(skipped), r.Skipped)
	}
	for _, s := range r.Skipped {
		if (s.Path == fixture.MonorepoExcluded || s.Path == fixture.MonorepoNeedsValues) && !strings.HasPrefix(s.Reason, "excluded (") {
			t.Errorf("%s: %s", s.Path, s.Reason)
		}
	}
	out, _, _ = runVerifier(t, "check", root, "--exclude", fixture.MonorepoExcluded)
	if !strings.Contains(out, fmt.Sprintf("skipped %d charts that are not provider packages or excluded", len(skipped))) {
		t.Errorf("human output lacks the skipped line:\n%s", out)
	}
	if _, code, err := runVerifier(t, "check", root, "--exclude", "["); code != 2 || !strings.Contains(err.Error(), "--exclude") {
		t.Errorf("bad --exclude: exit %d, %v", code, err)
	}
}

// TestSettingFlags: every setting a hint may name is named by a flag the
// verifier has (check has them all), so no hint loses its flag.
func TestSettingFlags(t *testing.T) {
	check := newCheckCmd()
	for _, s := range report.Settings {
		f, ok := settingFlags[s]
		if !ok || check.Flags().Lookup(f.Flag) == nil {
			t.Errorf("setting %s: flag %q, want a flag of verifier check", s, f.Flag)
		}
	}
}

// TestCheckNothingCheckedReports: at a root with no provider package the
// check exits 2, and every machine-readable format still prints a valid
// document that says why each chart was skipped; a chart whose provider
// templates are all switched off by default values is skipped with a
// reason pointing at the policy's values:.
func TestCheckNothingCheckedReports(t *testing.T) {
	root := t.TempDir()
	if err := fixture.WriteTurtles(root); err != nil {
		t.Fatal(err)
	}
	// Only the providers chart, with every provider switched off.
	if err := os.RemoveAll(filepath.Join(root, fixture.TurtlesChart)); err != nil {
		t.Fatal(err)
	}
	vals := filepath.Join(root, fixture.TurtlesProvidersChart, "values.yaml")
	b, err := os.ReadFile(vals)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(vals, []byte(strings.ReplaceAll(string(b), "enabled: true", "enabled: false")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "sarif", "github"} {
		t.Run(format, func(t *testing.T) {
			out, code, _ := runVerifier(t, "check", "-o", format, root)
			if code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if !strings.Contains(out, fixture.TurtlesProvidersChart) || !strings.Contains(out, "values:") {
				t.Errorf("%s output names no skipped chart with the policy's values:\n%s", format, out)
			}
			switch format {
			case "json":
				var r report.Report
				if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Skipped) != 1 || r.Summary.Packages != 0 {
					t.Errorf("json report: %v %+v", err, r)
				}
			case "sarif":
				var sarif map[string]any
				if err := json.Unmarshal([]byte(out), &sarif); err != nil || sarif["version"] != "2.1.0" {
					t.Errorf("sarif output: %v\n%s", err, out)
				}
			}
		})
	}
	// The fixture's download script is a tree-wide warning: it is shown,
	// and the exit stays 2 (a warning is not a checked package).
	t.Run("human", func(t *testing.T) {
		out, code, err := runVerifier(t, "check", root)
		if code != 2 || !strings.Contains(out, fixture.TurtlesFetchScript) || !strings.Contains(out, "NOTHING CHECKED: checked 0 packages") || err == nil || !strings.Contains(err.Error(), "nothing was checked") {
			t.Errorf("exit %d (%v), want 2 saying nothing was checked, with the script's warning shown:\n%s", code, err, out)
		}
	})
}
