package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pinseal/pinseal/api"
	"github.com/pinseal/pinseal/api/apitest"
)

func sample() *Report {
	r := &Report{
		SchemaVersion: SchemaVersion,
		Tool:          Tool{Name: "verifier", Version: "v0.1.0-test"},
		Root:          "testdata/tree",
		Findings: []Finding{
			{Check: "blob-yaml", Severity: Error, Package: "packages/system/core", Provider: "CoreProvider/cluster-api",
				File: "packages/system/core/files/core-components.yaml", Line: 42,
				Message: "binaryData.components inflates to something other than files/core-components.yaml: first difference at line 42",
				Hint:    "rebuild it: `builder build packages/system/core`",
				Detail:  "@@ -42 +42 @@\n-        startupProbe:\n+        livenessProbe:"},
			{Check: "pin-missing", Severity: Warning, Package: "packages/system/bootstrap", File: "packages/system/bootstrap/Makefile", Line: 3,
				Message: "downloads URL, with no SHA-256, 100% unpinned", Hint: "pin it"},
			{Check: "blob-header", Severity: Error, Package: "packages/system/core", File: "packages/system/core/files/components.gz",
				Message: `gzip header embeds file name "core-components.yaml"`, Hint: "gzip -9 -n",
				Waiver: &Waiver{Reason: "upstream blob, tracked in #12", Expires: "2099-01-01"}},
			{Check: "waiver-expired", Severity: Error, Package: "packages/gone", Message: "the waiver expired"},
		},
		Packages: []PackageSummary{
			{Path: "packages/system/bootstrap", Namespace: "cozy", Providers: []ProviderSummary{{Kind: "BootstrapProvider", Name: "talos", Version: "v0.6.12-bootstrap-talos", ConfigMap: "v0.6.12-bootstrap-talos"}}},
			{Path: "packages/system/clean", Namespace: "cozy"},
			{Path: "packages/system/core", Namespace: "cozy", Providers: []ProviderSummary{{Kind: "CoreProvider", Name: "cluster-api", Version: "v1.10.1-core", ConfigMap: "v1.10.1-core"}}},
		},
	}
	r.Tally()
	return r
}

// withSources is a report whose providers have every kind of source.
func withSources() *Report {
	r := &Report{SchemaVersion: SchemaVersion, Tool: Tool{Name: "verifier", Version: "x"}}
	srcs := []Source{
		{Kind: SourceVendored, Pinned: true, Status: "ConfigMap \"v1.10.1-core\", pinned"},
		{Kind: SourceVendored, Status: "no pin"},
		{Kind: SourceOCI, Registry: "mirror.example.com", Ref: "mirror.example.com/capi/x:v1", Status: "not verified"},
		{Kind: SourceOCI, Pinned: true, Registry: "mirror.example.com", Ref: "mirror.example.com/capi/y:v1", Status: "checked"},
		{Kind: SourceURL, Ref: "https://github.com/o/r/releases/latest/c.yaml", Release: "v1", URLs: []string{"https://github.com/o/r/releases/download/v1/c.yaml", "https://github.com/o/r/releases/download/v1/metadata.yaml"}, Status: "downloaded"},
		{Kind: SourceDefault, Ref: "https://github.com/kubernetes-sigs/cluster-api/releases/latest/core-components.yaml", Status: "latest"},
	}
	pkg := PackageSummary{Path: "p"}
	for i := range srcs {
		pkg.Providers = append(pkg.Providers, ProviderSummary{Kind: "InfrastructureProvider", Name: fmt.Sprint("p", i), Source: &srcs[i]})
	}
	r.Packages = []PackageSummary{pkg}
	r.Tally()
	return r
}

// TestSourceCounts: the summary counts providers by source, and the
// human and GitHub writers say so in one line.
func TestSourceCounts(t *testing.T) {
	r := withSources()
	want := SourceCounts{Pinned: 2, Unpinned: 1, Fetched: 3, Vendored: 2, OCI: 2, URL: 1, Default: 1}
	if r.Summary.Sources == nil || *r.Summary.Sources != want {
		t.Fatalf("sources %+v, want %+v", r.Summary.Sources, want)
	}
	line := "6 providers: 2 pinned, 3 fetched at install time, 1 vendored without a pin (2 vendored, 2 oci, 1 url, 1 default)"
	var h, g bytes.Buffer
	if err := WriteHuman(&h, r, HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteGitHub(&g, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"human": h.String(), "github": g.String()} {
		if !strings.Contains(out, line) {
			t.Errorf("%s output lacks %q:\n%s", name, line, out)
		}
	}
	for _, w := range []string{"[vendored, pinned]", "[vendored, not pinned]", "[oci mirror.example.com, not verified]", "[oci mirror.example.com, verified]", "[url, fetched at install time]", "[default, fetched at install time]"} {
		if !strings.Contains(h.String(), w) {
			t.Errorf("human output lacks %q", w)
		}
	}
	if s := sample(); s.Summary.Sources != nil {
		t.Errorf("a report with no sources counts none: %+v", s.Summary.Sources)
	}
}

func TestJSONMatchesSchema(t *testing.T) {
	s := apitest.ReportSchema(t)
	for name, r := range map[string]*Report{
		"sample":  sample(),
		"sources": withSources(),
		"empty":   {Tool: Tool{Name: "verifier", Version: "x"}},
	} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		if err := apitest.Validate(s, buf.Bytes()); err != nil {
			t.Errorf("%s: report does not match api/report.schema.json: %v\n%s", name, err, buf.String())
		}
		if !strings.Contains(buf.String(), `"findings": [`) || !strings.Contains(buf.String(), `"packages": [`) {
			t.Errorf("%s: findings and packages must be arrays, never null:\n%s", name, buf.String())
		}
	}
}

func TestSchemaRejectsBadReports(t *testing.T) {
	s := apitest.ReportSchema(t)
	bad := map[string]string{
		"unknown severity": `{"schemaVersion":"pinseal.report/v1","tool":{"name":"v","version":"1"},"findings":[{"check":"blob-yaml","severity":"fatal","package":".","message":"m"}],"packages":[],"summary":{"packages":0,"providers":0,"errors":0,"warnings":0,"waived":0,"passed":true}}`,
		"absolute file":    `{"schemaVersion":"pinseal.report/v1","tool":{"name":"v","version":"1"},"findings":[{"check":"blob-yaml","severity":"error","package":".","file":"/etc/passwd","message":"m"}],"packages":[],"summary":{"packages":0,"providers":0,"errors":1,"warnings":0,"waived":0,"passed":false}}`,
		"missing summary":  `{"schemaVersion":"pinseal.report/v1","tool":{"name":"v","version":"1"},"findings":[],"packages":[]}`,
		"unknown field":    `{"schemaVersion":"pinseal.report/v1","tool":{"name":"v","version":"1"},"findings":[],"packages":[],"summary":{"packages":0,"providers":0,"errors":0,"warnings":0,"waived":0,"passed":true},"extra":1}`,
		"null findings":    `{"schemaVersion":"pinseal.report/v1","tool":{"name":"v","version":"1"},"findings":null,"packages":[],"summary":{"packages":0,"providers":0,"errors":0,"warnings":0,"waived":0,"passed":true}}`,
	}
	for name, doc := range bad {
		if err := apitest.Validate(s, []byte(doc)); err == nil {
			t.Errorf("%s: schema accepted it", name)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	r := sample()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary != r.Summary || len(back.Findings) != 4 || back.Findings[2].Waiver == nil {
		t.Errorf("round trip lost data: %+v", back)
	}
	if r.Summary.Errors != 2 || r.Summary.Warnings != 1 || r.Summary.Waived != 1 || r.Summary.Passed {
		t.Errorf("tally = %+v", r.Summary)
	}
}

func TestSARIF(t *testing.T) {
	var buf bytes.Buffer
	rules := []Rule{
		{ID: "blob-yaml", Title: "Blob equals YAML", Description: "gunzip(blob) equals the YAML", Severity: Error},
		{ID: "pin-missing", Title: "Pinned", Description: "pinned", Severity: Warning},
	}
	if err := WriteSARIF(&buf, sample(), rules); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string
					Rules []struct {
						ID                   string `json:"id"`
						DefaultConfiguration struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Suppressions []struct {
					Kind          string `json:"kind"`
					Justification string `json:"justification"`
				} `json:"suppressions"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-2.1.0") || len(log.Runs) != 1 {
		t.Fatalf("not a SARIF 2.1.0 log with one run: %s", buf.String())
	}
	run := log.Runs[0]
	if run.Tool.Driver.Name != "verifier" {
		t.Errorf("driver name %q", run.Tool.Driver.Name)
	}
	// The two rules given, plus one for each check without a rule.
	ids := []string{}
	for _, r := range run.Tool.Driver.Rules {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "blob-yaml,pin-missing,blob-header,waiver-expired" {
		t.Errorf("rules = %v", ids)
	}
	if run.Tool.Driver.Rules[1].DefaultConfiguration.Level != "warning" {
		t.Errorf("pin-missing default level = %q", run.Tool.Driver.Rules[1].DefaultConfiguration.Level)
	}
	if len(run.Results) != 4 {
		t.Fatalf("%d results, want 4", len(run.Results))
	}
	r0 := run.Results[0]
	if r0.RuleID != "blob-yaml" || r0.RuleIndex != 0 || r0.Level != "error" {
		t.Errorf("result 0 = %+v", r0)
	}
	loc := r0.Locations[0].PhysicalLocation
	if loc.ArtifactLocation.URI != "packages/system/core/files/core-components.yaml" || loc.Region == nil || loc.Region.StartLine != 42 {
		t.Errorf("result 0 location = %+v", loc)
	}
	if !strings.Contains(r0.Message.Text, "What to do: rebuild it") {
		t.Errorf("message lacks the hint: %q", r0.Message.Text)
	}
	if run.Results[1].Level != "warning" || run.Results[1].RuleIndex != 1 {
		t.Errorf("result 1 = %+v", run.Results[1])
	}
	waived := run.Results[2]
	if len(waived.Suppressions) != 1 || waived.Suppressions[0].Kind != "external" || !strings.Contains(waived.Suppressions[0].Justification, "#12") {
		t.Errorf("waived result suppressions = %+v", waived.Suppressions)
	}
	if waived.Locations[0].PhysicalLocation.Region != nil {
		t.Errorf("no line: region must be absent")
	}
	// A finding with no file points at its package.
	if u := run.Results[3].Locations[0].PhysicalLocation.ArtifactLocation.URI; u != "packages/gone" {
		t.Errorf("package-level uri = %q", u)
	}
	if len(r0.PartialFingerprints["pinsealFinding/v1"]) != 32 {
		t.Errorf("fingerprint = %v", r0.PartialFingerprints)
	}
}

func TestSARIFEscapesURIs(t *testing.T) {
	r := &Report{Findings: []Finding{{Check: "x", Severity: Error, Package: "a b", File: "a b/c#d.yaml", Message: "m"}}}
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, r, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"uri": "a%20b/c%23d.yaml"`) {
		t.Errorf("uri not escaped:\n%s", buf.String())
	}
}

func TestGitHub(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGitHub(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 4 annotations and a summary:\n%s", len(lines), buf.String())
	}
	want0 := "::error file=packages/system/core/files/core-components.yaml,line=42,title=blob-yaml CoreProvider/cluster-api::binaryData.components inflates"
	if !strings.HasPrefix(lines[0], want0) {
		t.Errorf("line 0:\n got %s\nwant %s…", lines[0], want0)
	}
	if !strings.Contains(lines[0], "%0AWhat to do: rebuild it") || !strings.Contains(lines[0], "%0A-        startupProbe:") {
		t.Errorf("line 0 lacks the escaped hint and diff: %s", lines[0])
	}
	// Properties escape ":" and ","; data escapes "%".
	if !strings.HasPrefix(lines[1], "::warning file=packages/system/bootstrap/Makefile,line=3,title=pin-missing packages/system/bootstrap::downloads URL, with no SHA-256, 100%25 unpinned") {
		t.Errorf("line 1: %s", lines[1])
	}
	if !strings.HasPrefix(lines[2], "::notice ") || !strings.Contains(lines[2], "title=blob-header packages/system/core (waived)") {
		t.Errorf("waived finding must be a notice: %s", lines[2])
	}
	if !strings.HasPrefix(lines[3], "::error title=waiver-expired packages/gone::") {
		t.Errorf("line 3: %s", lines[3])
	}
	if !strings.Contains(lines[4], "failed") || !strings.Contains(lines[4], "2 errors") {
		t.Errorf("summary: %s", lines[4])
	}
	if got := escapeProperty("a:b,c%d\ne"); got != "a%3Ab%2Cc%25d%0Ae" {
		t.Errorf("escapeProperty = %q", got)
	}
}

func TestHuman(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHuman(&buf, sample(), HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour without a terminal:\n%s", out)
	}
	for _, want := range []string{
		"warn packages/system/bootstrap  (namespace cozy; BootstrapProvider/talos v0.6.12-bootstrap-talos)",
		"ok   packages/system/clean",
		"FAIL packages/system/core",
		"  error   blob-yaml CoreProvider/cluster-api  packages/system/core/files/core-components.yaml:42",
		"fix: rebuild it",
		"| -        startupProbe:",
		"waived: upstream blob, tracked in #12 (until 2099-01-01)",
		"FAIL packages/gone",
		"FAILED: checked 3 packages, 2 providers under testdata/tree: 2 errors, 1 warning, 1 waived",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("human output lacks %q:\n%s", want, out)
		}
	}
	// Grouped by package, in path order.
	if strings.Index(out, "packages/system/bootstrap") > strings.Index(out, "packages/system/core") {
		t.Errorf("packages out of order:\n%s", out)
	}

	buf.Reset()
	if err := WriteHuman(&buf, sample(), HumanOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ansiRed+"FAIL"+ansiReset) {
		t.Errorf("no colour when asked:\n%q", buf.String())
	}

	clean := &Report{Packages: []PackageSummary{{Path: "p"}}}
	clean.Tally()
	buf.Reset()
	if err := WriteHuman(&buf, clean, HumanOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "PASSED: checked 1 package, 0 providers: 0 errors, 0 warnings, 0 waived") {
		t.Errorf("clean output:\n%s", buf.String())
	}
}

func TestFormats(t *testing.T) {
	for _, f := range Formats() {
		got, err := ParseFormat(string(f))
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, got, err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, sample(), f, Options{}); err != nil || buf.Len() == 0 {
			t.Errorf("Write(%s) = %v, %d bytes", f, err, buf.Len())
		}
		// The last line ends in a newline, so whatever the command writes
		// next (the error on stderr) does not run into it.
		if !strings.HasSuffix(buf.String(), "\n") || strings.HasSuffix(buf.String(), "\n\n") {
			t.Errorf("Write(%s) must end in exactly one newline: %q", f, tail(buf.String()))
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "human, json, sarif, github") {
		t.Errorf("ParseFormat(xml) error = %v", err)
	}
	if err := Write(&bytes.Buffer{}, sample(), "xml", Options{}); err == nil {
		t.Error("Write(xml) succeeded")
	}
}

// tail returns the last 80 bytes of s.
func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}

// TestSettingsMatchSchema: the settings the schema allows are exactly
// report.Settings, and the schema refuses any other.
func TestSettingsMatchSchema(t *testing.T) {
	var doc struct {
		Defs struct {
			Finding struct {
				Properties struct {
					Settings struct {
						Items struct {
							Enum []Setting `json:"enum"`
						} `json:"items"`
					} `json:"settings"`
				} `json:"properties"`
			} `json:"finding"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(api.ReportSchema, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Defs.Finding.Properties.Settings.Items.Enum; !slices.Equal(got, Settings) {
		t.Errorf("api/report.schema.json settings enum is %q, report.Settings is %q", got, Settings)
	}
	for _, c := range []struct {
		settings []Setting
		ok       bool
	}{{Settings, true}, {[]Setting{SettingInflateLimit}, true}, {[]Setting{"max-inflate"}, false}} {
		r := sample()
		r.Findings[0].Settings = c.settings
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		if err := apitest.Validate(apitest.ReportSchema(t), buf.Bytes()); (err == nil) != c.ok {
			t.Errorf("settings %q: schema says %v, want valid %v", c.settings, err, c.ok)
		}
	}
}

func TestNameSettings(t *testing.T) {
	r := &Report{Findings: []Finding{
		{Hint: "raise the inflate limit", Settings: []Setting{SettingInflateLimit}},
		{Hint: "allow it", Settings: []Setting{SettingAllowRegistry, SettingPlainHTTP}},
		{Hint: "no setting"},
		{Hint: "the service has none", Settings: []Setting{SettingTrustedKeys}},
	}}
	names := map[Setting]string{SettingInflateLimit: "--max-inflate", SettingAllowRegistry: "--allow-registry", SettingPlainHTTP: "--plain-http"}
	want := []string{"raise the inflate limit (--max-inflate)", "allow it (--allow-registry, --plain-http)", "no setting", "the service has none"}
	for range 2 { // naming again adds nothing
		r.NameSettings(names)
		for i, f := range r.Findings {
			if f.Hint != want[i] {
				t.Errorf("finding %d: hint %q, want %q", i, f.Hint, want[i])
			}
		}
	}
}
